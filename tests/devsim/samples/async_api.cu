// async_api: overlap of host work with device work, like the introductory asyncAPI sample. The
// host queues an async copy in, a kernel and an async copy out on the default stream between two
// events, then counts how much CPU work it gets done while polling cudaEventQuery until the
// device has finished.
#include "sample_check.h"

#include <cstdio>
#include <cstring>

__global__ void increment_kernel(int* data, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  data[i] += value;
}

namespace {

constexpr int kElements = 4 * 1024 * 1024;
constexpr int kThreadsPerBlock = 512;
constexpr int kIncrement = 26;

// The data after the round trip: the input plus the increment on a GPU; on a simulated device,
// which does not run kernels, the input itself (only the copies are guaranteed).
bool verify(const int* data, int expected_base) {
  for (int i = 0; i < kElements; ++i)
    if (data[i] != expected_base) return false;
  return true;
}

struct Timing {
  float gpu_ms = 0.0f;
  unsigned long cpu_iterations = 0;
  bool seen_not_ready = false;
};

Timing run_async(int* host, int* device, size_t bytes) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventRecord(start, 0));
  CHECK_CUDA(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, 0));
  increment_kernel<<<kElements / kThreadsPerBlock, kThreadsPerBlock, 0, 0>>>(device, kIncrement);
  CHECK_LAUNCH();
  CHECK_CUDA(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, 0));
  CHECK_CUDA(cudaEventRecord(stop, 0));

  Timing timing;
  cudaError_t status;
  while ((status = cudaEventQuery(stop)) == cudaErrorNotReady) {
    timing.seen_not_ready = true;
    ++timing.cpu_iterations;  // the "work" the host does while the device is busy
  }
  CHECK_CUDA(status);
  CHECK_CUDA(cudaEventElapsedTime(&timing.gpu_ms, start, stop));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return timing;
}

}  // namespace

int main() {
  int device = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  std::printf("CUDA device [%s]\n", prop.name);

  const size_t bytes = kElements * sizeof(int);
  int* host = nullptr;
  int* dev = nullptr;
  CHECK_CUDA(cudaMallocHost(&host, bytes));  // pinned, so the copies are truly asynchronous
  std::memset(host, 0, bytes);
  CHECK_CUDA(cudaMalloc(&dev, bytes));
  CHECK_CUDA(cudaMemset(dev, 255, bytes));

  Timing timing = run_async(host, dev, bytes);
  std::printf("time spent executing by the GPU: %.2f ms\n", timing.gpu_ms);
  std::printf("CPU executed %lu iterations while waiting for the GPU to finish\n",
              timing.cpu_iterations);
  std::printf("host returned before the device finished: %s\n", timing.seen_not_ready ? "yes" : "no");

  bool simulated = samples::device_is_simulated(device);
  if (simulated) std::printf("Kernel results are not checked: the device is simulated and does not run kernels\n");
  bool ok = verify(host, simulated ? 0 : kIncrement);
  CHECK_CUDA(cudaFreeHost(host));
  CHECK_CUDA(cudaFree(dev));
  if (!ok) samples::fail("data after the round trip");
  if (!(timing.gpu_ms > 0.0f)) samples::fail("the device took no measurable time");
  std::printf("async_api: Test PASSED\n");
  return 0;
}
