// A plugin that links the CUDA runtime (as an extension module does): unloading it unloads the
// runtime too, unless something else holds it.
#include <cuda_runtime_api.h>

extern "C" __attribute__((visibility("default"))) int plugin_cuda_work() {
  void* device = nullptr;
  int failures = 0;
  failures += cudaMalloc(&device, 1 << 16) != cudaSuccess;
  failures += cudaMemset(device, 7, 1 << 16) != cudaSuccess;
  failures += cudaDeviceSynchronize() != cudaSuccess;
  failures += cudaFree(device) != cudaSuccess;
  return failures;
}
