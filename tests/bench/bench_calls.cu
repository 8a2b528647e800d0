// The program every overhead benchmark runs (tests/bench/overhead_bench.py drives it in each
// agent mode): a tight loop of one cheap, hooked CUDA runtime call, timed from inside.
//
//   bench_calls <call> <calls> [sync_every] [at-exit]
//     call: launch    cudaLaunchKernel of an empty kernel (<<<1,1>>>, what nvcc emits)
//           profiler  cudaProfilerStart: hooked, no device work, the cheapest hooked call
//           alloc     cudaMalloc(256) then cudaFree of it: one call is the pair (the allocation
//                     hooks: tests/bench/memory_bench.py)
//     sync_every: cudaStreamSynchronize after that many calls (launch only; 0: never), so the
//                 device queue of a long run stays short as in a real launch-bound loop.
//     at-exit: run the timed loop from an atexit handler that runs after the agent's exit
//              flush (see timed_run_at_exit).
//
// One line goes to stdout, `key=value` pairs the driver parses:
//   calls wall_ns cpu_ns (this thread's CPU time in the loop) rss_before_kb rss_after_kb
//   (VmRSS around the loop: what buffered events cost) proc_cpu_ns and main_end_ns (process
//   CPU time and CLOCK_MONOTONIC at the end of main: the driver subtracts them from the
//   process totals to time the exit flush), proc_sys_ns and minflt (system time and minor page
//   faults so far, getrusage: the exit flush's share of them is the totals minus these).
// The loop is bench_loop(), extern "C" and not inlined, so callgrind can count exactly its
// instructions (--toggle-collect=bench_loop); warm-up calls before it take the one-time costs
// (symbol resolution, CUPTI start, first buffer chunk) out of the measured loop.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

__global__ void empty_kernel() {}

enum class Call { Launch, Profiler, Alloc };

uint64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

long rss_kb() {
  FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, status) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) kb = std::strtol(line + 6, nullptr, 10);
  }
  std::fclose(status);
  return kb;
}

bool check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "bench_calls: %s failed: %s\n", what, cudaGetErrorString(error));
  return false;
}

}  // namespace

extern "C" __attribute__((noinline)) int bench_loop(int call, unsigned long calls,
                                                   unsigned long sync_every) {
  int failures = 0;
  for (unsigned long i = 1; i <= calls; ++i) {
    if (call == int(Call::Launch)) {
      empty_kernel<<<1, 1>>>();
      if (sync_every != 0 && i % sync_every == 0) failures += cudaStreamSynchronize(0) != cudaSuccess;
    } else if (call == int(Call::Alloc)) {
      void* p = nullptr;
      failures += cudaMalloc(&p, 256) != cudaSuccess;
      failures += cudaFree(p) != cudaSuccess;
    } else {
      failures += cudaProfilerStart() != cudaSuccess;
    }
  }
  return failures;
}

namespace {

struct Run {
  int call = 0;
  unsigned long calls = 0;
  unsigned long sync_every = 0;
};
Run g_run;

// The measured part: the loop between two clock and RSS readings, then one line of figures.
bool timed_run(const Run& run) {
  const long rss_before = rss_kb();
  const uint64_t wall0 = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
  const int failures = bench_loop(run.call, run.calls, run.sync_every);
  const uint64_t cpu1 = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall1 = clock_ns(CLOCK_MONOTONIC);
  const long rss_after = rss_kb();
  if (failures != 0 || !check(cudaDeviceSynchronize(), "final synchronisation")) return false;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const uint64_t sys_ns = uint64_t(usage.ru_stime.tv_sec) * 1'000'000'000ull + uint64_t(usage.ru_stime.tv_usec) * 1000ull;
  std::printf("calls=%lu wall_ns=%llu cpu_ns=%llu rss_before_kb=%ld rss_after_kb=%ld "
              "proc_cpu_ns=%llu main_end_ns=%llu proc_sys_ns=%llu minflt=%ld\n",
              run.calls, (unsigned long long)(wall1 - wall0), (unsigned long long)(cpu1 - cpu0),
              rss_before, rss_after, (unsigned long long)clock_ns(CLOCK_PROCESS_CPUTIME_ID),
              (unsigned long long)clock_ns(CLOCK_MONOTONIC), (unsigned long long)sys_ns, usage.ru_minflt);
  std::fflush(stdout);
  return true;
}

// at-exit mode: registered before the first CUDA call, so it runs after the agent's exit
// flush (atexit handlers run in reverse order, the agent registers its own at the first CUDA
// call, which is nvcc's module registration before main). From then on every hook takes the not-recording path — the same code as an idle
// step — which measures the idle cost on builds without a step schedule.
void timed_run_at_exit() {
  if (!timed_run(g_run)) _exit(1);
}

bool wants_at_exit(int argc, char** argv) { return argc > 4 && std::strcmp(argv[4], "at-exit") == 0; }

// Before nvcc's module-registration constructors (default priority), whose
// __cudaRegisterFatBinary is already a CUDA call the agent hooks. glibc hands constructors
// the program's arguments.
__attribute__((constructor(101))) void register_at_exit_early(int argc, char** argv, char**) {
  if (wants_at_exit(argc, argv)) std::atexit(timed_run_at_exit);
}

}  // namespace

int main(int argc, char** argv) {
  const bool known = argc >= 3 && (std::strcmp(argv[1], "launch") == 0 || std::strcmp(argv[1], "profiler") == 0 ||
                                   std::strcmp(argv[1], "alloc") == 0);
  if (!known) {
    std::fprintf(stderr, "usage: bench_calls launch|profiler|alloc <calls> [sync_every] [at-exit]\n");
    return 2;
  }
  g_run.call = int(std::strcmp(argv[1], "launch") == 0 ? Call::Launch
                   : std::strcmp(argv[1], "alloc") == 0 ? Call::Alloc : Call::Profiler);
  g_run.calls = std::strtoul(argv[2], nullptr, 10);
  g_run.sync_every = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 0;
  const bool at_exit = wants_at_exit(argc, argv);

  if (!check(cudaFree(nullptr), "cudaFree(0) (context creation)")) return 1;
  if (bench_loop(g_run.call, 100, g_run.sync_every) != 0) return 1;  // warm-up, see the header
  if (!check(cudaDeviceSynchronize(), "warm-up synchronisation")) return 1;
  if (at_exit) return 0;
  return timed_run(g_run) ? 0 : 1;
}
