// cuda12_app: a CUDA 12 program and nothing else (issue 10, point 6). Linked to devsim's
// libcudart.so.12 only, it reads the device properties with CUDA 12's struct and entry point,
// copies and launches, and prints what it did.
//
//   cuda12_app [rounds]
#include <cstdlib>

#define CUDA_SIDE_MAJOR 12
#include "cuda_side.h"

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 3;
  const Counts counts = run_side(rounds);
  print_expect(counts, counts.launches, 0);
  return 0;
}
