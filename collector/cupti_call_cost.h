// What CUPTI itself costs the thread of each traced CUDA call: its callback dispatch, the API and
// external correlation records it writes inside the call, and the external id's push and pop
// around it (the hooks' part of device tracing). No clock of the agent sees that work on the
// program's threads, so it is measured once, on the device poller's thread, by making traced
// calls of its own: N calls of cuDriverGetVersion (no context, no side effect) between a pushed
// and popped external id, with CUPTI's callback, DRIVER records and external correlation records
// on for that one function, against the same N calls with them off. The difference per call is
// CUPTI's cost per traced call; the overhead line multiplies it by the window's CUDA calls
// (exporters/summaries/overhead_line.h).
//
// Not measured: the kernel instrumentation NVIDIA's CUPTI adds to each launch (measuring it
// would mean launching work), and calls CUPTI dispatches that no trace records (the runtime's
// internal driver calls, the calls left out of traces). So the figure is a floor for launches.
//
// The agent's own calls never reach a trace: its callback records nothing while the agent is
// busy, a DRIVER record becomes a call only when it enqueued device work, and the pushed id
// (kProbeExternalId) is no event's id. They do advance CUPTI's process-wide correlation ids.
#pragma once

#include <cupti.h>

#include <cstdint>

#include "collector/cupti_api.h"

namespace profagent::collector {

// The external id pushed around the probe's calls: event ids count up from 1 and never reach it.
inline constexpr uint64_t kProbeExternalId = ~uint64_t{0} - 1;

// What the probe's function has switched on when the probe starts, which it restores at the end.
struct CuptiProbeSwitch {
  const CuptiApi* api = nullptr;
  CUpti_SubscriberHandle subscriber = nullptr;
  bool callback_on = false;          // the driver API domain's callbacks are on (recording)
  bool driver_records_on = false;    // DRIVER activity records are on
  bool external_records_on = false;  // EXTERNAL_CORRELATION activity records are on
};

struct CuptiCallCost {
  bool measured = false;
  const char* unavailable = nullptr;  // not measured, and never will be: why
  uint64_t traced_ps = 0;  // one call with CUPTI's work, per call
  uint64_t bare_ps = 0;    // the same call with it switched off
  uint64_t cost_ps() const noexcept { return traced_ps > bare_ps ? traced_ps - bare_ps : 0; }
};

// Runs the probe on the calling thread (an agent thread with AgentBusy set; no agent lock held:
// it calls CUDA and CUPTI), whatever the device's state: for the probe's one function it switches
// on what recording switches on (its callback, its DRIVER records, and the external correlation
// records if they are off: only calls whose API records are on get them, so no other call does),
// then off, then back as `probe` says they were. Not `measured`, with `unavailable` saying why,
// when there is no driver library or CUPTI lacks or refuses the per-function switches.
CuptiCallCost measure_cupti_call_cost(const CuptiProbeSwitch& probe) noexcept;

// Sets the probe's function back as `probe` says it was (after a probe another switch overlapped).
void restore_probe_function(const CuptiProbeSwitch& probe) noexcept;

}  // namespace profagent::collector
