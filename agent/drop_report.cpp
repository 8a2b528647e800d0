#include "agent/drop_report.h"

#include <atomic>

#include "agent/lifecycle.h"
#include "agent/log.h"

namespace profagent::agent {
namespace {

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::string host_drops_line(const DropCounters& drops) {
  if (drops.host_events == 0) return {};
  const std::string count = std::to_string(drops.host_events) + " host events dropped: ";
  if (!drops.address_space_limited()) {
    return count + "the thread buffers were full (raise PROFAGENT_BUFFER_MB)";
  }
  return count + "the address space limit (ulimit -v, RLIMIT_AS) left room for " +
         mib(drops.host_buffer_reserved_bytes) + " of the " + mib(drops.host_buffer_requested_bytes) +
         " of PROFAGENT_BUFFER_MB (raise the limit; a larger PROFAGENT_BUFFER_MB cannot help)";
}

std::string late_records_line(const Trace& trace) {
  const uint64_t late = trace.drops.late_device_records;
  if (late == 0) return {};
  const uint64_t waited_ms = trace.join_wait_ns / 1'000'000;
  return std::to_string(late) + (late == 1 ? " device record" : " device records") +
         " of this window had not come after waiting " + std::to_string(waited_ms) +
         " ms for the device (PROFAGENT_WINDOW_WAIT_MS): counted in profagent_drops.late_device_records, "
         "dropped when they come";
}

std::string left_out_line(const DropCounters& drops) {
  if (drops.left_out_host_events == 0 && drops.left_out_device_records == 0) return {};
  return std::to_string(drops.left_out_host_events) + " host events and " + std::to_string(drops.left_out_device_records) +
         " device records left out: writing the whole window needs about " + mib(drops.memory_needed_bytes) +
         ", the memory limit (ulimit -v or -d) leaves " + mib(drops.memory_room_bytes) +
         "; the trace has the window's earliest part (profagent_drops.left_out_host_events)";
}

// The user's own limits (PROFAGENT_MAX_EVENTS, PROFAGENT_MIN_DURATION_US): said once per
// process, at the first window they cut short; every trace has its own counts.
void say_size_limits_once(const Trace& trace, const std::string& prefix) {
  static std::atomic<bool> said_max{false}, said_min{false};
  const DropCounters& drops = trace.drops;
  if (drops.over_max_events != 0 && !said_max.exchange(true)) {
    log(LogLevel::Warn, prefix + "PROFAGENT_MAX_EVENTS: recording stopped after the window's first " +
                            std::to_string(config().max_events) + " host events; " +
                            std::to_string(drops.over_max_events) + " host events and " +
                            std::to_string(drops.over_max_events_device_records) +
                            " device records after them left out (profagent_drops.over_max_events; said once)");
  }
  if (drops.shorter_than_min_duration != 0 && !said_min.exchange(true)) {
    log(LogLevel::Warn, prefix + std::to_string(drops.shorter_than_min_duration) + " host events shorter than " +
                            std::to_string(config().min_duration_us) +
                            " us left out (PROFAGENT_MIN_DURATION_US; profagent_drops.shorter_than_min_duration; "
                            "said once)");
  }
}

void report_drops(const Trace& trace, const std::string& prefix) {
  say_size_limits_once(trace, prefix);
  const DropCounters& drops = trace.drops;
  if (drops.host_events != 0) log(LogLevel::Warn, prefix + host_drops_line(drops));
  if (drops.device_records != 0) {
    log(LogLevel::Warn, prefix + std::to_string(drops.device_records) + " device records dropped by CUPTI");
  }
  if (trace.memory.dropped_records != 0) {
    log(LogLevel::Warn, prefix + std::to_string(trace.memory.dropped_records) +
                            " allocation records dropped beyond the window's " +
                            std::to_string(trace.memory.record_capacity) +
                            " (the totals stay exact; a quarter of PROFAGENT_BUFFER_MB holds them): counted in "
                            "profagent_drops.memory_records");
  }
  const std::string left_out = left_out_line(drops);
  if (!left_out.empty()) log(LogLevel::Warn, prefix + left_out);
  const std::string late = late_records_line(trace);
  if (!late.empty()) log(LogLevel::Warn, prefix + late);
}

}  // namespace profagent::agent
