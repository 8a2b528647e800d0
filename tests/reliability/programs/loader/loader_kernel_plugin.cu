// A plugin with kernels of its own (an extension module, a JIT-built library): nvcc registers
// them from the plugin's constructor (__cudaRegisterFunction, with the kernel names in the
// plugin's read-only data) and unregisters them from its destructor at dlclose.
#include <cuda_runtime_api.h>

__global__ void plugin_queued_kernel(int* out) {
  if (out != nullptr) out[threadIdx.x] = int(threadIdx.x);
}

// Queues `launches` kernels on the default stream and returns without waiting for them.
extern "C" __attribute__((visibility("default"))) int plugin_queue_kernels(int launches) {
  int failures = 0;
  for (int i = 0; i < launches; ++i) {
    plugin_queued_kernel<<<1, 32>>>(nullptr);
    failures += cudaGetLastError() != cudaSuccess;
  }
  return failures;
}
