#include "collector/window_limits.h"

#include <algorithm>
#include <unordered_set>

#include "collector/device_pool.h"
#include "collector/window_memory.h"

namespace profagent::collector {
namespace {

// Calls that are only host time; the others (allocations, steps, stack tags) are not shortened
// away: they carry bookkeeping the join needs.
bool may_be_too_short(const HostEvent& event) {
  switch (EventKind(event.kind)) {
    case EventKind::Launch:
    case EventKind::GraphLaunch:
    case EventKind::Memcpy:
    case EventKind::Memset:
    case EventKind::Sync:
    case EventKind::Runtime:
    case EventKind::Operator:
    case EventKind::Range: return !expects_device_work(event);
    default: return false;
  }
}

// Ids of host events device records name as their External id: kept whatever their length.
std::unordered_set<uint64_t> linked_ids(const std::vector<DeviceRecord>& device) {
  std::unordered_set<uint64_t> ids;
  for (const DeviceRecord& record : device) {
    if (record.external_id != 0) ids.insert(record.external_id);
  }
  return ids;
}

void leave_out_short_events(uint64_t min_ns, std::vector<ThreadEvents>& threads, const std::vector<DeviceRecord>& device,
                            const clock::TickConverter& converter, DropCounters& drops) {
  const std::unordered_set<uint64_t> linked = linked_ids(device);
  for (ThreadEvents& thread : threads) {
    std::unordered_set<uint64_t> left_out;  // their stack tags go with them
    for (const HostEvent& event : thread.events) {
      if (!may_be_too_short(event) || linked.count(event.id) != 0) continue;
      if (converter.to_ns(event.end) - converter.to_ns(event.start) < min_ns) left_out.insert(event.id);
    }
    if (left_out.empty()) continue;
    const auto kept_end = std::remove_if(thread.events.begin(), thread.events.end(), [&](const HostEvent& event) {
      return left_out.count(event.id) != 0;
    });
    drops.shorter_than_min_duration += left_out.size();
    thread.events.erase(kept_end, thread.events.end());
  }
}

uint64_t host_events_only(uint64_t host_events, uint64_t) { return host_events; }

void keep_earliest_events(uint64_t max_events, std::vector<ThreadEvents>& threads, std::vector<DeviceRecord>& device,
                          const clock::TickConverter& converter, DropCounters& drops) {
  uint64_t host_events = 0;
  for (const ThreadEvents& thread : threads) {
    for (const HostEvent& event : thread.events) host_events += EventKind(event.kind) != EventKind::StackTag;
  }
  if (host_events <= max_events) return;
  const uint64_t cut = latest_time_within(threads, device, converter, max_events, host_events_only);
  const LeftOut left = leave_out_after(cut, threads, device, converter);
  drops.over_max_events += left.host_events;
  drops.over_max_events_device_records += left.device_records;
}

}  // namespace

void apply_window_limits(const WindowLimits& limits, std::vector<ThreadEvents>& threads,
                         std::vector<DeviceRecord>& device, const clock::TickConverter& converter,
                         DropCounters& drops, uint64_t kept_before) {
  if (limits.min_duration_ns != 0) leave_out_short_events(limits.min_duration_ns, threads, device, converter, drops);
  if (limits.max_events != 0) {
    const uint64_t room = limits.max_events > kept_before ? limits.max_events - kept_before : 0;
    keep_earliest_events(room, threads, device, converter, drops);
  }
}

}  // namespace profagent::collector
