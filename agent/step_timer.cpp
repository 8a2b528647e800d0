#include "agent/step_timer.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <new>
#include <string>

#include "agent/log.h"
#include "agent/threads.h"

namespace profagent::agent {
namespace {

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerSecond = 1'000'000'000;

struct StepTimer {
  int64_t period_ns;
  void (*end_step)();
  bool (*finished)();
};

std::atomic<uint64_t> g_missed{0};

int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t(now.tv_sec) * kNsPerSecond + now.tv_nsec;
}

timespec to_timespec(int64_t ns) { return {time_t(ns / kNsPerSecond), long(ns % kNsPerSecond)}; }

// Sleeps until `deadline_ns` on absolute deadlines, waking at least every kAgentTickMs to ask
// keep_running(); false if agent threads were told to stop meanwhile.
bool sleep_until(int64_t deadline_ns) {
  for (;;) {
    const int64_t now_ns = monotonic_ns();
    if (now_ns >= deadline_ns) return true;
    if (!keep_running()) return false;
    const int64_t wake_ns = std::min(deadline_ns, now_ns + kAgentTickMs * kNsPerMs);
    const timespec wake = to_timespec(wake_ns);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nullptr) == EINTR) {
    }
  }
}

void say_missed_once(const StepTimer& timer, uint64_t missed) noexcept {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  try {
    log(LogLevel::Warn, "PROFAGENT_STEP_ON time:" + std::to_string(timer.period_ns / kNsPerMs) + ": the timer thread woke " +
                            std::to_string(missed) + (missed == 1 ? " period" : " periods") +
                            " late; missed periods are not marked as steps (the late step is longer), "
                            "counted in profagent_drops.timer_periods_missed");
  } catch (...) {
    // No memory for the line: the trace still has the count.
  }
}

// The deadline after `due` (the one just reached at `now_ns`): the next one, or the first
// still ahead when the thread woke one or more whole periods late (those are counted).
int64_t next_deadline(const StepTimer& timer, int64_t due, int64_t now_ns) {
  const int64_t late_periods = (now_ns - due) / timer.period_ns;
  if (late_periods > 0) {
    g_missed.fetch_add(uint64_t(late_periods), std::memory_order_relaxed);
    say_missed_once(timer, uint64_t(late_periods));
  }
  return due + (late_periods + 1) * timer.period_ns;
}

void mark_steps_on_time(void* raw) noexcept {
  const StepTimer timer = *static_cast<StepTimer*>(raw);
  delete static_cast<StepTimer*>(raw);
  int64_t due = monotonic_ns() + timer.period_ns;
  while (sleep_until(due) && !timer.finished()) {
    timer.end_step();
    due = next_deadline(timer, due, monotonic_ns());
  }
}

}  // namespace

bool start_step_timer(uint64_t period_ms, void (*end_step)(), bool (*finished)()) noexcept {
  auto* timer = new (std::nothrow) StepTimer{int64_t(period_ms) * kNsPerMs, end_step, finished};
  if (timer == nullptr) return false;
  if (start_agent_thread("profagent-timer", mark_steps_on_time, timer)) return true;
  delete timer;
  return false;
}

uint64_t timer_periods_missed() noexcept { return g_missed.load(std::memory_order_relaxed); }

}  // namespace profagent::agent
