// Of the kind of CUDA's UnifiedMemoryStreams sample: managed buffers attached to the streams
// that use them, advised (read-mostly input, preferred location on the device), prefetched to
// the device before the work and back to the host after it. Checks what the range attributes
// report, that host-written data survive the trips, and that a copy between managed buffers
// is seen by the host.
#include "memory_check.h"

__global__ void saxpy(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

namespace {

constexpr int kStreams = 4;
constexpr size_t kBytes = 1 << 20;

int range_int(const void* ptr, cudaMemRangeAttribute attr) {
  int value = -100;
  cudaMemRangeGetAttribute(&value, sizeof value, attr, ptr, kBytes);
  return value;
}

bool task(cudaStream_t s, unsigned char* input, unsigned char* output, unsigned seed, int device) {
  const cudaMemLocation gpu{cudaMemLocationTypeDevice, device}, host{cudaMemLocationTypeHost, 0};
  CHECK(cudaStreamAttachMemAsync(s, input, 0, cudaMemAttachSingle));
  CHECK(cudaStreamAttachMemAsync(s, output, 0, cudaMemAttachSingle));
  CHECK(cudaStreamSynchronize(s));  // attached: the host may touch them while other streams run
  fill_pattern(input, kBytes, seed);
  CHECK(cudaMemAdvise(input, kBytes, cudaMemAdviseSetReadMostly, gpu));
  CHECK(cudaMemAdvise(output, kBytes, cudaMemAdviseSetPreferredLocation, gpu));
  CHECK(cudaMemPrefetchAsync(input, kBytes, gpu, 0, s));
  CHECK(cudaMemPrefetchAsync(output, kBytes, gpu, 0, s));
  const int n = kBytes / sizeof(float) / 2;  // the kernel writes only the second half of output
  saxpy<<<(n + 255) / 256, 256, 0, s>>>(reinterpret_cast<float*>(input), reinterpret_cast<float*>(output) + n, 2.0f, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(output, input, kBytes / 2, cudaMemcpyDefault, s));
  CHECK(cudaMemPrefetchAsync(output, kBytes, host, 0, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(has_pattern(input, kBytes, seed), "stream task %u: input changed", seed);
  EXPECT(has_pattern(output, kBytes / 2, seed), "stream task %u: the copied half differs", seed);
  EXPECT(range_int(input, cudaMemRangeAttributeReadMostly) == 1, "read-mostly advice not reported");
  EXPECT(range_int(output, cudaMemRangeAttributePreferredLocation) == device, "preferred location not reported");
  EXPECT(range_int(input, cudaMemRangeAttributeLastPrefetchLocation) == device, "input's prefetch not reported");
  EXPECT(range_int(output, cudaMemRangeAttributeLastPrefetchLocation) == cudaCpuDeviceId,
         "output's prefetch to the host not reported");
  return true;
}

bool non_managed_refused(int device) {
  std::vector<unsigned char> plain(4096);
  const cudaMemLocation gpu{cudaMemLocationTypeDevice, device};
  EXPECT(cudaMemPrefetchAsync(plain.data(), plain.size(), gpu, 0, 0) == cudaErrorInvalidValue,
         "prefetch of pageable memory accepted");
  cudaGetLastError();
  return true;
}

}  // namespace

int main() {
  int device = 0, managed = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, device);
  if (!managed) {
    std::printf("managed_prefetch: no managed memory, nothing to do\n");
    return 0;
  }
  cudaStream_t streams[kStreams];
  unsigned char* input[kStreams] = {};
  unsigned char* output[kStreams] = {};
  bool ok = true;
  for (int i = 0; i < kStreams && ok; ++i) {
    ok = cudaStreamCreate(&streams[i]) == cudaSuccess &&
         cudaMallocManaged(&input[i], kBytes, cudaMemAttachHost) == cudaSuccess &&
         cudaMallocManaged(&output[i], kBytes, cudaMemAttachHost) == cudaSuccess;
  }
  for (int i = 0; i < kStreams && ok; ++i) ok = task(streams[i], input[i], output[i], 10 + i, device);
  if (ok) std::printf("%d streams: managed buffers advised, prefetched to the device and back, data intact\n", kStreams);
  ok = ok && non_managed_refused(device);
  for (int i = 0; i < kStreams; ++i) {
    cudaFree(input[i]);
    cudaFree(output[i]);
    cudaStreamDestroy(streams[i]);
  }
  std::printf("managed_prefetch: %s\n", ok ? "PASSED" : "FAILED");
  return ok ? 0 : 1;
}
