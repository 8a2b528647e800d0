// A shared library with its own copy of NVTX (nvtx3 is header-only: each shared object that
// includes it initialises its own copy at its first call). Built twice, as libnvtx_library_a
// and libnvtx_library_b (NVTX_LIBRARY_ID a or b): entry nvtx_library_<id>, range
// library_<id>_work.
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#define NVTX_LIBRARY_TEXT2(id) #id
#define NVTX_LIBRARY_TEXT(id) NVTX_LIBRARY_TEXT2(id)
#define NVTX_LIBRARY_ENTRY2(id) nvtx_library_##id
#define NVTX_LIBRARY_ENTRY(id) NVTX_LIBRARY_ENTRY2(id)

__global__ void library_kernel(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

// One range (`<name>_work`) around one kernel; returns the launch's error.
extern "C" __attribute__((visibility("default"))) int NVTX_LIBRARY_ENTRY(NVTX_LIBRARY_ID)(float* data, int n,
                                                                                 cudaStream_t stream) {
  nvtxRangePushA("library_" NVTX_LIBRARY_TEXT(NVTX_LIBRARY_ID) "_work");
  library_kernel<<<(n + 255) / 256, 256, 0, stream>>>(data, n);
  const cudaError_t status = cudaGetLastError();
  nvtxRangePop();
  return int(status);
}
