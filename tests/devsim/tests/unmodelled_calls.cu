// An nvcc-built program (-cudart shared) that calls two runtime functions devsim does not model,
// twice each, then uses the device normally. Each unmodelled call must fail with
// cudaErrorNotSupported as its own result and as the last error, and leave the runtime working:
// a round trip of bytes and a kernel launch follow. Prints PASS lines the runner checks.
#include <cstdio>
#include <cstring>

__global__ void fill(int* out, int value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

#define CHECK(call)                                                                       \
  do {                                                                                    \
    cudaError_t err_ = (call);                                                            \
    if (err_ != cudaSuccess) {                                                            \
      std::printf("FAIL %s: %s\n", #call, cudaGetErrorName(err_));                        \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

// Both calls must return cudaErrorNotSupported, and cudaGetLastError must report and clear it.
static bool expect_not_supported(const char* what, cudaError_t result) {
  cudaError_t last = cudaGetLastError();
  cudaError_t after = cudaGetLastError();
  std::printf("%s -> %d (%s), last error %d, then %d\n", what, int(result), cudaGetErrorName(result),
              int(last), int(after));
  return result == cudaErrorNotSupported && last == cudaErrorNotSupported && after == cudaSuccess;
}

int main() {
  const int n = 1 << 16;
  int* device = nullptr;
  CHECK(cudaMalloc(&device, n * sizeof(int)));
  bool ok = true;
  for (int round = 0; round < 2; ++round) {
    cudaIpcMemHandle_t handle;
    ok &= expect_not_supported("cudaIpcGetMemHandle", cudaIpcGetMemHandle(&handle, device));
    cudaExternalMemory_t memory = nullptr;
    cudaExternalMemoryHandleDesc desc;
    std::memset(&desc, 0, sizeof desc);
    desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
    desc.handle.fd = -1;
    desc.size = 4096;
    ok &= expect_not_supported("cudaImportExternalMemory", cudaImportExternalMemory(&memory, &desc));
  }
  std::printf("%s unmodelled calls\n", ok ? "PASS" : "FAIL");

  // The runtime keeps working: bytes go through and a kernel launches and completes.
  static int host_in[n], host_out[n];
  for (int i = 0; i < n; ++i) host_in[i] = i * 7;
  CHECK(cudaMemcpy(device, host_in, sizeof host_in, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(host_out, device, sizeof host_out, cudaMemcpyDeviceToHost));
  bool same = std::memcmp(host_in, host_out, sizeof host_in) == 0;
  fill<<<(n + 255) / 256, 256>>>(device, 3, n);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("%s round trip and launch after them\n", same ? "PASS" : "FAIL");
  CHECK(cudaFree(device));
  return ok && same ? 0 : 2;
}
