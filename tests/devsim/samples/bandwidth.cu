// bandwidth: host<->device and device<->device copy bandwidth with pinned and pageable host
// memory, timed with events, like the introductory bandwidthTest sample. Also checks that
// every copy moved the right bytes.
#include "sample_check.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kBytes = 32u << 20;  // 32 MiB, bandwidthTest's default size
constexpr int kRepeats = 10;

struct Memory {
  unsigned char* pinned = nullptr;
  std::vector<unsigned char> pageable = std::vector<unsigned char>(kBytes);
  unsigned char* device_a = nullptr;
  unsigned char* device_b = nullptr;
};

// Bandwidth in GB/s (10^9 bytes) of kRepeats copies, timed with events on the default stream.
// Pinned host memory uses async copies (as bandwidthTest does); pageable memory blocking ones.
double measure(void* dst, const void* src, cudaMemcpyKind kind, bool async) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventRecord(start, 0));
  for (int r = 0; r < kRepeats; ++r) {
    if (async)
      CHECK_CUDA(cudaMemcpyAsync(dst, src, kBytes, kind, 0));
    else
      CHECK_CUDA(cudaMemcpy(dst, src, kBytes, kind));
  }
  CHECK_CUDA(cudaEventRecord(stop, 0));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  if (!(ms > 0.0f)) samples::fail("a copy took no measurable time");
  return static_cast<double>(kBytes) * kRepeats / (ms * 1e6);
}

void fill(unsigned char* data, unsigned seed) {
  for (size_t i = 0; i < kBytes; ++i) data[i] = static_cast<unsigned char>((i * 131 + seed) >> 3);
}

void expect_equal(const unsigned char* a, const unsigned char* b, const char* what) {
  if (std::memcmp(a, b, kBytes) != 0) samples::fail(what);
}

struct Pair {
  double pinned = 0, pageable = 0;
};

Pair host_to_device(Memory& m) {
  fill(m.pinned, 1);
  Pair gbps{measure(m.device_a, m.pinned, cudaMemcpyHostToDevice, true), 0};
  fill(m.pageable.data(), 2);
  gbps.pageable = measure(m.device_b, m.pageable.data(), cudaMemcpyHostToDevice, false);
  return gbps;
}

// Reads back what host_to_device wrote, so the data checks cover both directions.
Pair device_to_host(Memory& m) {
  std::vector<unsigned char> expected(m.pinned, m.pinned + kBytes);
  Pair gbps{measure(m.pinned, m.device_a, cudaMemcpyDeviceToHost, true), 0};
  expect_equal(m.pinned, expected.data(), "pinned round trip");
  expected = m.pageable;
  std::memset(m.pageable.data(), 0, kBytes);
  gbps.pageable = measure(m.pageable.data(), m.device_b, cudaMemcpyDeviceToHost, false);
  expect_equal(m.pageable.data(), expected.data(), "pageable round trip");
  return gbps;
}

double device_to_device(Memory& m) {
  double gbps = measure(m.device_b, m.device_a, cudaMemcpyDeviceToDevice, true);
  CHECK_CUDA(cudaMemcpy(m.pageable.data(), m.device_b, kBytes, cudaMemcpyDeviceToHost));
  expect_equal(m.pageable.data(), m.pinned, "device to device copy");
  return gbps;
}

void report(const char* direction, const Pair& gbps) {
  std::printf("%s  pinned: %8.2f GB/s   pageable: %8.2f GB/s\n", direction, gbps.pinned, gbps.pageable);
}

void compare(const char* direction, const Pair& gbps) {
  std::printf("%s: pinned %s pageable\n", direction,
              gbps.pinned > gbps.pageable ? "is faster than" : "is NOT faster than");
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("Device 0: %s\nTransfer size: %zu bytes, %d copies per measurement\n", prop.name,
              kBytes, kRepeats);
  Memory m;
  CHECK_CUDA(cudaMallocHost(&m.pinned, kBytes));
  CHECK_CUDA(cudaMalloc(&m.device_a, kBytes));
  CHECK_CUDA(cudaMalloc(&m.device_b, kBytes));

  Pair htod = host_to_device(m);
  Pair dtoh = device_to_host(m);
  double dtod = device_to_device(m);
  report("Host to Device", htod);
  report("Device to Host", dtoh);
  std::printf("Device to Device: %8.2f GB/s\n", dtod);
  compare("HtoD", htod);
  compare("DtoH", dtoh);

  CHECK_CUDA(cudaFreeHost(m.pinned));
  CHECK_CUDA(cudaFree(m.device_a));
  CHECK_CUDA(cudaFree(m.device_b));
  std::printf("bandwidth: all copies verified, Result = PASS\n");
  return 0;
}
