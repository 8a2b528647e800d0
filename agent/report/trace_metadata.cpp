// The top-level members of a trace other than its events (event_reader.h: read_metadata).
#include <simdjson.h>

#include <span>

#include "agent/report/event_reader.h"
#include "agent/report/stack_frames_json.h"
#include "exporters/drop_counters.h"
#include "exporters/trace_schema.h"

namespace profagent::report {
namespace {

namespace od = simdjson::ondemand;
namespace schema = exporters::schema;

// False (and `out` left as it was) when the value is not an integer.
template <typename T>
bool number(od::value v, T& out) {
  int64_t i = 0;
  if (v.get_int64().get(i) == simdjson::SUCCESS) return out = T(i), true;
  uint64_t u = 0;
  if (v.get_uint64().get(u) == simdjson::SUCCESS) return out = T(u), true;
  return false;
}

void text(od::value v, std::string& out) {
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) out = s;
}

void flag(od::value v, bool& out) {
  bool b = false;
  if (v.get_bool().get(b) == simdjson::SUCCESS) out = b;
}

// A member the writer wrote from a field list (exporters/trace_schema.h), stored back through
// its field; derived members (no `set`) are not read.
template <typename Owner>
void store(const schema::Field<Owner>& f, od::value v, Owner& o) {
  if (f.set == nullptr) return;
  int64_t n = 0;
  bool b = false;
  if (f.type == schema::FieldType::Flag) {
    if (v.get_bool().get(b) == simdjson::SUCCESS) f.set(o, b);
  } else if (number(v, n)) {
    f.set(o, n);
  }
}

template <typename Owner>
void listed(std::span<const schema::Field<Owner>> fields, std::string_view key, od::value v, Owner& o) {
  if (const schema::Field<Owner>* f = schema::find_field<Owner>(fields, key)) store(*f, v, o);
}

void device_property(std::string_view key, od::value v, DeviceInfo& d) {
  if (key == schema::device::kId) number(v, d.id);
  else if (key == schema::device::kName) text(v, d.name);
  else listed<DeviceInfo>(schema::kDeviceFields, key, v, d);
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
    if (key == schema::cpu_times::kNs) number(value, c.ns);
    else listed<CpuTimes>(schema::kCpuTimesFields, key, value, c);
  });
}

// Every counter the list has (exporters/drop_counters.h); the cause is derived from them.
void drops(od::value v, Trace& t) {
  members(v, [&](std::string_view key, od::value value) {
    for (const exporters::DropCounter& counter : exporters::drop_counters()) {
      if (counter.field.key == key) return store(counter.field, value, t);
    }
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

// [[device, allocated, reserved], ...] (schema::TotalsColumn)
void totals(od::value v, std::vector<MemoryTotals>& out) {
  elements(v, [&](od::value row) {
    std::size_t i = 0;
    MemoryTotals& t = out.emplace_back();
    elements(row, [&](od::value x) {
      switch (schema::TotalsColumn(i++)) {
        case schema::kTotalsDevice: number(x, t.device); break;
        case schema::kTotalsAllocated: number(x, t.allocated); break;
        case schema::kTotalsReserved: number(x, t.reserved); break;
        default: break;
      }
    });
  });
}

// One row per listed live allocation, columns as schema::LiveColumn.
void live(od::value v, MemoryReport& m, TraceHeader& h) {
  elements(v, [&](od::value row) {
    std::size_t i = 0;
    LiveAllocation& a = m.live.emplace_back();
    uint64_t kind = 0, call = 0;
    elements(row, [&](od::value x) {
      switch (schema::LiveColumn(i++)) {
        case schema::kLiveAddress: number(x, a.address); break;
        case schema::kLiveBytes: number(x, a.bytes); break;
        case schema::kLiveUnixNs: number(x, a.ns); break;
        case schema::kLiveDevice: number(x, a.device); break;
        case schema::kLiveKind: number(x, kind); break;
        case schema::kLiveTid: number(x, a.tid); break;
        case schema::kLiveApi: text(x, a.api); break;
        case schema::kLiveCallUnixNs: number(x, call); break;
        case schema::kLiveCallSite: text(x, a.call_site); break;
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
    if (key == schema::memory::kStart) totals(value, m.start);
    else if (key == schema::memory::kEnd) totals(value, m.end);
    else if (key == schema::memory::kLive) live(value, m, h);
    else listed<MemoryReport>(schema::kMemoryFields, key, value, m);
  });
}

void window(od::value v, Trace& t, TraceHeader& h) {
  namespace window = schema::window;
  h.has_window = true;
  members(v, [&](std::string_view key, od::value value) {
    if (key == window::kWindow) number(value, t.window);
    else if (key == window::kWholeRun) flag(value, t.whole_run);
    else if (key == window::kFirstStep) number(value, t.first_step.number);
    else if (key == window::kLastStep) number(value, t.last_step.number);
    else if (key == window::kStartNs) number(value, h.window_start_ns);
    else if (key == window::kEndNs) number(value, h.window_end_ns);
  });
}

void overhead(od::value v, AgentCost& c) {
  c.measured = true;
  members(v, [&](std::string_view key, od::value value) { listed<AgentCost>(schema::kOverheadFields, key, value, c); });
}

void cpu_times_key(od::value v, Trace& t) {
  members(v, [&](std::string_view k, od::value value) {
    if (k == schema::cpu_times::kStart) cpu_times(value, t.cpu_start);
    if (k == schema::cpu_times::kEnd) cpu_times(value, t.cpu_end);
  });
}

void config(od::value v, Trace& t) {
  members(v, [&](std::string_view k, od::value value) {
    std::string s;
    text(value, s);
    t.config.emplace_back(std::string(k), s);
  });
}

void member(std::string_view key, od::value v, Trace& t, TraceHeader& h) {
  if (key == schema::kTraceEvents) {
    od::json_type type;
    h.has_events_key = v.type().get(type) == simdjson::SUCCESS && type == od::json_type::array;
  }
  else if (key == schema::kDeviceProperties) device_properties(v, t);
  else if (key == schema::kDistributedInfo) {
    members(v, [&](std::string_view k, od::value value) {
      if (k == schema::kRank) number(value, t.process.rank);
      else if (k == schema::kLocalRank) number(value, t.process.local_rank);
      else if (k == schema::kWorldSize) number(value, t.process.world_size);
      else if (k == schema::kBackend) text(value, t.process.backend);
    });
  } else if (key == schema::kBaseTimeNanoseconds) number(v, h.base_time_ns);
  else if (key == schema::kConfig) h.profagent = true, config(v, t);
  else if (key == schema::kCuptiVersion) text(v, t.cupti_version);
  else if (key == schema::kCudaRuntimeVersion) number(v, t.cuda_runtime_version);
  else if (key == schema::kCudaDriverVersion) number(v, t.cuda_driver_version);
  else if (key == schema::kHostName) text(v, t.process.host_name);
  else if (key == schema::kDeviceBackend) text(v, t.device_backend);
  else if (key == schema::kStackFrames) read_stack_frames(v, h.stack_frames);
  else if (key == schema::kDrops) drops(v, t);
  else if (key == schema::kMemory) memory(v, t.memory, h);
  else if (key == schema::kWindow) h.profagent = true, window(v, t, h);
  else if (key == schema::kCpuTimes) cpu_times_key(v, t);
  else if (key == schema::kOverhead) overhead(v, t.agent_cost);
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
