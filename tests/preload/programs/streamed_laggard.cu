// streamed_laggard: a thread that records a little in the first step, then waits, in a window
// streamed in segments with a step at each cudaStreamSynchronize (PROFAGENT_STEP_ON).
//
//   streamed_laggard [steps=12000] [api]
// `api`: the main thread also calls profagent_step() after each step's synchronisation (for a
// window not set up for steps: the whole run, its steps marked by the C API).
// The laggard thread launches a kernel and a copy on its own stream inside a "laggard" range
// (a few events: they stay in its buffer's open chunk, far from full), tells the main thread,
// and waits on a condition, recording nothing and in no call, while the main thread runs
// `steps` steps (a kernel, a copy and the synchronisation that ends the step, in an
// "iteration" range, 50 µs apart: long enough for the window to be streamed meanwhile). Then
// it records again (the same, in the last steps) and exits. The per-step summaries folded
// while the window streamed must hold the laggard's first-step device work in its step.
// It never calls cudaStreamSynchronize (that would end a step).
#include <cuda_runtime_api.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

extern "C" {
void profagent_range_push(const char* name) __attribute__((weak));
void profagent_range_pop(void) __attribute__((weak));
void profagent_step(void) __attribute__((weak));
}

__global__ void laggard_kernel(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

namespace {

constexpr int kN = 1 << 12;
constexpr size_t kBytes = kN * sizeof(float);
int g_failures = 0;
std::mutex g_mutex;
std::condition_variable g_changed;
int g_stage = 0;  // 1: the laggard recorded its first step's work; 2: the main thread's steps are done

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  std::lock_guard lock(g_mutex);
  ++g_failures;
  std::printf("%s: %s\n", call, cudaGetErrorName(status));
}
#define CHECK(call) check((call), #call)

void set_stage(int stage) {
  std::lock_guard lock(g_mutex);
  g_stage = stage;
  g_changed.notify_all();
}

void wait_stage(int stage) {
  std::unique_lock lock(g_mutex);
  g_changed.wait(lock, [&] { return g_stage >= stage; });
}

void issue(const char* range, float* device, float* host, cudaStream_t stream) {
  if (profagent_range_push) profagent_range_push(range);
  laggard_kernel<<<(kN + 255) / 256, 256, 0, stream>>>(device, kN);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(host, device, kBytes, cudaMemcpyDeviceToHost, stream));
  if (profagent_range_pop) profagent_range_pop();
}

void laggard(float* device, float* host) {
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));
  issue("laggard", device, host, stream);
  set_stage(1);
  wait_stage(2);
  issue("laggard", device, host, stream);
  (void)cudaStreamQuery(stream);  // not ready, or done: either is fine
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 12000;
  const bool api = argc > 2 && std::strcmp(argv[2], "api") == 0;
  float* device[2] = {};
  static float host[2][kN];
  for (float*& buffer : device) CHECK(cudaMalloc(reinterpret_cast<void**>(&buffer), kBytes));
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreate(&stream));
  std::thread late(laggard, device[1], host[1]);
  wait_stage(1);
  for (int i = 0; i < steps; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    issue("iteration", device[0], host[0], stream);
    CHECK(cudaStreamSynchronize(stream));  // ends the step (PROFAGENT_STEP_ON)
    if (api && profagent_step) profagent_step();
  }
  set_stage(2);
  late.join();
  CHECK(cudaDeviceSynchronize());
  for (float* buffer : device) CHECK(cudaFree(buffer));
  return g_failures == 0 ? 0 : 3;
}
