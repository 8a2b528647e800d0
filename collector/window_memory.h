// Fitting a window into the memory left to write it. Joining a window turns each 48-byte host
// event into a HostRecord with its names (about 210 bytes), and the writers add their indexes:
// under a memory limit (`ulimit -v`, `ulimit -d`) a large window could fail halfway and be lost.
// Before the join, the window's cost is estimated from its counts; when it exceeds the room
// left (collector/memory_room.h), the window keeps its earliest part — every event that ended
// by one time, on every thread, and the device work that started by then — and the rest is left
// out and counted (DropCounters::left_out_*), so that what fits is written.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/clock.h"
#include "collector/thread_buffer.h"
#include "collector/trace.h"

namespace profagent::collector {

// Address space the join and the writers add per host event and per device record, beyond the
// events already drained and the records already claimed when the estimate is made: a
// HostRecord (104 bytes now; 200 when this was measured, kept as a margin) and a share of its
// names and indexes. Measured under `ulimit -v` (the room left before and after the join of
// 600,000 calls: 200 bytes each); the whole window end
// costs about 360 bytes of resident memory per host event (tests/bench/window_memory_bench.py),
// 96 of them held before the join (the event buffer and the drained copy). kJoinReserveBytes
// stays free for the writers' buffers and what the program allocates meanwhile.
inline constexpr uint64_t kJoinBytesPerHostEvent = 216;
inline constexpr uint64_t kJoinBytesPerDeviceRecord = 100;
inline constexpr uint64_t kJoinReserveBytes = uint64_t(8) << 20;

// What a window costs, from its counts of host events and device records.
using WindowCost = uint64_t (*)(uint64_t host_events, uint64_t device_records);

// The latest time (ticks) whose earlier part of the window — the host events that ended by
// then, the device records that started by then — costs at most `budget`.
uint64_t latest_time_within(const std::vector<ThreadEvents>& threads, const std::vector<DeviceRecord>& device,
                            const clock::TickConverter& converter, uint64_t budget, WindowCost cost);

// Removes the host events that ended after `cut` (ticks) and the device records that started
// after it; returns how many of each.
struct LeftOut {
  uint64_t host_events = 0;
  uint64_t device_records = 0;
};
LeftOut leave_out_after(uint64_t cut, std::vector<ThreadEvents>& threads, std::vector<DeviceRecord>& device,
                        const clock::TickConverter& converter);

// Trims `threads` and `device` to what fits in `room` bytes (SIZE_MAX: no limit, nothing is
// trimmed) and fills the left_out_* and memory_* counters of `drops`.
void fit_window_in_memory(std::vector<ThreadEvents>& threads, std::vector<DeviceRecord>& device,
                          const clock::TickConverter& converter, uint64_t room, DropCounters& drops);

}  // namespace profagent::collector
