// The memory summary of one window (PROFAGENT_PROFILE_MEMORY), printed after the table and
// written into the summary file: per device the peak allocated and reserved bytes (when, in
// which step, inside which operator or range), the totals at the window's end, the
// allocations still live at its end (at exit: the leaks) with where they were made, the
// allocations and frees of every step, failed allocations, bad frees, and allocation churn: a
// cudaMalloc/cudaFree (or host) pair inside every steady-state step, a known performance bug
// (each such call synchronises the device or costs the driver a page-table update).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "collector/trace.h"
#include "exporters/json_writer.h"
#include "exporters/summaries/host_costs.h"

namespace profagent::exporters {

// The scopes a memory record is placed in (MemoryPlace::scope): operators and user ranges.
inline bool is_named_scope(EventKind k) { return k == EventKind::Operator || k == EventKind::Range; }

// Where a memory record happened.
struct MemoryPlace {
  uint64_t ns = 0;
  int64_t step = -1;         // the recorded step holding it, -1 if none
  std::string scope;         // innermost enclosing operator or range ("" if none)
  std::string call_site;     // PROFAGENT_WITH_STACK: the allocating call's call site ("" if none)
};

struct DeviceMemory {
  int32_t device = kHostDevice;
  int64_t peak_allocated = 0;
  MemoryPlace allocated_at;  // of the peak (the window's start if it was never exceeded)
  int64_t peak_reserved = 0;
  MemoryPlace reserved_at;
  int64_t end_allocated = 0;
  int64_t end_reserved = 0;
};

struct StepMemory {
  uint64_t step = 0;
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t failed = 0;
  int64_t net_bytes = 0;
  uint64_t churn_pairs = 0;  // frees of non-pool memory allocated in the same step
  uint64_t churn_bytes = 0;
};

struct LiveMemory {
  LiveAllocation allocation;
  MemoryPlace made;          // step/scope only when the allocating call is in this window
  bool in_window = false;
};

// A failed allocation call: out of memory, or refused for another reason (record.refused).
struct FailedAllocation {
  MemoryRecord record;
  MemoryPlace place;
  std::string call;          // the failed call's name ("" when it is not in the window)
};

struct MemorySummary {
  bool enabled = false;
  std::vector<DeviceMemory> devices;
  std::vector<StepMemory> steps;
  std::vector<LiveMemory> live;
  std::vector<FailedAllocation> failed;
  // Churn in every steady-state step (every step of the window but its first, at least two).
  bool churn_every_step = false;
  std::string advice;
};

// A streamed window's memory records come with its tail, but the calls that made them may have
// been written in earlier segments (agent/streamed_table.h): where each such call was, by its
// host event id, so the summary places its records as a whole window's.
struct EarlierCall {
  uint64_t start_ns = 0;
  std::string name;
  std::string scope;      // innermost enclosing operator or range ("" if none)
  std::string call_site;  // PROFAGENT_WITH_STACK: its call site ("" if none)
};
using EarlierCalls = std::unordered_map<uint64_t, EarlierCall>;

MemorySummary summarize_memory(const Trace& trace);
// The same from the trace's costs computed once (compute_summaries): their nesting order.
// `earlier`: a streamed window's calls in its earlier segments (the trace is its tail).
MemorySummary summarize_memory(const Trace& trace, const HostCosts& costs, const EarlierCalls* earlier = nullptr);

// Text after the table (empty when memory was not profiled). At most `live_lines` live
// allocations are listed (all are in the summary file).
std::string render_memory_summary(const Trace& trace, const MemorySummary& summary, std::size_t live_lines = 10);

// `,"memory":{...}` for the summary file (nothing when memory was not profiled).
void write_memory_summary_json(const Trace& trace, const MemorySummary& summary, JsonWriter& w);

}  // namespace profagent::exporters
