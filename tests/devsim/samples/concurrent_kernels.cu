// concurrent_kernels: many small kernels on many streams run at the same time, like the
// introductory concurrentKernels sample. Each of N streams (default 32) gets one kernel that
// spins for a fixed time; stream 0 waits for all of them through cudaStreamWaitEvent and then
// runs a final kernel that sums their results. The elapsed time is compared with the same
// kernels run one after another on one stream.
#include "sample_check.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

// Spins for `clock_count` cycles of the SM clock and stores how long it actually spun.
__global__ void clock_block(long long* result, long long clock_count) {
  long long start = clock64();
  long long elapsed = 0;
  while (elapsed < clock_count) elapsed = clock64() - start;
  *result = elapsed;
}

// Single-thread sum of the per-kernel results into result[0].
__global__ void sum_results(long long* result, int count) {
  long long total = 0;
  for (int i = 0; i < count; ++i) total += result[i];
  result[0] = total;
}

namespace {

constexpr float kKernelMs = 10.0f;  // how long each kernel spins on a real GPU

struct Run {
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> done;  // one per stream, recorded after its kernel
  long long* results = nullptr;
  long long clock_count = 0;
};

// Every kernel on its own stream; stream 0 joins them all before the final sum.
void enqueue_concurrent(const Run& run) {
  int n = static_cast<int>(run.streams.size());
  for (int i = 0; i < n; ++i) {
    clock_block<<<1, 1, 0, run.streams[i]>>>(&run.results[i], run.clock_count);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaEventRecord(run.done[i], run.streams[i]));
  }
  for (int i = 1; i < n; ++i) CHECK_CUDA(cudaStreamWaitEvent(run.streams[0], run.done[i], 0));
  sum_results<<<1, 1, 0, run.streams[0]>>>(run.results, n);
  CHECK_LAUNCH();
}

void enqueue_serial(const Run& run) {
  int n = static_cast<int>(run.streams.size());
  for (int i = 0; i < n; ++i) {
    clock_block<<<1, 1, 0, run.streams[0]>>>(&run.results[i], run.clock_count);
    CHECK_LAUNCH();
  }
  sum_results<<<1, 1, 0, run.streams[0]>>>(run.results, n);
  CHECK_LAUNCH();
}

// Times one of the two schedules. The start event goes on the legacy default stream, which
// every (blocking) stream waits for; the stop event on stream 0, which ends after everything.
float timed(const Run& run, void (*enqueue)(const Run&)) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventRecord(start, 0));
  enqueue(run);
  CHECK_CUDA(cudaEventRecord(stop, run.streams[0]));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0.0f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return ms;
}

void verify_sum(const Run& run) {
  long long total = 0;
  CHECK_CUDA(cudaMemcpy(&total, run.results, sizeof(total), cudaMemcpyDeviceToHost));
  if (total < run.clock_count * static_cast<long long>(run.streams.size())) samples::fail("kernel results");
  std::printf("Kernel results verified: the kernels spun %lld cycles in total\n", total);
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 32;
  if (n < 2) samples::fail("need at least 2 streams");
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  std::printf("Device: %s, concurrent kernels: %s\n", prop.name, prop.concurrentKernels ? "yes" : "no");

  Run run;
  run.streams.resize(n);
  run.done.resize(n);
  run.clock_count = static_cast<long long>(kKernelMs * clock_khz);
  for (cudaStream_t& s : run.streams) CHECK_CUDA(cudaStreamCreate(&s));
  for (cudaEvent_t& e : run.done) CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  CHECK_CUDA(cudaMalloc(&run.results, n * sizeof(long long)));

  float concurrent_ms = timed(run, enqueue_concurrent);
  float serial_ms = timed(run, enqueue_serial);
  std::printf("%d kernels on %d streams: %.3f ms\n", n, n, concurrent_ms);
  std::printf("%d kernels on 1 stream:  %.3f ms\n", n, serial_ms);
  std::printf("concurrency speedup: %.2fx\n", serial_ms / concurrent_ms);
  if (samples::device_is_simulated(0))
    std::printf("Kernel results are not checked: the device is simulated and does not run kernels\n");
  else
    verify_sum(run);

  for (cudaEvent_t e : run.done) CHECK_CUDA(cudaEventDestroy(e));
  for (cudaStream_t s : run.streams) CHECK_CUDA(cudaStreamDestroy(s));
  CHECK_CUDA(cudaFree(run.results));
  std::printf("concurrent_kernels: Test PASSED\n");
  return 0;
}
