#include "agent/agent_cost.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "agent/log.h"
#include "agent/signal_flush.h"
#include "agent/threads.h"
#include "collector/api.h"
#include "collector/clock.h"
#include "collector/session.h"
#include "collector/thread_buffer.h"
#include "hooks/record_cost.h"

namespace profagent::agent {
namespace {

std::atomic<uint64_t> g_record_cost_ps{0};
std::mutex g_measure_mutex;  // the poller and an early exit flush measure it once between them
std::atomic<uint64_t> g_boundary_ns{0};
std::atomic<uint64_t> g_cupti_call_cost_ps{0};  // 0: not measured (yet)
std::atomic<bool> g_cupti_cost_settled{false};   // measured, or cannot be: not tried again (poller only)

struct PendingSlice {
  const char* name;
  uint32_t number;
  uint32_t tid;
  uint64_t start;  // ticks
  uint64_t end;
};
// The agent's work since the previous window written: a fixed array, so that recording a slice
// never allocates (see AgentWork).
struct Slices {
  std::mutex mutex;
  std::size_t count = 0;
  uint64_t left_out = 0;
  PendingSlice pending[kMaxAgentSlices];
};
Slices g_slices;

// A forked child has none of the parent's agent work, and none of its threads: locks they held
// at the fork (the poller measuring the record cost, one ending a piece of work) are free.
void forget_slices_in_child() {
  new (&g_measure_mutex) std::mutex;
  new (&g_slices.mutex) std::mutex;
  g_slices.count = 0;
  g_slices.left_out = 0;
}
const int g_atfork = pthread_atfork(nullptr, nullptr, forget_slices_in_child);

uint32_t current_tid() noexcept { return uint32_t(syscall(SYS_gettid)); }

// What the window's joined form holds: its records. Their names are interned (one copy of each
// distinct name for the whole process, collector/interned_name.h), so no record owns text:
// counting each record's name, as when records held their own strings, counted a name shared
// by a million records a million times.
template <typename T>
uint64_t vector_bytes(const std::vector<T>& v) {
  return uint64_t(v.capacity()) * sizeof(T);
}

uint64_t joined_bytes(const Trace& t) {
  return vector_bytes(t.host) + vector_bytes(t.device) + vector_bytes(t.memory.records) + vector_bytes(t.annotations) +
         vector_bytes(t.stacks.frames) + vector_bytes(t.stacks.stacks);
}

// The slices since the previous window written, in ns (on an exporting thread: it allocates).
void take_slices(AgentCost& cost) {
  std::vector<PendingSlice> pending;
  {
    std::lock_guard lock(g_slices.mutex);
    pending.assign(g_slices.pending, g_slices.pending + g_slices.count);
    g_slices.count = 0;
    cost.slices_left_out = std::exchange(g_slices.left_out, 0);
  }
  const collector::clock::TickConverter converter = collector::clock::converter();
  cost.slices.reserve(pending.size());
  for (const PendingSlice& p : pending) {
    std::string name = p.name;
    if (p.number != 0) name += " " + std::to_string(p.number);
    cost.slices.push_back({std::move(name), p.tid, converter.to_ns(p.start), converter.to_ns(p.end)});
  }
}

}  // namespace

void measure_record_cost() noexcept {
  if (g_record_cost_ps.load(std::memory_order_acquire) != 0) return;
  std::lock_guard lock(g_measure_mutex);
  if (g_record_cost_ps.load(std::memory_order_relaxed) != 0) return;
  AgentWork work("measure record cost");
  g_record_cost_ps.store(hooks::measure_record_cost_ps(), std::memory_order_release);
}

bool cupti_cost_settled() noexcept { return g_cupti_cost_settled.load(std::memory_order_acquire); }

void measure_cupti_cost() noexcept {
  if (cupti_cost_settled()) return;
  AgentWork work("measure CUPTI cost");
  const collector::DeviceCallCost cost = collector::measure_device_call_cost();
  switch (cost.state) {
    case collector::DeviceCallCost::State::NotYet:
      work.forget();  // nothing was measured: no slice on the trace
      return;
    case collector::DeviceCallCost::State::Measured:
      g_cupti_call_cost_ps.store(cost.ps, std::memory_order_release);
      break;
    case collector::DeviceCallCost::State::Untraced:  // host-only: nothing to measure, nothing to say
      work.forget();
      break;
    case collector::DeviceCallCost::State::Unavailable:
      log(LogLevel::Info, std::string("CUPTI's own cost per call is not measured (") + cost.why +
                              "): the overhead line says so instead of a figure");
      break;
  }
  g_cupti_cost_settled.store(true, std::memory_order_release);
}

namespace {

// A window written before the poller measured CUPTI's cost waits for it: at most this long,
// once per process (the poller looks every millisecond then: device_poller.cpp). Never on a
// crash's flush, which must not wait on the device.
constexpr long kCuptiCostWaitUs = 50'000;

void wait_for_cupti_cost() noexcept {
  if (!collector::g_device_tracing.load() || on_crash_flush_thread()) return;
  const timespec pause{0, 200'000};
  for (long waited_us = 0; !cupti_cost_settled() && waited_us < kCuptiCostWaitUs; waited_us += 200) {
    nanosleep(&pause, nullptr);
  }
}

}  // namespace

AgentWork::AgentWork(const char* name, uint32_t number) noexcept
    : name_(name), number_(number), start_(collector::now()) {}

AgentWork::~AgentWork() {
  if (name_ == nullptr) return;  // forgotten
  const uint64_t end = collector::now();
  const uint32_t tid = current_tid();
  std::lock_guard lock(g_slices.mutex);
  if (g_slices.count == kMaxAgentSlices) {
    ++g_slices.left_out;
    return;
  }
  g_slices.pending[g_slices.count++] = {name_, number_, tid, start_, end};
}

void note_boundary(uint64_t ns) noexcept { g_boundary_ns.fetch_add(ns, std::memory_order_relaxed); }

CostMark cost_mark() noexcept { return {g_boundary_ns.load(std::memory_order_relaxed), agent_threads_cpu_ns()}; }

void attach_agent_cost(Trace& trace, const CostMark& from, const CostMark& to) noexcept {
  AgentCost& cost = trace.agent_cost;
  try {
    measure_record_cost();  // a window written before the agent's thread measured it
    wait_for_cupti_cost();  // the poller's probe, which only the poller runs
    cost.record_cost_ps = g_record_cost_ps.load(std::memory_order_acquire);
    const DropCounters& d = trace.drops;
    cost.hooked_calls = trace.host.size() + d.host_events + d.left_out_host_events + d.shorter_than_min_duration +
                        d.over_max_events;
    cost.boundary_ns = to.boundary_ns > from.boundary_ns ? to.boundary_ns - from.boundary_ns : 0;
    cost.cupti_call_cost_ps = g_cupti_call_cost_ps.load(std::memory_order_acquire);
    // The join counted the window's CUDA calls (collector/join.h): each passed through CUPTI
    // when the device was traced.
    if (cost.cupti_call_cost_ps == 0 && !collector::g_device_tracing.load()) cost.cupti_calls = 0;
    cost.agent_cpu_ns = to.agent_cpu_ns > from.agent_cpu_ns ? to.agent_cpu_ns - from.agent_cpu_ns : 0;
    cost.memory_bytes = collector::buffer_reservation().committed + joined_bytes(trace);
    take_slices(cost);
    cost.measured = true;
    static std::atomic<bool> said{false};
    if (cost.slices_left_out != 0 && !said.exchange(true)) {
      log(LogLevel::Warn, "window " + std::to_string(trace.window) + ": " + std::to_string(cost.slices_left_out) +
                              " pieces of the agent's own work are not drawn on the trace's profagent track (more than " +
                              std::to_string(kMaxAgentSlices) +
                              " in one window; profagent_overhead.slices_left_out); their CPU time is in the overhead line");
    }
  } catch (...) {
    static collector::SwallowedSite site{"the agent's own cost could not be attached to a window (out of memory)"};
    collector::note_swallowed(site);
  }
}

}  // namespace profagent::agent
