// What recording one hooked call costs the thread that makes it, measured by running the
// recording steps of hooks/hook.h (the hook's loads, guard, event id, clock reads, the real
// call through a pointer, filling and publishing a buffer slot) in a loop on the calling
// thread. With device tracing on, the external correlation id's push and pop are CUPTI's work
// and are not measured (the calibration never calls CUPTI). The agent
// calls it once, on its own thread, so that the overhead line of every window (hooked calls x
// this cost) needs no timer on the program's threads.
#pragma once

#include <cstdint>

namespace profagent::hooks {

// Picoseconds per recorded call: the least of a few batches' thread CPU time (the others were
// interrupted). Writes only into a private slot array: nothing reaches the thread's buffer.
// 0 when the thread's CPU clock cannot be read.
uint64_t measure_record_cost_ps() noexcept;

}  // namespace profagent::hooks
