// Of the kind of CUDA's simpleStreams sample built with `nvcc --default-stream per-thread`:
// several host threads, each on its own default stream, stage pinned buffers to the device and
// back and free the pinned source (cudaFreeHost) right after queueing the copies, as the
// sample does; created streams are destroyed with work still queued before their buffers are
// freed. The runtime must finish the queued copies first, so every result is checked after.
#include "memory_check.h"

#include <thread>

namespace {

constexpr int kThreads = 3;
constexpr int kRounds = 6;
constexpr size_t kBytes = 4 << 20;

__global__ void touch(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 1.0f;
}

// One round on the thread's default stream (stream 0 is per-thread in this build).
bool round_on_default_stream(unsigned seed, unsigned char* result) {
  unsigned char* source = nullptr;
  void* dev = nullptr;
  CHECK(cudaMallocHost(&source, kBytes));
  CHECK(cudaMalloc(&dev, kBytes));
  fill_pattern(source, kBytes, seed);
  CHECK(cudaMemcpyAsync(dev, source, kBytes, cudaMemcpyHostToDevice, 0));
  touch<<<1, 32>>>(static_cast<float*>(dev), 0);
  CHECK(cudaMemcpyAsync(result, dev, kBytes, cudaMemcpyDeviceToHost, 0));
  CHECK(cudaFreeHost(source));  // right after the queued copies, as simpleStreams does
  unsigned char* reuse = nullptr;  // likely the same pages: overwriting them must not matter
  CHECK(cudaMallocHost(&reuse, kBytes));
  std::fill(reuse, reuse + kBytes, 0xEE);
  CHECK(cudaStreamSynchronize(0));
  CHECK(cudaFreeHost(reuse));
  CHECK(cudaFree(dev));
  EXPECT(has_pattern(result, kBytes, seed), "round %u: the result does not match what was sent", seed);
  return true;
}

// The same through a created stream destroyed while its copies are still queued.
bool round_on_destroyed_stream(unsigned seed, unsigned char* result) {
  cudaStream_t s;
  unsigned char* source = nullptr;
  void* dev = nullptr;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaMallocHost(&source, kBytes));
  CHECK(cudaMalloc(&dev, kBytes));
  fill_pattern(source, kBytes, seed);
  CHECK(cudaMemcpyAsync(dev, source, kBytes, cudaMemcpyHostToDevice, s));
  CHECK(cudaMemcpyAsync(result, dev, kBytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFreeHost(source));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(dev));
  EXPECT(has_pattern(result, kBytes, seed), "destroyed-stream round %u: the result does not match", seed);
  return true;
}

void worker(int id, bool* ok) {
  unsigned char* result = nullptr;
  if (cudaMallocHost(&result, kBytes) != cudaSuccess) return;
  *ok = true;
  for (int r = 0; r < kRounds && *ok; ++r) {
    const unsigned seed = id * 100 + r;
    *ok = (r % 2 == 0) ? round_on_default_stream(seed, result) : round_on_destroyed_stream(seed, result);
  }
  cudaFreeHost(result);
}

}  // namespace

int main() {
  bool ok[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t, &ok[t]);
  for (auto& t : threads) t.join();
  bool all = true;
  for (bool b : ok) all = all && b;
  if (all) std::printf("%d threads x %d rounds of %zu MiB: pinned sources freed right after queueing, results intact\n",
                       kThreads, kRounds, kBytes >> 20);
  std::printf("per_thread_pinned: %s\n", all ? "PASSED" : "FAILED");
  return all ? 0 : 1;
}
