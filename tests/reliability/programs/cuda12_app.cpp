// cuda12_app: a CUDA 12 program. Linked to devsim's libcudart.so.12 only, it
// reads the device properties with CUDA 12's struct and entry point, copies and launches, and
// prints what it did. Given a plugin, it then loads libcuda13_plugin.so (libcudart.so.13) as a
// torch cu12 process loads a cu13 extension, and uses its own runtime once more.
//
//   cuda12_app [rounds] [libcuda13_plugin.so local|global]
#include <cstdlib>
#include <cstring>

#define CUDA_SIDE_MAJOR 12
#include "cuda_side.h"

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  Counts mine = run_side(rounds);
  Counts theirs;
  if (argc > 2) {
    const int scope = argc > 3 && std::strcmp(argv[3], "global") == 0 ? RTLD_GLOBAL : RTLD_LOCAL;
    if (!run_plugin(argv[2], scope, 2, theirs)) return 3;
    run_rounds(1, mine);  // the CUDA 12 side again, now that both runtimes are loaded
    own_last_error(mine);
  }
  print_expect(mine + theirs, mine.launches, theirs.launches);
  return 0;
}
