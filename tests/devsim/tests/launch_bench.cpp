// Real CPU cost of the simulated runtime's own work (DEVSIM_HOST_COST_SCALE=0): how long a
// launch, an async copy and an event record take when no modelled cost is added. Prints
// figures only; it never fails on time.
#include <cuda_runtime_api.h>

#include <time.h>

#include <chrono>
#include <cstdio>

#include "model_test_support.h"

namespace {

void bench_stub() {}

double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct Cost {
  double wall_ns, cpu_ns;
};

// Wall time per call, and this thread's CPU time per call (robust on a loaded machine).
template <typename F>
Cost per_call(int n, F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  double c0 = thread_cpu_ns();
  for (int i = 0; i < n; ++i) f();
  double c1 = thread_cpu_ns();
  auto t1 = std::chrono::steady_clock::now();
  return {std::chrono::duration<double, std::nano>(t1 - t0).count() / n, (c1 - c0) / n};
}

void print(const char* what, Cost c) { std::printf("  %-34s %9.1f ns wall %9.1f ns cpu\n", what, c.wall_ns, c.cpu_ns); }

}  // namespace

// model_test_support.cpp brings Catch's runner; this program has its own main.
int bench_main() {
  const void* k = devsim_test::fake_kernel(reinterpret_cast<const void*>(&bench_stub), "_Z5benchv");
  cudaStream_t s;
  cudaStreamCreate(&s);
  void* dev = nullptr;
  void* pinned = nullptr;
  cudaMalloc(&dev, 4096);
  cudaMallocHost(&pinned, 4096);
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  constexpr int n = 100000;
  Cost launch = per_call(n, [&] { cudaLaunchKernel(k, 1, 32, nullptr, 0, s); });
  cudaStreamSynchronize(s);
  Cost copy = per_call(n, [&] { cudaMemcpyAsync(dev, pinned, 64, cudaMemcpyHostToDevice, s); });
  cudaStreamSynchronize(s);
  Cost record = per_call(n, [&] { cudaEventRecord(e, s); });
  cudaStreamSynchronize(s);
  Cost query = per_call(n, [&] { cudaStreamQuery(s); });
  std::printf("devsim host cost per call (%d calls each; DEVSIM_HOST_COST_SCALE as set):\n", n);
  print("cudaLaunchKernel", launch);
  print("cudaMemcpyAsync (pinned, 64 B)", copy);
  print("cudaEventRecord", record);
  print("cudaStreamQuery", query);
  return 0;
}
