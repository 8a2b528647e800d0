// A library whose RUNPATH ($ORIGIN/sub) is where its plugin lives, as a pip wheel lays out its
// sub-libraries: glibc finds the plugin by bare name only for a dlopen whose caller is this
// library. `opener` is called from here, so its return address lies inside this object.
#include <dlfcn.h>

using Opener = void* (*)(const char* file, int mode);

extern "C" __attribute__((visibility("default"))) void* caller_host_open(Opener opener, const char* file) {
  void* handle = opener(file, RTLD_NOW | RTLD_LOCAL);
  asm volatile("" ::: "memory");  // keeps the call from being a tail call (a jump keeps no return address here)
  return handle;
}
