// What CUPTI itself costs the thread of each traced CUDA call: its callback dispatch, the API
// and external correlation records it writes inside the call, and the external id's push and
// pop around it (the hooks' part of device tracing). No clock of the agent sees that work on
// the program's threads, so it is measured once, on an agent thread, by making traced calls
// of its own: N calls of cuDriverGetVersion (no context, no side effect) between a pushed and
// popped external id, against the same N calls with CUPTI's callback and DRIVER records
// switched off for that one function. The difference per call is CUPTI's cost per traced call;
// the overhead line multiplies it by the window's recorded CUDA calls (exporters/summaries/
// overhead_line.h).
//
// Not measured: the kernel instrumentation NVIDIA's CUPTI adds to each launch (measuring it
// would mean launching work), and calls CUPTI dispatches that no trace records (the runtime's
// internal driver calls, the calls left out of traces). So the figure is a floor for launches.
//
// The agent's own calls never reach a trace: its callback records nothing while the agent is
// busy, the parser skips RUNTIME records, a DRIVER record becomes a call only when it enqueued
// device work, and the pushed id (kProbeExternalId) is no event's id.
#pragma once

#include <cupti.h>

#include <cstdint>

#include "collector/cupti_api.h"

namespace profagent::collector {

// The external id pushed around the probe's calls: event ids count up from 1 and never reach it.
inline constexpr uint64_t kProbeExternalId = ~uint64_t{0} - 1;

// How the probe switches CUPTI's work off and on for its one function, and whether the switch
// state stayed as it was throughout (set_activity may switch the whole domain meanwhile).
struct CuptiProbeSwitch {
  const CuptiApi* api = nullptr;
  CUpti_SubscriberHandle subscriber = nullptr;
  bool driver_records = false;  // DRIVER activity records are on: switch them for the function too
};

struct CuptiCallCost {
  bool measured = false;
  uint64_t traced_ps = 0;  // one call with CUPTI's work, per call
  uint64_t bare_ps = 0;    // the same call with it switched off
  uint64_t cost_ps() const noexcept { return traced_ps > bare_ps ? traced_ps - bare_ps : 0; }
};

// Runs the probe on the calling thread (an agent thread with AgentBusy set; no agent lock held:
// it calls CUDA and CUPTI). `measured` false when libcuda is not loaded, CUPTI lacks the
// per-function switches or refused one. It leaves the function's callback and records on.
CuptiCallCost measure_cupti_call_cost(const CuptiProbeSwitch& probe) noexcept;

// Switches CUPTI's callback (and records, when `driver_records`) for the probe's function.
bool switch_probe_function(const CuptiProbeSwitch& probe, bool on) noexcept;

}  // namespace profagent::collector
