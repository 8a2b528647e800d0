// dlopen_local: loads a CUDA-using library the way frameworks load their CUDA parts late —
// dlopen with RTLD_LOCAL, so libcudart.so.13 is invisible to dlsym(RTLD_NEXT) — and runs it.
// The library's CUDA calls still bind to libprofagent.so's hooks (preloads come first in the
// global scope); the hooks must find the real runtime through dl_iterate_phdr.
//
//   dlopen_local <library> [arguments of preload_workload_main...]
// Without arguments it prints its usage and never touches CUDA.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: dlopen_local <library> [arguments...]\n");
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_LOCAL | RTLD_NOW);
  if (library == nullptr) {
    std::fprintf(stderr, "dlopen_local: %s\n", dlerror());
    return 2;
  }
  using Entry = int (*)(int, char**);
  auto entry = reinterpret_cast<Entry>(dlsym(library, "preload_workload_main"));
  if (entry == nullptr) {
    std::fprintf(stderr, "dlopen_local: %s\n", dlerror());
    return 2;
  }
  if (dlsym(RTLD_DEFAULT, "cudaGetDeviceCount") != nullptr) {
    std::fprintf(stderr, "dlopen_local: libcudart is globally visible; the test would prove nothing\n");
    return 2;
  }
  return entry(argc - 1, argv + 1);
}
