// What profagent itself costs, measured for every window's overhead line and profagent track
// (collector/trace.h AgentCost; the line: exporters/summaries/overhead_line.h):
//   - on the program's threads: its hooked calls times the cost of recording one, measured
//     once on an agent thread (hooks/record_cost.h), and the time step boundaries held them;
//   - on the agent's own threads: their CPU time between the window's edges, and their work
//     as named slices (joining a window, writing its files, polling the device);
//   - memory: the host event buffers' committed chunks and the window's joined form.
// Nothing here runs on a hooked call: boundaries take two clock reads, the rest runs on agent
// threads or in the exit flush.
#pragma once

#include <cstdint>

#include "collector/trace.h"

namespace profagent::agent {

// Measures the record cost once (later calls return at once); on an agent thread, at its start.
void measure_record_cost() noexcept;

// Measures CUPTI's cost per traced CUDA call once (collector/cupti_call_cost.h), once the device
// backend started; later calls return at once. Only from the device poller: a window written
// before that waits for it (briefly, once), as the thread writing it may not make the probe's
// CUPTI calls (collector/session.h measure_device_call_cost).
void measure_cupti_cost() noexcept;
// Measured, or known not to be measurable (host-only, a CUPTI without the switches).
bool cupti_cost_settled() noexcept;

// One piece of the agent's own work, from construction to destruction, kept as a slice for the
// next window written (at most kMaxAgentSlices per window; beyond that only counted). Named
// by a string literal and, when not 0, a number ("write window" 2: "write window 2"). Nothing
// is allocated: a thread's first malloc gives it an arena of its own (64 MiB of address space,
// agent/threads.cpp), which the device poller never otherwise takes.
class AgentWork {
 public:
  explicit AgentWork(const char* name, uint32_t number = 0) noexcept;
  ~AgentWork();
  // The work turned out to be nothing (a check that found nothing to do): no slice is kept.
  void forget() noexcept { name_ = nullptr; }
  AgentWork(const AgentWork&) = delete;
  AgentWork& operator=(const AgentWork&) = delete;

 private:
  const char* name_;
  uint32_t number_;
  uint64_t start_;  // agent clock ticks
};

// A step boundary held the program's thread for `ns` (added to the process's total).
void note_boundary(uint64_t ns) noexcept;

// The process's running totals at a window edge; a window's figures are the difference of
// the marks at its two edges.
struct CostMark {
  uint64_t boundary_ns = 0;
  uint64_t agent_cpu_ns = 0;
};
CostMark cost_mark() noexcept;

// Fills trace.agent_cost for a window that began at `from` and was cut at `to`, with the
// slices of the agent's work since the previous window was written (its own join included).
void attach_agent_cost(Trace& trace, const CostMark& from, const CostMark& to) noexcept;

}  // namespace profagent::agent
