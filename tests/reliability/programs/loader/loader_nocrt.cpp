// A library linked without the C runtime's start files (-nostartfiles: no crti/crtn, so no
// _init/_fini), as some hand-linked or foreign-toolchain objects are. The agent cannot enter the
// loader as this caller (hooks/call_as_caller.h): its dlopen calls are made plainly, and the
// agent says so once.
#include <dlfcn.h>

extern "C" __attribute__((visibility("default"))) int nocrt_load(const char* path) {
  void* handle = dlopen(path, RTLD_NOW);
  return handle != nullptr ? 0 : 1;
}
