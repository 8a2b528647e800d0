// The call site for tests/bench/stacks_bench.py: recurses to a given depth through distinct
// noinline frames, then makes N recorded CUDA calls (cudaProfilerStart: recorded, no device
// work, so only the agent's cost is measured) in a loop, and prints calls, wall and CPU ns.
//   stacks_bench_calls <depth> <calls>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

unsigned long g_calls = 0;

uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

__attribute__((noinline)) void bench_loop() {
  for (unsigned long i = 0; i < g_calls; ++i) cudaProfilerStart();
}

// Each level is its own frame (the barrier keeps the recursion from becoming a loop).
__attribute__((noinline)) void descend(int levels) {
  if (levels <= 1) {
    bench_loop();
  } else {
    descend(levels - 1);
  }
  asm volatile("" ::: "memory");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: stacks_bench_calls <depth> <calls>\n");
    return 2;
  }
  const int depth = std::atoi(argv[1]);
  g_calls = std::strtoul(argv[2], nullptr, 10);
  cudaProfilerStart();  // loads the runtime and the agent's first-use steps outside the timing
  const uint64_t wall = clock_ns(CLOCK_MONOTONIC), cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
  descend(depth - 3);  // main, descend..., bench_loop: `depth` frames above the call
  const uint64_t wall_ns = clock_ns(CLOCK_MONOTONIC) - wall, cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu;
  std::printf("calls=%lu depth=%d wall_ns=%llu cpu_ns=%llu\n", g_calls, depth, (unsigned long long)wall_ns,
              (unsigned long long)cpu_ns);
  return 0;
}
