// The "vendor" of the GOT-patching test: defines the DIOPI-named functions the importers use.
extern "C" {
__attribute__((visibility("default"))) int diopiGotPatchCalled(int x) { return x + 1; }
__attribute__((visibility("default"))) int diopiGotPatchAddressed(int x) { return x + 2; }
}
