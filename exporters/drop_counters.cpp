#include "exporters/drop_counters.h"

#include <iterator>

#include "exporters/field_writer.h"

namespace profagent::exporters {
namespace {

using schema::Field;
using schema::FieldType;

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// A member of Trace::drops, written and read back as it is.
template <auto Member>
constexpr Field<Trace> counter(std::string_view key) {
  using T = typename schema::MemberOf<decltype(Member)>::Type;
  return {key, schema::field<Member>(key).type, [](const Trace& t) { return int64_t(t.drops.*Member); },
          [](Trace& t, int64_t v) { t.drops.*Member = T(v); }};
}

// A full buffer (raise PROFAGENT_BUFFER_MB) or an address-space limit (RLIMIT_AS, `ulimit -v`),
// under which a larger buffer only makes things worse: it asks for more of what is short.
std::string host_events_line(const Trace& t, const DropLineFacts&) {
  const DropCounters& d = t.drops;
  if (d.host_events == 0) return {};
  const std::string count = std::to_string(d.host_events) + " host events dropped: ";
  if (!d.address_space_limited()) return count + "the thread buffers were full (raise PROFAGENT_BUFFER_MB)";
  return count + "the address space limit (ulimit -v, RLIMIT_AS) left room for " + mib(d.host_buffer_reserved_bytes) +
         " of the " + mib(d.host_buffer_requested_bytes) +
         " of PROFAGENT_BUFFER_MB (raise the limit; a larger PROFAGENT_BUFFER_MB cannot help)";
}

std::string device_records_line(const Trace& t, const DropLineFacts&) {
  if (t.drops.device_records == 0) return {};
  return std::to_string(t.drops.device_records) + " device records dropped by CUPTI";
}

// Records that had not come within PROFAGENT_WINDOW_WAIT_MS are dropped when they come, never
// put into another window.
std::string late_records_line(const Trace& t, const DropLineFacts&) {
  const uint64_t late = t.drops.late_device_records;
  if (late == 0) return {};
  return std::to_string(late) + (late == 1 ? " device record" : " device records") +
         " of this window had not come after waiting " + std::to_string(t.join_wait_ns / 1'000'000) +
         " ms for the device (PROFAGENT_WINDOW_WAIT_MS): counted in profagent_drops.late_device_records, "
         "dropped when they come";
}

// Lines lost while stderr was still the process's own (the logger out of memory, a write error);
// with stderr replaced, only the trace can say it.
std::string log_lines_line(const Trace& t, const DropLineFacts&) {
  if (t.drops.log_lines == 0 || t.drops.stderr_replaced) return {};
  return std::to_string(t.drops.log_lines) + " agent messages were not printed (no memory or a write error)";
}

std::string shape_records_line(const Trace& t, const DropLineFacts& facts) {
  if (t.drops.shape_records == 0) return {};
  return std::to_string(t.drops.shape_records) + " operators recorded without their input shapes: the " +
         std::to_string(facts.shape_store_bytes >> 10) + " KiB shape store was full or a tensor had more than " +
         std::to_string(facts.max_shape_rank) +
         " dimensions (raise PROFAGENT_BUFFER_MB: a quarter of it keeps shapes)";
}

std::string collective_args_line(const Trace& t, const DropLineFacts&) {
  if (t.drops.collective_args == 0) return {};
  return std::to_string(t.drops.collective_args) +
         " NCCL calls recorded without their communication arguments: too many calls were waiting for a window's "
         "end (a window that never ends while NCCL calls keep coming)";
}

std::string stacks_line(const Trace& t, const DropLineFacts&) {
  const DropCounters& d = t.drops;
  if (d.stacks_truncated == 0 && d.stacks_lost == 0 && d.python_frames_lost == 0) return {};
  return "call stacks: " + std::to_string(d.stacks_truncated) +
         " stopped before the thread's first frame (code without unwind info, or a signal during an unwind: the "
         "frames found are kept), " +
         std::to_string(d.stacks_lost) + " calls without a stack (the stack table was full), " +
         std::to_string(d.python_frames_lost) + " Python frames left out (unreadable, or too many code objects)";
}

// The totals stay exact: only the per-allocation records beyond the capacity are dropped.
std::string memory_records_line(const Trace& t, const DropLineFacts&) {
  if (t.memory.dropped_records == 0) return {};
  return std::to_string(t.memory.dropped_records) + " allocation records dropped beyond the window's " +
         std::to_string(t.memory.record_capacity) +
         " (the totals stay exact; a quarter of PROFAGENT_BUFFER_MB holds them): counted in "
         "profagent_drops.memory_records";
}

// A window whose join and writing would not fit in the memory its limits leave has its latest
// host events and device records left out, so that what fits is written.
std::string left_out_line(const Trace& t, const DropLineFacts&) {
  const DropCounters& d = t.drops;
  if (d.left_out_host_events == 0 && d.left_out_device_records == 0) return {};
  return std::to_string(d.left_out_host_events) + " host events and " + std::to_string(d.left_out_device_records) +
         " device records left out: writing the whole window needs about " + mib(d.memory_needed_bytes) +
         ", the memory limit (ulimit -v or -d) leaves " + mib(d.memory_room_bytes) +
         "; the trace has the window's earliest part (profagent_drops.left_out_host_events)";
}

// A setting's effective value, as the trace carries it (Trace::config), or "?" without one.
std::string config_value(const Trace& t, std::string_view name) {
  for (const auto& [key, value] : t.config) {
    if (key == name) return value;
  }
  return "?";
}

// The user's own size limits (collector/window_limits.h): said once per process, at the first
// window they cut short; every trace has its own counts.
std::string max_events_line(const Trace& t, const DropLineFacts&) {
  const DropCounters& d = t.drops;
  if (d.over_max_events == 0 && d.over_max_events_device_records == 0) return {};
  return "PROFAGENT_MAX_EVENTS: the window keeps its first " + config_value(t, "PROFAGENT_MAX_EVENTS") +
         " host events; " + std::to_string(d.over_max_events) + " host events and " +
         std::to_string(d.over_max_events_device_records) +
         " device records after them left out (profagent_drops.over_max_events; said once)";
}

std::string min_duration_line(const Trace& t, const DropLineFacts&) {
  const uint64_t short_events = t.drops.shorter_than_min_duration;
  if (short_events == 0) return {};
  return std::to_string(short_events) + " host events shorter than " + config_value(t, "PROFAGENT_MIN_DURATION_US") +
         " us left out (PROFAGENT_MIN_DURATION_US; profagent_drops.shorter_than_min_duration; said once)";
}

// CUDA graph replays whose node was made while nothing was recorded (or that the capture-time
// map could not keep) are attributed to their cudaGraphLaunch, as without the map.
std::string graph_replays_line(const Trace& t, const DropLineFacts&) {
  const uint64_t unknown = t.drops.graph_replays_without_capture;
  if (unknown == 0) return {};
  return std::to_string(unknown) +
         " device records of CUDA graph replays are attributed to their cudaGraphLaunch, not to the operator or "
         "range open at their capture: the graph was captured while nothing was recorded "
         "(profagent_drops.graph_replays_without_capture; said once)";
}

std::string graph_nodes_line(const Trace& t, const DropLineFacts&) {
  const uint64_t lost = t.drops.graph_nodes_not_kept;
  if (lost == 0) return {};
  return std::to_string(lost) +
         " CUDA graph nodes not kept in the capture-time map (it was full): their replays are attributed to their "
         "cudaGraphLaunch (profagent_drops.graph_nodes_not_kept; said once)";
}

using enum DropSaid;

// The order is the trace's (kept byte for byte); stderr says the lines in the same order.
constexpr DropCounter kDropCounters[] = {
    {counter<&DropCounters::host_events>("host_events"), EachWindow, host_events_line},
    {counter<&DropCounters::device_records>("device_records"), EachWindow, device_records_line},
    {counter<&DropCounters::late_device_records>("late_device_records"), EachWindow, late_records_line},
    {counter<&DropCounters::unmatched_device_records>("unmatched_device_records"), Kept},
    {{"host_events_cause", FieldType::Text, nullptr, nullptr,
      [](const Trace& t) { return std::string_view(host_drop_cause(t.drops)); }},
     InAnotherLine},
    {counter<&DropCounters::host_buffer_requested_bytes>("host_buffer_requested_bytes"), InAnotherLine},
    {counter<&DropCounters::host_buffer_reserved_bytes>("host_buffer_reserved_bytes"), InAnotherLine},
    {counter<&DropCounters::log_lines>("log_lines"), OncePerProcess, log_lines_line},
    {counter<&DropCounters::stderr_replaced>("stderr_replaced"), InAnotherLine},
    // Said by the agent at the first such call (hooks/call_as_caller.h counts them).
    {counter<&DropCounters::plain_dlopen_calls>("plain_dlopen_calls"), BySource},
    {counter<&DropCounters::shape_records>("shape_records"), OncePerProcess, shape_records_line},
    {counter<&DropCounters::collective_args>("collective_args"), OncePerProcess, collective_args_line},
    {counter<&DropCounters::stacks_truncated>("stacks_truncated"), OncePerProcess, stacks_line},
    {counter<&DropCounters::stacks_lost>("stacks_lost"), InAnotherLine},
    {counter<&DropCounters::python_frames_lost>("python_frames_lost"), InAnotherLine},
    // Said by the PROFAGENT_STEP_ON=time:MS timer itself, at the first period it missed.
    {counter<&DropCounters::timer_periods_missed>("timer_periods_missed"), BySource},
    {{"memory_records", FieldType::Unsigned, [](const Trace& t) { return int64_t(t.memory.dropped_records); },
      [](Trace& t, int64_t v) { t.memory.dropped_records = uint64_t(v); }},
     EachWindow,
     memory_records_line},
    {counter<&DropCounters::left_out_host_events>("left_out_host_events"), EachWindow, left_out_line},
    {counter<&DropCounters::left_out_device_records>("left_out_device_records"), InAnotherLine},
    {counter<&DropCounters::memory_room_bytes>("memory_room_bytes"), InAnotherLine},
    {counter<&DropCounters::memory_needed_bytes>("memory_needed_bytes"), InAnotherLine},
    {counter<&DropCounters::shorter_than_min_duration>("shorter_than_min_duration"), OncePerProcess, min_duration_line},
    {counter<&DropCounters::over_max_events>("over_max_events"), OncePerProcess, max_events_line},
    {counter<&DropCounters::over_max_events_device_records>("over_max_events_device_records"), InAnotherLine},
    {counter<&DropCounters::graph_replays_without_capture>("graph_replays_without_capture"), OncePerProcess,
     graph_replays_line},
    {counter<&DropCounters::graph_nodes_not_kept>("graph_nodes_not_kept"), OncePerProcess, graph_nodes_line},
};

static_assert(std::size(kDropCounters) <= kMaxDropCounters);

}  // namespace

std::span<const DropCounter> drop_counters() { return kDropCounters; }

void write_drop_counters(const Trace& trace, JsonWriter& w) {
  w.raw("{");
  for (std::size_t i = 0; i < std::size(kDropCounters); ++i) {
    if (i > 0) w.raw(",");
    write_field(kDropCounters[i].field, trace, w);
  }
  w.raw("}");
}

}  // namespace profagent::exporters
