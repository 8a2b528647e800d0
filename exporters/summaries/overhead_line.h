// The overhead line under every window's table (the exit table, <stem>.table.txt,
// <stem>.summary.txt and `profagent report`), one definition for all of them:
//   profagent overhead: ~X ms on the program's threads (Y % of the window)[, of which ~C ms CUPTI], Z ms on its own threads, W MiB
// X: the window's hooked calls times one recorded call's cost (measured at start-up), plus its
// CUDA calls times CUPTI's cost per traced call (C, measured once per process with device
// tracing on: collector/cupti_call_cost.h; the clause is left out host-only, and says "CUPTI's
// share is not measured" when no figure could be had), plus the time step boundaries held the
// program; Y: X against the window's span; Z: CPU time of the
// agent's threads between the window's edges; W: host event buffers and the joined window held.
// Lost records, when any, follow ("; N records lost": profagent_drops says which).
#pragma once

#include <string>

#include "collector/trace.h"

namespace profagent::exporters {

// The line with its newline; "" for a trace without the agent's cost (another tool's).
std::string overhead_line(const Trace& trace);

}  // namespace profagent::exporters
