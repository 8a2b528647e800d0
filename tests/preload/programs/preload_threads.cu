// preload_threads: several host threads issue work at the same time, each on its own stream
// and inside its own "iteration" ranges; some threads end before the process exits. Counts
// must be exact and every record attributed to the right thread's calls.
//
//   preload_threads [threads=4] [iterations=5] [outer]
// `outer`: each thread's iterations, 500 at a time, inside a "block" range too, which begins
// with a cudaStreamQuery of its own (ranges open across the segments of a streamed window,
// which holds what they enclose until they end), and each iteration takes 0.3 ms longer (a job
// that runs long enough to be streamed, whatever the machine's speed).
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

extern "C" {
void profagent_range_push(const char* name) __attribute__((weak));
void profagent_range_pop(void) __attribute__((weak));
}

__global__ void scale_kernel(float* data, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

namespace {

constexpr int kN = 1 << 14;
constexpr size_t kBytes = kN * sizeof(float);
std::atomic<int> g_failures{0};

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  g_failures.fetch_add(1);
  std::printf("%s: %s\n", call, cudaGetErrorName(status));
}
#define CHECK(call) check((call), #call)

struct Range {
  explicit Range(const char* name) { if (profagent_range_push) profagent_range_push(name); }
  ~Range() { if (profagent_range_pop) profagent_range_pop(); }
};

void worker(int iterations, float* device, float* host, bool outer) {
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));
  for (int i = 0; i < iterations; ++i) {
    if (outer && i % 500 == 0) {
      if (profagent_range_push) profagent_range_push("block");
      (void)cudaStreamQuery(stream);  // not ready, or done: either is fine
    }
    if (outer) std::this_thread::sleep_for(std::chrono::microseconds(300));
    Range range("iteration");
    scale_kernel<<<(kN + 255) / 256, 256, 0, stream>>>(device, 2.0f, kN);
    CHECK(cudaGetLastError());
    CHECK(cudaMemsetAsync(device, 0, kBytes / 4, stream));
    CHECK(cudaMemcpyAsync(host, device, kBytes, cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));  // waits for the copy just issued on this stream
    if (outer && (i % 500 == 499 || i == iterations - 1) && profagent_range_pop) profagent_range_pop();
  }
  CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 4;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 5;
  const bool outer = argc > 3 && std::string_view(argv[3]) == "outer";
  std::vector<float*> device(threads, nullptr);
  std::vector<std::vector<float>> host(threads, std::vector<float>(kN));
  for (auto& buffer : device) CHECK(cudaMalloc(reinterpret_cast<void**>(&buffer), kBytes));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker, iterations, device[t], host[t].data(), outer);
  for (auto& thread : pool) thread.join();  // these threads have exited before the flush
  CHECK(cudaDeviceSynchronize());
  for (auto* buffer : device) CHECK(cudaFree(buffer));
  const int launched = threads * iterations;
  std::printf("expect {\"kernels\":{\"scale_kernel\":%d},\"memcpy\":%d,\"memset\":%d,\"driver_kernels\":0,"
              "\"ranges\":{\"iteration\":%d},\"failures\":%d}\n",
              launched, launched, launched, launched, g_failures.load());
  return g_failures.load() == 0 ? 0 : 3;
}
