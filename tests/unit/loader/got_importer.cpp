// The "framework" of the GOT-patching test: imports DIOPI-named functions as weak references,
// as frameworks do, in the two ways a GOT slot is filled: a call through the PLT (a JUMP_SLOT
// relocation, bound lazily unless linked -z now) and an address taken (GLOB_DAT). One weak
// reference nothing defines stays null.
extern "C" {
int diopiGotPatchCalled(int) __attribute__((weak));
int diopiGotPatchAddressed(int) __attribute__((weak));
int diopiGotPatchUndefined(int) __attribute__((weak));

__attribute__((visibility("default"))) int got_importer_call(int x) { return diopiGotPatchCalled(x); }
__attribute__((visibility("default"))) void* got_importer_addressed() {
  return reinterpret_cast<void*>(&diopiGotPatchAddressed);
}
__attribute__((visibility("default"))) void* got_importer_undefined() {
  return reinterpret_cast<void*>(&diopiGotPatchUndefined);
}
}
