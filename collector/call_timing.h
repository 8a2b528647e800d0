// How the agent times a call it makes itself (the record cost, CUPTI's cost per call): the
// calling thread's CPU time around batches of calls, the least batch kept (an interrupted or
// preempted batch only adds time), per call in picoseconds.
#pragma once

#include <time.h>

#include <algorithm>
#include <cstdint>

namespace profagent::collector {

// The calling thread's CPU time; 0 when the clock cannot be read.
inline uint64_t thread_cpu_ns() noexcept {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// Picoseconds per call of the least of `batches` batches of `calls_per_batch` calls of `call`;
// 0 when the thread's clock failed every time.
template <typename Call>
uint64_t least_per_call_ps(int batches, uint32_t calls_per_batch, Call&& call) noexcept {
  uint64_t best_ns = UINT64_MAX;
  for (int batch = 0; batch < batches; ++batch) {
    const uint64_t from = thread_cpu_ns();
    for (uint32_t i = 0; i < calls_per_batch; ++i) call();
    const uint64_t to = thread_cpu_ns();
    if (from != 0 && to > from) best_ns = std::min(best_ns, to - from);
  }
  return best_ns == UINT64_MAX ? 0 : best_ns * 1000 / calls_per_batch;
}

}  // namespace profagent::collector
