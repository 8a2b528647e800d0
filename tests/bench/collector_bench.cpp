// Collector micro-benchmark (label bench: prints figures, never fails on time).
//   ns per now(), per new_event_id(), per record(), per hook-like sequence (guard, id, two
//   clock reads, record), the guard alone while not recording, and freeze/join throughput.
// Single-thread figures are thread CPU time per call; the two-thread figure is wall time.
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "collector/api.h"
#include "collector/clock.h"
#include "collector/session.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

using Clock = std::chrono::steady_clock;

// The thread's CPU time, not wall time: on a shared 2-core machine the wall clock mostly
// measures other processes.
double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e9 + double(ts.tv_nsec);
}

// The thread's system time and page faults so far: at a freeze, the kernel's share is mostly
// first-touch page faults of the memory the freeze fills.
struct KernelShare {
  double system_s = 0;
  long faults = 0;
  static KernelShare now() {
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return {double(usage.ru_stime.tv_sec) + double(usage.ru_stime.tv_usec) * 1e-6,
            usage.ru_minflt + usage.ru_majflt};
  }
};

template <typename Body>
double ns_per_iteration(uint64_t iterations, Body body) {
  double start = thread_cpu_ns();
  for (uint64_t i = 0; i < iterations; ++i) body(i);
  return (thread_cpu_ns() - start) / double(iterations);
}

volatile uint64_t g_sink;

void hook_like(NameId name, uint64_t i) {
  RuntimeGuard guard;
  if (!guard.should_record()) return;
  HostEvent event{};
  event.id = new_event_id();
  event.start = now();
  event.end = now();
  event.name = name;
  event.kind = uint8_t(EventKind::Runtime);
  event.arg0 = i;
  record(event);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  SessionOptions options;
  options.activity_cuda = false;
  start(options);
  NameId name = intern("cudaLaunchKernel");
  std::printf("collector_bench: %llu iterations, clock source %s\n", (unsigned long long)n,
              clock::source() == clock::Source::CpuCounter ? cpu_counter::kName : "CLOCK_MONOTONIC");

  std::printf("  now()                       %7.2f ns\n",
              ns_per_iteration(n, [](uint64_t) { g_sink = now(); }));
  std::printf("  clock::monotonic_ns()       %7.2f ns\n",
              ns_per_iteration(n, [](uint64_t) { g_sink = clock::monotonic_ns(); }));
  std::printf("  new_event_id()              %7.2f ns\n",
              ns_per_iteration(n, [](uint64_t) { g_sink = new_event_id(); }));
  HostEvent event{};
  std::printf("  record()                    %7.2f ns\n",
              ns_per_iteration(n, [&](uint64_t i) { event.arg0 = i; record(event); }));
  freeze_window();  // gives the chunks back: the next run writes to pages already mapped
  std::printf("  record(), recycled chunks   %7.2f ns\n",
              ns_per_iteration(n, [&](uint64_t i) { event.arg0 = i; record(event); }));
  freeze_window();

  set_state(RecordState::Off);
  std::printf("  hook sequence, not recording %6.2f ns\n",
              ns_per_iteration(n, [&](uint64_t i) { hook_like(name, i); }));
  set_state(RecordState::Record);
  std::printf("  hook sequence, recording    %7.2f ns\n",
              ns_per_iteration(n, [&](uint64_t i) { hook_like(name, i); }));

  // Two threads recording at once: no shared cache line on the hot path.
  auto two_start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] { for (uint64_t i = 0; i < n / 2; ++i) hook_like(name, i); });
  }
  for (auto& thread : threads) thread.join();
  double two_ns = std::chrono::duration<double, std::nano>(Clock::now() - two_start).count();
  std::printf("  hook sequence, 2 threads    %7.2f ns per event (wall / events)\n", two_ns / n);

  // freeze_window() = cut_window() (drain the buffers, split at the cut) + finish_window()
  // (the join): timed apart. Thread CPU includes the page faults of the memory they fill.
  KernelShare cut_kernel = KernelShare::now();
  double freeze_start = thread_cpu_ns();
  CutWindow* cut = cut_window();
  double cut_s = (thread_cpu_ns() - freeze_start) / 1e9;
  KernelShare join_kernel = KernelShare::now();
  double join_start = thread_cpu_ns();
  Trace trace = finish_window(cut);
  double join_s = (thread_cpu_ns() - join_start) / 1e9;
  KernelShare end_kernel = KernelShare::now();
  double freeze_s = cut_s + join_s;
  double records = double(trace.host.size());
  std::printf("  freeze_window(): %zu host records in %.3f s = %.2f M records/s, %llu dropped\n",
              trace.host.size(), freeze_s, records / freeze_s / 1e6,
              (unsigned long long)trace.drops.host_events);
  std::printf("    cut (drain + split)  %.3f s = %.2f M records/s (system %.3f s, %ld page faults)\n",
              cut_s, records / cut_s / 1e6, join_kernel.system_s - cut_kernel.system_s,
              join_kernel.faults - cut_kernel.faults);
  std::printf("    join                 %.3f s = %.2f M records/s (system %.3f s, %ld page faults)\n",
              join_s, records / join_s / 1e6, end_kernel.system_s - join_kernel.system_s,
              end_kernel.faults - join_kernel.faults);
  return 0;
}
