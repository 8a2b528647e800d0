// libcuda12_plugin.so / libcuda13_plugin.so: one major's half of a mixed process (a torch cu12
// build next to a cu13 extension). Built once per major (CUDA_SIDE_MAJOR,
// cuda12.cmake) and linked to that major's runtime, so every runtime reference in it carries
// that version; the program of the other major loads it with dlopen (cuda_side.h run_plugin).
#include "cuda_side.h"

// counts: cudaMalloc, cudaMemcpy, cudaLaunchKernel, cudaFree, cudaDeviceSynchronize calls made.
extern "C" __attribute__((visibility("default"))) void cuda_plugin_run(int rounds, long counts[5]) {
  const Counts made = run_side(rounds);
  const long values[5] = {made.malloc_calls, made.memcpy_calls, made.launches, made.free_calls, made.syncs};
  for (int i = 0; i < 5; ++i) counts[i] = values[i];
}
