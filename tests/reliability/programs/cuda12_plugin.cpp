// libcuda12_plugin.so: the CUDA 12 half of a mixed process (a torch cu12 build next to a cu13
// extension, issue 10, point 6). Linked to devsim's libcudart.so.12, so every runtime reference
// in it carries version libcudart.so.12; cuda_mixed loads it with dlopen.
#define CUDA_SIDE_MAJOR 12
#include "cuda_side.h"

// counts: cudaMalloc, cudaMemcpy, cudaLaunchKernel, cudaFree, cudaDeviceSynchronize calls made.
extern "C" __attribute__((visibility("default"))) void cuda12_plugin_run(int rounds, long counts[5]) {
  const Counts made = run_side(rounds);
  const long values[5] = {made.malloc_calls, made.memcpy_calls, made.launches, made.free_calls, made.syncs};
  for (int i = 0; i < 5; ++i) counts[i] = values[i];
}
