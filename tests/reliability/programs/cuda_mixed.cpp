// cuda_mixed: CUDA 13 and CUDA 12 runtimes in one process. The program is
// linked to libcudart.so.13; halfway it dlopens libcuda12_plugin.so, linked to libcudart.so.12,
// then uses its own runtime again. Each side prints what its own runtime reports.
//
//   cuda_mixed <libcuda12_plugin.so> [local|global]
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
  Counts theirs;
  if (!run_plugin(argv[1], scope, 3, theirs)) return 3;
  run_rounds(1, mine);  // the CUDA 13 side again, now that both runtimes are loaded
  own_last_error(mine);
  print_expect(mine + theirs, theirs.launches, mine.launches);
  return 0;
}
