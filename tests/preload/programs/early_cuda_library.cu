// A library whose constructor uses CUDA before libprofagent.so may have initialised
// (another library's constructor ran first): the hooks must forward these calls without
// recording or crashing, and the agent must still write its files at exit.
#include <cuda_runtime_api.h>

#include <cstdio>

namespace {
__attribute__((constructor)) void allocate_early() {
  void* scratch = nullptr;
  const cudaError_t allocated = cudaMalloc(&scratch, 256);
  const cudaError_t freed = cudaFree(scratch);
  std::printf("early constructor: cudaMalloc %s, cudaFree %s\n", cudaGetErrorName(allocated),
              cudaGetErrorName(freed));
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int early_cuda_library_loaded() { return 1; }
