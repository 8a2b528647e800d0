#include "agent/report/event_reader.h"

#include <simdjson.h>

#include "agent/report/json_string.h"
#include "exporters/trace_schema.h"

#include <charconv>
#include <cmath>

namespace profagent::report {
namespace {

namespace od = simdjson::ondemand;

// The largest time a trace may hold: 2^62 ns (about 146 years; Unix time now is 1.8e18 ns).
// Below it a time, its end (ts + dur) and the Unix time of either fit the model's 64 bits.
constexpr uint64_t kMaxTimeNs = uint64_t(1) << 62;

enum class TimeRead { Ok, NotANumber, OutOfRange };

// ts/dur as written: microseconds, usually with three decimals (ns). The digits are read
// exactly: a double cannot hold 16 significant digits, and a trace's times need them.
TimeRead decimal_us_to_ns(std::string_view raw, int64_t& ns) {
  while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t')) {
    raw.remove_suffix(1);
  }
  const bool negative = !raw.empty() && raw[0] == '-';
  if (negative) raw.remove_prefix(1);
  if (raw.find_first_of("eE") != std::string_view::npos) {
    double us = 0;
    const auto [end, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), us);
    if (ec == std::errc::result_out_of_range) return TimeRead::OutOfRange;
    if (ec != std::errc{} || !std::isfinite(us)) return TimeRead::NotANumber;
    if (us * 1000.0 > double(kMaxTimeNs)) return TimeRead::OutOfRange;
    ns = int64_t(std::llround(us * 1000.0)) * (negative ? -1 : 1);
    return TimeRead::Ok;
  }
  const std::size_t dot = raw.find('.');
  const std::string_view whole = raw.substr(0, dot);
  uint64_t us = 0;
  const auto [end, ec] = std::from_chars(whole.data(), whole.data() + whole.size(), us);
  if (ec == std::errc::result_out_of_range) return TimeRead::OutOfRange;
  if (ec != std::errc{} || end != whole.data() + whole.size()) return TimeRead::NotANumber;
  if (us > kMaxTimeNs / 1000) return TimeRead::OutOfRange;
  int64_t frac = 0;
  if (dot != std::string_view::npos) {
    const std::string_view digits = raw.substr(dot + 1);
    for (std::size_t i = 0; i < 3; ++i) frac = frac * 10 + (i < digits.size() ? digits[i] - '0' : 0);
    if (digits.size() > 3 && digits[3] >= '5') ++frac;  // round to the nearest ns
  }
  ns = (int64_t(us) * 1000 + frac) * (negative ? -1 : 1);
  return TimeRead::Ok;
}

// An integer argument written as a number (maybe a float) or as a decimal string; false when
// it is neither (the argument is then left at its default).
bool as_i64(od::value v, int64_t& out) {
  if (v.get_int64().get(out) == simdjson::SUCCESS) return true;
  uint64_t u = 0;
  if (v.get_uint64().get(u) == simdjson::SUCCESS) return out = int64_t(u), true;
  double d = 0;
  if (v.get_double().get(d) == simdjson::SUCCESS) return out = int64_t(std::llround(d)), true;
  std::string_view s;
  if (v.get_string().get(s) != simdjson::SUCCESS) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

template <typename T>
void read_int(od::value v, T& out) {
  int64_t i = 0;
  if (as_i64(v, i)) out = T(i);
}

void read_triple(od::value v, int32_t (&out)[3]) {
  od::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) return;
  std::size_t i = 0;
  for (auto element : a) {
    od::value e;
    if (element.get(e) != simdjson::SUCCESS || i >= 3) break;
    read_int(e, out[i++]);
  }
}

void read_dims(od::value v, std::vector<std::vector<int64_t>>& out) {
  od::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) return;
  for (auto element : a) {
    std::vector<int64_t>& dims = out.emplace_back();
    od::array inner;
    if (element.get_array().get(inner) != simdjson::SUCCESS) continue;  // a scalar input: no dims
    for (auto d : inner) {
      od::value dv;
      int64_t n = 0;
      if (d.get(dv) == simdjson::SUCCESS && as_i64(dv, n)) dims.push_back(n);
    }
  }
}

void read_strings(od::value v, std::vector<std::string>& out) {
  od::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) return;
  for (auto element : a) {
    std::string_view s;
    out.emplace_back(element.get_string().get(s) == simdjson::SUCCESS ? s : std::string_view());
  }
}

void read_text(od::value v, std::string_view& out) {
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) out = s;
}

TimeRead read_time(od::value v, int64_t& ns);

// One args member (exporters/trace_schema.h: Kineto's keys and profagent's).
void read_arg(std::string_view key, od::value v, RawArgs& a) {
  namespace arg = exporters::schema::arg;
  int64_t n = 0;
  if (key == arg::kExternalId) { if ((a.has_external_id = as_i64(v, n))) a.external_id = uint64_t(n); }
  else if (key == arg::kCorrelation) read_int(v, a.correlation);
  else if (key == arg::kEntryPoint) read_text(v, a.entry_point);
  else if (key == arg::kKernel) read_text(v, a.kernel);
  else if (key == arg::kCudaError) a.has_error = as_i64(v, a.cuda_error);
  else if (key == arg::kCaptured) a.captured = as_i64(v, n) && n != 0;
  else if (key == arg::kBytes) read_int(v, a.bytes);
  else if (key == arg::kStep) { if ((a.has_step = as_i64(v, n))) a.step = uint64_t(n); }
  else if (key == arg::kDevice) read_int(v, a.device);
  else if (key == arg::kContext) read_int(v, a.context);
  else if (key == arg::kStream) a.stream = as_i64(v, n) && n >= 0 ? uint32_t(n) : exporters::kNoStream;
  else if (key == arg::kGrid) read_triple(v, a.grid);
  else if (key == arg::kBlock) read_triple(v, a.block);
  else if (key == arg::kRegistersPerThread) read_int(v, a.registers);
  else if (key == arg::kSharedMemory) read_int(v, a.shared_memory);
  else if (key == arg::kQueued) read_int(v, a.queued);
  else if (key == arg::kGraphId) read_int(v, a.graph_id);
  else if (key == arg::kGraphNodeId) read_int(v, a.graph_node_id);
  else if (key == arg::kSyncKind) read_text(v, a.sync_kind);
  else if (key == arg::kWaitOnEventId) read_int(v, a.event_id);
  else if (key == arg::kAddress) { if ((a.has_address = as_i64(v, n))) a.address = uint64_t(n); }
  else if (key == arg::kMemoryBytes) read_int(v, a.memory_bytes);
  else if (key == arg::kTotalAllocated) read_int(v, a.total_allocated);
  else if (key == arg::kTotalReserved) read_int(v, a.total_reserved);
  else if (key == arg::kDeviceId) read_int(v, a.device_id);
  else if (key == arg::kDeviceType) read_int(v, a.device_type);
  else if (key == arg::kMemoryKind) read_text(v, a.memory_kind);
  else if (key == arg::kAllocatedTs) a.has_allocated_ts = read_time(v, a.allocated_ts_ns) == TimeRead::Ok;
  else if (key == arg::kError) read_int(v, a.memory_error);
  else if (key == arg::kCallSite) read_text(v, a.call_site);
  else if (key == arg::kName) read_text(v, a.label);
  else if (key == arg::kInputDims) read_dims(v, a.input_dims);
  else if (key == arg::kInputType) read_strings(v, a.input_types);
}

bool read_args(od::value v, RawArgs& a) {
  od::object args;
  if (v.get_object().get(args) != simdjson::SUCCESS) return false;
  for (auto field : args) {
    std::string_view key;
    od::value value;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS || field.value().get(value) != simdjson::SUCCESS) return false;
    read_arg(key, value, a);
  }
  return true;
}

// pid/tid: numbers, or text (Kineto's "Spans" row, "" on its last event): text reads as 0.
bool read_row_id(od::value v, uint64_t& out) {
  int64_t i = 0;
  if (as_i64(v, i)) return out = uint64_t(i < 0 ? -i : i), true;  // Kineto writes negative tids as abs()
  std::string_view s;
  return v.get_string().get(s) == simdjson::SUCCESS && (out = 0, true);
}

TimeRead read_time(od::value v, int64_t& ns) {
  od::json_type type;
  if (v.type().get(type) != simdjson::SUCCESS || type != od::json_type::number) return TimeRead::NotANumber;
  return decimal_us_to_ns(v.raw_json_token(), ns);
}

// A string value, decoded by json_string.h (a view of the batch when it has no escape).
bool read_string(od::value v, std::string_view& out, std::string& storage, std::string& error) {
  const std::string_view token = v.raw_json_token();
  if (token.empty() || token.front() != '"') return error = "is not a string", false;
  return decode_json_string(token, out, storage, error);
}

std::string field_error(std::string_view key, const char* what) {
  return "\"" + std::string(key) + "\" " + what;
}

// Fills `e` from one event object; false with `error` on a field of the wrong type.
bool read_field(std::string_view key, od::value v, RawEvent& e, std::string& error) {
  if (key == "ph") {
    std::string_view ph;
    if (v.get_string().get(ph) != simdjson::SUCCESS || ph.size() != 1) return error = field_error(key, "is not a one-letter string"), false;
    e.ph = ph[0];
  } else if (key == "cat" || key == "name") {
    const bool name = key == "name";
    std::string why;
    if (!read_string(v, name ? e.name : e.cat, name ? e.name_storage : e.cat_storage, why)) {
      return error = field_error(key, why.c_str()), false;
    }
    e.has_name = e.has_name || name;
  } else if (key == "pid" || key == "tid") {
    uint64_t& out = key == "pid" ? e.pid : e.tid;
    if (!read_row_id(v, out)) return error = field_error(key, "is neither a number nor a string"), false;
    (key == "pid" ? e.has_pid : e.has_tid) = true;
  } else if (key == "ts" || key == "dur") {
    switch (read_time(v, key == "ts" ? e.ts_ns : e.dur_ns)) {
      case TimeRead::Ok: break;
      case TimeRead::NotANumber: return error = field_error(key, "is not a number"), false;
      case TimeRead::OutOfRange: return error = field_error(key, "is out of range (beyond 2^62 ns, about 146 years)"), false;
    }
    (key == "ts" ? e.has_ts : e.has_dur) = true;
  } else if (key == "id") {
    int64_t id = 0;
    if (as_i64(v, id)) e.id = uint64_t(id);
  } else if (key == "sf") {
    std::string_view text;
    int64_t sf = 0;
    if (as_i64(v, sf) && sf > 0) e.sf = uint64_t(sf);
    else if (v.get_string().get(text) == simdjson::SUCCESS) std::from_chars(text.data(), text.data() + text.size(), e.sf);
  } else if (key == "args") {
    if (!read_args(v, e.args)) return error = field_error(key, "is not an object"), false;
  }
  return true;
}

}  // namespace

struct EventReader::Impl {
  od::parser parser;
};

EventReader::EventReader() : impl_(std::make_unique<Impl>()) {}
EventReader::~EventReader() = default;

bool EventReader::read_batch(std::string_view batch, std::size_t padding, uint64_t first_index, const EventFn& on_event,
                             std::string& error) {
  od::document doc;
  if (auto e = impl_->parser.iterate(simdjson::padded_string_view(batch.data(), batch.size(), batch.size() + padding)).get(doc)) {
    return error = std::string("not valid JSON: ") + simdjson::error_message(e), false;
  }
  od::array events;
  if (auto e = doc.get_array().get(events)) return error = std::string("not valid JSON: ") + simdjson::error_message(e), false;
  uint64_t index = first_index;
  for (auto element : events) {
    od::object object;
    if (auto e = element.get_object().get(object)) {
      return error = "event " + std::to_string(index) + ": " + simdjson::error_message(e), false;
    }
    RawEvent event;
    for (auto field : object) {
      std::string_view key;
      od::value value;
      if (auto e = field.unescaped_key().get(key); e == simdjson::SUCCESS) e = field.value().get(value);
      else return error = "event " + std::to_string(index) + ": " + simdjson::error_message(e), false;
      if (!read_field(key, value, event, error)) return error = "event " + std::to_string(index) + ": " + error, false;
    }
    if (!on_event(event, index, error)) return false;
    ++index;
  }
  return true;
}

}  // namespace profagent::report
