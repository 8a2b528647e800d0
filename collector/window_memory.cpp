#include "collector/window_memory.h"

#include <algorithm>

namespace profagent::collector {
namespace {

uint64_t host_events_ended_by(const std::vector<ThreadEvents>& threads, uint64_t ticks) {
  uint64_t kept = 0;
  for (const ThreadEvents& thread : threads) {
    for (const HostEvent& event : thread.events) kept += event.end <= ticks;
  }
  return kept;
}

uint64_t device_records_started_by(const std::vector<DeviceRecord>& device, uint64_t ns) {
  uint64_t kept = 0;
  for (const DeviceRecord& record : device) kept += record.start_ns <= ns;
  return kept;
}

uint64_t cost(uint64_t host_events, uint64_t device_records) {
  return host_events * kJoinBytesPerHostEvent + device_records * kJoinBytesPerDeviceRecord;
}

}  // namespace

// A binary search over the window's span; counting is linear, but this runs only for a window
// that does not fit.
uint64_t latest_time_within(const std::vector<ThreadEvents>& threads, const std::vector<DeviceRecord>& device,
                            const clock::TickConverter& converter, uint64_t budget, WindowCost cost) {
  uint64_t low = UINT64_MAX, high = 0;
  for (const ThreadEvents& thread : threads) {
    for (const HostEvent& event : thread.events) low = std::min(low, event.start), high = std::max(high, event.end);
  }
  if (low > high) return 0;
  if (low > 0) --low;  // nothing ended by `low`: it always fits
  while (high - low > 1) {
    const uint64_t middle = low + (high - low) / 2;
    const uint64_t needed = cost(host_events_ended_by(threads, middle), device_records_started_by(device, converter.to_ns(middle)));
    (needed <= budget ? low : high) = middle;
  }
  return low;
}

LeftOut leave_out_after(uint64_t cut, std::vector<ThreadEvents>& threads, std::vector<DeviceRecord>& device,
                        const clock::TickConverter& converter) {
  LeftOut left;
  for (ThreadEvents& thread : threads) {
    const auto later = std::remove_if(thread.events.begin(), thread.events.end(),
                                      [cut](const HostEvent& event) { return event.end > cut; });
    left.host_events += uint64_t(thread.events.end() - later);
    thread.events.erase(later, thread.events.end());
  }
  const uint64_t cut_ns = converter.to_ns(cut);
  const auto later = std::remove_if(device.begin(), device.end(), [cut_ns](const DeviceRecord& r) { return r.start_ns > cut_ns; });
  left.device_records = uint64_t(device.end() - later);
  device.erase(later, device.end());
  return left;
}

void fit_window_in_memory(std::vector<ThreadEvents>& threads, std::vector<DeviceRecord>& device,
                          const clock::TickConverter& converter, uint64_t room, DropCounters& drops) {
  uint64_t host_events = 0;
  for (const ThreadEvents& thread : threads) host_events += thread.events.size();
  drops.memory_needed_bytes = cost(host_events, device.size());
  if (room == SIZE_MAX) return;
  drops.memory_room_bytes = room;
  // Some room stays for the writers' buffers and what the program allocates meanwhile (the
  // join runs beside it).
  const uint64_t budget = room > kJoinReserveBytes ? room - kJoinReserveBytes : 0;
  if (drops.memory_needed_bytes <= budget) return;
  const uint64_t cut = latest_time_within(threads, device, converter, budget, cost);
  const LeftOut left = leave_out_after(cut, threads, device, converter);
  drops.left_out_host_events += left.host_events;
  drops.left_out_device_records = left.device_records;
}

}  // namespace profagent::collector
