// The top-level members of a trace other than its events (event_reader.h: read_metadata).
#include <simdjson.h>

#include "agent/report/event_reader.h"

namespace profagent::report {
namespace {

namespace od = simdjson::ondemand;

template <typename T>
void number(od::value v, T& out) {
  int64_t i = 0;
  if (v.get_int64().get(i) == simdjson::SUCCESS) {
    out = T(i);
    return;
  }
  uint64_t u = 0;
  if (v.get_uint64().get(u) == simdjson::SUCCESS) out = T(u);
}

void text(od::value v, std::string& out) {
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) out = s;
}

void flag(od::value v, bool& out) {
  bool b = false;
  if (v.get_bool().get(b) == simdjson::SUCCESS) out = b;
}

void device_property(std::string_view key, od::value v, DeviceInfo& d) {
  if (key == "id") number(v, d.id);
  else if (key == "name") text(v, d.name);
  else if (key == "totalGlobalMem") number(v, d.total_global_mem);
  else if (key == "computeMajor") number(v, d.compute_major);
  else if (key == "computeMinor") number(v, d.compute_minor);
  else if (key == "maxThreadsPerBlock") number(v, d.max_threads_per_block);
  else if (key == "maxThreadsPerMultiprocessor") number(v, d.max_threads_per_multiprocessor);
  else if (key == "regsPerBlock") number(v, d.regs_per_block);
  else if (key == "warpSize") number(v, d.warp_size);
  else if (key == "sharedMemPerBlock") number(v, d.shared_mem_per_block);
  else if (key == "numSms") number(v, d.num_sms);
  else if (key == "regsPerMultiprocessor") number(v, d.regs_per_multiprocessor);
  else if (key == "sharedMemPerBlockOptin") number(v, d.shared_mem_per_block_optin);
  else if (key == "sharedMemPerMultiprocessor") number(v, d.shared_mem_per_multiprocessor);
}

// Calls fn(key, value) for every member of an object value; nothing when it is not one.
template <typename Fn>
void members(od::value v, Fn&& fn) {
  od::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return;
  for (auto field : o) {
    std::string_view key;
    od::value value;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS || field.value().get(value) != simdjson::SUCCESS) return;
    fn(key, value);
  }
}

void device_properties(od::value v, Trace& t) {
  od::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) return;
  for (auto element : a) {
    od::value e;
    if (element.get(e) != simdjson::SUCCESS) return;
    DeviceInfo& d = t.devices.emplace_back();
    members(e, [&](std::string_view key, od::value value) { device_property(key, value, d); });
  }
}

// Agent clock values are written as Unix ns; the loaded trace counts ns from baseTimeNanoseconds.
// `ns` stays Unix ns here; read_metadata() subtracts the base time once it is known.
void cpu_times(od::value v, CpuTimes& c) {
  c.valid = true;
  members(v, [&](std::string_view key, od::value value) {
    if (key == "ns") number(value, c.ns);
    else if (key == "process_ns") number(value, c.process_ns);
    else if (key == "system_busy_ns") number(value, c.system_busy_ns);
    else if (key == "system_idle_ns") number(value, c.system_idle_ns);
    else if (key == "cpus") number(value, c.cpus);
  });
}

void drops(od::value v, Trace& t) {
  members(v, [&](std::string_view key, od::value value) {
    DropCounters& d = t.drops;
    if (key == "host_events") number(value, d.host_events);
    else if (key == "device_records") number(value, d.device_records);
    else if (key == "late_device_records") number(value, d.late_device_records);
    else if (key == "unmatched_device_records") number(value, d.unmatched_device_records);
    else if (key == "host_buffer_requested_bytes") number(value, d.host_buffer_requested_bytes);
    else if (key == "host_buffer_reserved_bytes") number(value, d.host_buffer_reserved_bytes);
    else if (key == "log_lines") number(value, d.log_lines);
    else if (key == "stderr_replaced") flag(value, d.stderr_replaced);
    else if (key == "plain_dlopen_calls") number(value, d.plain_dlopen_calls);
    else if (key == "shape_records") number(value, d.shape_records);
    else if (key == "stacks_truncated") number(value, d.stacks_truncated);
    else if (key == "stacks_lost") number(value, d.stacks_lost);
    else if (key == "python_frames_lost") number(value, d.python_frames_lost);
    else if (key == "timer_periods_missed") number(value, d.timer_periods_missed);
    else if (key == "memory_records") number(value, t.memory.dropped_records);
    else if (key == "left_out_host_events") number(value, d.left_out_host_events);
    else if (key == "left_out_device_records") number(value, d.left_out_device_records);
    else if (key == "memory_room_bytes") number(value, d.memory_room_bytes);
    else if (key == "memory_needed_bytes") number(value, d.memory_needed_bytes);
    else if (key == "shorter_than_min_duration") number(value, d.shorter_than_min_duration);
    else if (key == "over_max_events") number(value, d.over_max_events);
    else if (key == "over_max_events_device_records") number(value, d.over_max_events_device_records);
  });
}

// Calls fn(element) for every element of an array value; nothing when it is not one.
template <typename Fn>
void elements(od::value v, Fn&& fn) {
  od::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) return;
  for (auto element : a) {
    od::value e;
    if (element.get(e) != simdjson::SUCCESS) return;
    fn(e);
  }
}

// [[device, allocated, reserved], ...]
void totals(od::value v, std::vector<MemoryTotals>& out) {
  elements(v, [&](od::value row) {
    std::size_t i = 0;
    MemoryTotals& t = out.emplace_back();
    elements(row, [&](od::value x) {
      if (i == 0) number(x, t.device);
      if (i == 1) number(x, t.allocated);
      if (i == 2) number(x, t.reserved);
      ++i;
    });
  });
}

// [[address, bytes, unix ns, device, kind, tid, api, unix ns of the allocating call, its call
// site], ...]
void live(od::value v, MemoryReport& m, TraceHeader& h) {
  elements(v, [&](od::value row) {
    std::size_t i = 0;
    LiveAllocation& a = m.live.emplace_back();
    uint64_t kind = 0, call = 0;
    elements(row, [&](od::value x) {
      switch (i++) {
        case 0: number(x, a.address); break;
        case 1: number(x, a.bytes); break;
        case 2: number(x, a.ns); break;
        case 3: number(x, a.device); break;
        case 4: number(x, kind); break;
        case 5: number(x, a.tid); break;
        case 6: text(x, a.api); break;
        case 7: number(x, call); break;
        case 8: text(x, a.call_site); break;
        default: break;
      }
    });
    a.kind = kind <= uint64_t(MemoryKind::Registered) ? MemoryKind(kind) : MemoryKind::Device;
    h.live_call_ns.push_back(call);
  });
}

void memory(od::value v, MemoryReport& m, TraceHeader& h) {
  m.enabled = true;
  members(v, [&](std::string_view key, od::value value) {
    if (key == "start") totals(value, m.start);
    else if (key == "end") totals(value, m.end);
    else if (key == "live") live(value, m, h);
    if (key == "record_capacity") number(value, m.record_capacity);
    else if (key == "dropped_records") number(value, m.dropped_records);
    else if (key == "unknown_frees") number(value, m.unknown_frees);
    else if (key == "null_frees") number(value, m.null_frees);
    else if (key == "live_allocations") number(value, m.live_count);
    else if (key == "live_bytes") number(value, m.live_bytes);
    else if (key == "bookkeeping_bytes") number(value, m.bookkeeping_bytes);
  });
}

void window(od::value v, Trace& t, TraceHeader& h) {
  h.has_window = true;
  members(v, [&](std::string_view key, od::value value) {
    if (key == "window") number(value, t.window);
    else if (key == "whole_run") flag(value, t.whole_run);
    else if (key == "first_step") number(value, t.first_step.number);
    else if (key == "last_step") number(value, t.last_step.number);
    else if (key == "start_ns") number(value, h.window_start_ns);
    else if (key == "end_ns") number(value, h.window_end_ns);
  });
}

void member(std::string_view key, od::value v, Trace& t, TraceHeader& h) {
  if (key == "traceEvents") {
    od::json_type type;
    h.has_events_key = v.type().get(type) == simdjson::SUCCESS && type == od::json_type::array;
  }
  else if (key == "deviceProperties") device_properties(v, t);
  else if (key == "distributedInfo") {
    members(v, [&](std::string_view k, od::value value) {
      if (k == "rank") number(value, t.process.rank);
      else if (k == "world_size") number(value, t.process.world_size);
    });
  } else if (key == "baseTimeNanoseconds") number(v, h.base_time_ns);
  else if (key == "profagent_config") {
    h.profagent = true;
    members(v, [&](std::string_view k, od::value value) {
      std::string s;
      text(value, s);
      t.config.emplace_back(std::string(k), s);
    });
  } else if (key == "cupti_version") text(v, t.cupti_version);
  else if (key == "cuda_runtime_version") number(v, t.cuda_runtime_version);
  else if (key == "cuda_driver_version") number(v, t.cuda_driver_version);
  else if (key == "host_name") text(v, t.process.host_name);
  else if (key == "device_backend") text(v, t.device_backend);
  else if (key == "profagent_drops") drops(v, t);
  else if (key == "profagent_memory") memory(v, t.memory, h);
  else if (key == "profagent_window") h.profagent = true, window(v, t, h);
  else if (key == "profagent_cpu_times") {
    members(v, [&](std::string_view k, od::value value) {
      if (k == "start") cpu_times(value, t.cpu_start);
      if (k == "end") cpu_times(value, t.cpu_end);
    });
  }
}

}  // namespace

bool read_metadata(const std::string& metadata, Trace& trace, TraceHeader& header, std::string& error) {
  // The metadata is small: it is validated whole (on-demand parsing checks only what it reads).
  simdjson::dom::parser validator;
  simdjson::dom::element root;
  if (auto e = validator.parse(metadata.data(), metadata.size(), false).get(root)) {
    return error = std::string("not valid JSON: ") + simdjson::error_message(e), false;
  }
  od::parser parser;
  od::document doc;
  if (auto e = parser.iterate(simdjson::padded_string_view(metadata.data(), metadata.size(), metadata.capacity())).get(doc)) {
    return error = std::string("not valid JSON: ") + simdjson::error_message(e), false;
  }
  od::object top;
  if (auto e = doc.get_object().get(top)) return error = std::string("not valid JSON: ") + simdjson::error_message(e), false;
  for (auto field : top) {
    std::string_view key;
    od::value value;
    auto e = field.unescaped_key().get(key);
    if (e == simdjson::SUCCESS) e = field.value().get(value);
    if (e != simdjson::SUCCESS) return error = std::string("not valid JSON: ") + simdjson::error_message(e), false;
    member(key, value, trace, header);
  }
  const auto from_base = [&header](uint64_t unix_ns) {
    return unix_ns > header.base_time_ns ? unix_ns - header.base_time_ns : 0;
  };
  for (CpuTimes* c : {&trace.cpu_start, &trace.cpu_end}) c->ns = from_base(c->ns);
  for (LiveAllocation& a : trace.memory.live) a.ns = from_base(a.ns);
  for (uint64_t& call : header.live_call_ns) call = call ? from_base(call) : 0;
  if (header.window_start_ns) header.window_start_ns = from_base(header.window_start_ns);
  if (header.window_end_ns) header.window_end_ns = from_base(header.window_end_ns);
  trace.unix_offset_ns = int64_t(header.base_time_ns);
  return true;
}

}  // namespace profagent::report
