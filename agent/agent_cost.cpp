#include "agent/agent_cost.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "agent/threads.h"
#include "collector/api.h"
#include "collector/clock.h"
#include "collector/thread_buffer.h"
#include "hooks/record_cost.h"

namespace profagent::agent {
namespace {

std::atomic<uint64_t> g_record_cost_ps{0};
std::mutex g_measure_mutex;  // one measurement at a time (its slot array is shared)
std::atomic<uint64_t> g_boundary_ns{0};

struct PendingSlice {
  std::string name;
  uint32_t tid;
  uint64_t start;  // ticks
  uint64_t end;
};
struct Slices {
  std::mutex mutex;
  std::vector<PendingSlice> pending;
  uint64_t left_out = 0;
};
Slices* g_slices = new Slices;  // leaked: agent threads may still end work while the process exits

// A forked child has none of the parent's agent work.
void forget_slices_in_child() {
  new (g_slices) Slices;  // the old one is leaked, never destroyed (its mutex may be held)
}
const int g_atfork = pthread_atfork(nullptr, nullptr, forget_slices_in_child);

uint32_t current_tid() noexcept { return uint32_t(syscall(SYS_gettid)); }

// What the window's joined form holds: its records and the text they own beyond the strings'
// own bytes (names longer than the small-string buffer).
template <typename T>
uint64_t vector_bytes(const std::vector<T>& v) {
  return uint64_t(v.capacity()) * sizeof(T);
}
uint64_t heap_text(const std::string& s) { return s.capacity() > 15 ? s.capacity() + 1 : 0; }

uint64_t joined_bytes(const Trace& t) {
  uint64_t bytes = vector_bytes(t.host) + vector_bytes(t.device) + vector_bytes(t.memory.records) +
                   vector_bytes(t.annotations) + vector_bytes(t.stacks.frames) + vector_bytes(t.stacks.stacks);
  for (const HostRecord& h : t.host) bytes += heap_text(h.name) + heap_text(h.kernel_name);
  for (const DeviceRecord& d : t.device) bytes += heap_text(d.name);
  return bytes;
}

// The slices since the previous window written, in ns.
void take_slices(AgentCost& cost) {
  std::vector<PendingSlice> pending;
  {
    std::lock_guard lock(g_slices->mutex);
    pending.swap(g_slices->pending);
    cost.slices_left_out = std::exchange(g_slices->left_out, 0);
  }
  const collector::clock::TickConverter converter = collector::clock::converter();
  cost.slices.reserve(pending.size());
  for (PendingSlice& p : pending) {
    cost.slices.push_back({std::move(p.name), p.tid, converter.to_ns(p.start), converter.to_ns(p.end)});
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

AgentWork::AgentWork(std::string name) noexcept : name_(std::move(name)), start_(collector::now()) {}

AgentWork::~AgentWork() {
  const uint64_t end = collector::now();
  try {
    std::lock_guard lock(g_slices->mutex);
    if (g_slices->pending.size() >= kMaxAgentSlices) {
      ++g_slices->left_out;
      return;
    }
    g_slices->pending.push_back({std::move(name_), current_tid(), start_, end});
  } catch (...) {
    std::lock_guard lock(g_slices->mutex);
    ++g_slices->left_out;  // out of memory: counted like a slice beyond the bound
  }
}

void note_boundary(uint64_t ns) noexcept { g_boundary_ns.fetch_add(ns, std::memory_order_relaxed); }

CostMark cost_mark() noexcept { return {g_boundary_ns.load(std::memory_order_relaxed), agent_threads_cpu_ns()}; }

void attach_agent_cost(Trace& trace, const CostMark& from, const CostMark& to) noexcept {
  AgentCost& cost = trace.agent_cost;
  try {
    measure_record_cost();  // a window written before the agent's thread measured it
    cost.record_cost_ps = g_record_cost_ps.load(std::memory_order_acquire);
    const DropCounters& d = trace.drops;
    cost.hooked_calls = trace.host.size() + d.host_events + d.left_out_host_events + d.shorter_than_min_duration +
                        d.over_max_events;
    cost.boundary_ns = to.boundary_ns > from.boundary_ns ? to.boundary_ns - from.boundary_ns : 0;
    cost.agent_cpu_ns = to.agent_cpu_ns > from.agent_cpu_ns ? to.agent_cpu_ns - from.agent_cpu_ns : 0;
    cost.memory_bytes = collector::buffer_reservation().committed + joined_bytes(trace);
    take_slices(cost);
    cost.measured = true;
  } catch (...) {
    static collector::SwallowedSite site{"the agent's own cost could not be attached to a window (out of memory)"};
    collector::note_swallowed(site);
  }
}

}  // namespace profagent::agent
