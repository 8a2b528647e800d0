// cuda_mixed: CUDA 13 and CUDA 12 runtimes in one process (issue 10, point 6). The program is
// linked to libcudart.so.13; halfway it dlopens libcuda12_plugin.so, linked to libcudart.so.12,
// then uses its own runtime again. Each side prints what its own runtime reports.
//
//   cuda_mixed <path of libcuda12_plugin.so> [local|global]
#include <dlfcn.h>

#include <cstring>

#define CUDA_SIDE_MAJOR 13
#include "cuda_side.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cuda_mixed <libcuda12_plugin.so> [local|global]\n");
    return 2;
  }
  const int scope = argc > 2 && std::strcmp(argv[2], "global") == 0 ? RTLD_GLOBAL : RTLD_LOCAL;
  Counts mine = run_side(2);
  void* plugin = dlopen(argv[1], RTLD_NOW | scope);
  auto* run = plugin ? reinterpret_cast<void (*)(int, long*)>(dlsym(plugin, "cuda12_plugin_run")) : nullptr;
  if (run == nullptr) {
    std::fprintf(stderr, "cuda_mixed: cannot load the plugin: %s\n", dlerror());
    return 3;
  }
  long theirs[5] = {};
  run(3, theirs);
  run_rounds(1, mine);  // the CUDA 13 side again, now that both runtimes are loaded
  own_last_error(mine);
  Counts all = mine;
  all.malloc_calls += theirs[0], all.memcpy_calls += theirs[1], all.launches += theirs[2];
  all.free_calls += theirs[3], all.syncs += theirs[4];
  print_expect(all, theirs[2], mine.launches);
  return 0;
}
