// The agent's only contact with the collector's session (collector/session.h): start
// recording with the configuration, count steps, freeze the final window. Kept apart so the
// lifecycle reads as a lifecycle.
#pragma once

#include "agent/config.h"
#include "collector/trace.h"

namespace profagent::agent {

// Starts buffers, the clock and the session (the device backend starts lazily at the first
// CUDA use). False: the collector could not start; the agent stays a pass-through.
bool start_collector(const Config& config) noexcept;

void count_step() noexcept;

// Stops recording and freezes everything recorded so far into `trace`. False on failure.
bool freeze_final_window(Trace& trace) noexcept;

}  // namespace profagent::agent
