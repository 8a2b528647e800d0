// Size limits a user sets on every window (PROFAGENT_MIN_DURATION_US, PROFAGENT_MAX_EVENTS),
// applied to a cut window after its device records were claimed and before its join:
//
// - min duration: host calls, operators and ranges shorter than it are left out — except those
//   that device work is linked to (a launch, copy or set that issued work; an operator or range
//   that is the External id of a claimed record): the window keeps every device record, linked.
//   Counted in DropCounters::shorter_than_min_duration.
// - max events: the window keeps its earliest host events, at most that many — every event
//   that ended by one time, on every thread — and the device work that started by then
//   (as a window under a memory limit does, collector/window_memory.h). What is left out is
//   counted in DropCounters::over_max_events and ::over_max_events_device_records.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/clock.h"
#include "collector/thread_buffer.h"
#include "collector/trace.h"

namespace profagent::collector {

struct WindowLimits {
  uint64_t max_events = 0;       // 0: no limit
  uint64_t min_duration_ns = 0;  // 0: no limit
};

// `kept_before`: host events of the same window already kept (a streamed window's earlier
// segments, collector/segment_stream.h): max events counts them, so a window streamed in
// segments keeps as many as it would whole (none more once they reach it).
void apply_window_limits(const WindowLimits& limits, std::vector<ThreadEvents>& threads,
                         std::vector<DeviceRecord>& device, const clock::TickConverter& converter,
                         DropCounters& drops, uint64_t kept_before = 0);

}  // namespace profagent::collector
