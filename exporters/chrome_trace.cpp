#include "exporters/chrome_trace.h"

#include <algorithm>

#include "exporters/chrome_trace_writer.h"
#include "exporters/memory_events.h"
#include "exporters/trace_schema.h"

namespace profagent::exporters {
namespace chrome {

uint64_t ChromeTraceWriter::unix_ns(uint64_t ns) const {
  return uint64_t(std::max<int64_t>(0, int64_t(ns) + t_.unix_offset_ns));
}

void ChromeTraceWriter::write(std::string_view trace_name) {
  write_head();
  write_events();
  write_tail(trace_name);
}

void ChromeTraceWriter::write_head(bool with_window_keys) {
  header(with_window_keys);
  w_.raw("  \""), w_.raw(schema::kTraceEvents), w_.raw("\": [\n");
}

void ChromeTraceWriter::write_events() {
  plan_flows();
  host_events();
  step_events();
  gpu_annotations();
  device_events();
  events_ += write_memory_events(t_, w_, [this](uint64_t ns) { return rel(ns); });
  agent_events();
}

void ChromeTraceWriter::write_tail(std::string_view trace_name, std::string_view extra_keys) {
  host_rows_.add(t_.process.pid, t_.process.pid);  // the row of the closing instant
  row_metadata();
  window_end();
  w_.raw("],\n");
  top_level_end(trace_name, extra_keys);
}

void ChromeTraceWriter::write_metadata_only(std::string_view trace_name, std::string_view extra_keys) {
  header();
  w_.raw("  \""), w_.raw(schema::kTraceEvents), w_.raw("\": [],\n");
  top_level_end(trace_name, extra_keys);
}

void ChromeTraceWriter::top_level_end(std::string_view trace_name, std::string_view extra_keys) {
  if (!stack_frames_.empty()) {
    stack_frames_.write(w_);
    w_.raw(",\n");
  }
  if (!extra_keys.empty()) w_.raw(extra_keys);  // raw() copies with memcpy: never from a null view
  w_.raw("  \""), w_.raw(schema::kTraceName), w_.raw("\": ");
  w_.string(trace_name);
  w_.raw("\n}\n");
}

// Kineto's keys in Kineto's order, profagent's between; `"rank": R` with the space HTA's regex
// needs, and nothing before it that the regex would match.
void ChromeTraceWriter::header(bool with_window_keys) {
  w_.raw("{\n  \""), w_.raw(schema::kSchemaVersion), w_.raw("\": 1,\n  \"");
  w_.raw(schema::kDeviceProperties), w_.raw("\": [");
  device_properties();
  w_.raw("],\n");
  metadata_keys(with_window_keys);
  w_.raw("  \""), w_.raw(schema::kDistributedInfo), w_.raw("\": {\""), w_.raw(schema::kBackend), w_.raw("\": ");
  w_.string(t_.process.backend.empty() ? "unknown" : t_.process.backend);
  w_.raw(", \""), w_.raw(schema::kRank), w_.raw("\": "), w_.i64(t_.process.rank);
  w_.raw(", \""), w_.raw(schema::kLocalRank), w_.raw("\": "), w_.i64(t_.process.local_rank);
  w_.raw(", \""), w_.raw(schema::kWorldSize), w_.raw("\": "), w_.i64(t_.process.world_size);
  w_.raw("},\n  \""), w_.raw(schema::kDisplayTimeUnit), w_.raw("\": \"ms\",\n  \"");
  w_.raw(schema::kBaseTimeNanoseconds), w_.raw("\": "), w_.u64(base_);
  w_.raw(",\n");
}

void ChromeTraceWriter::begin_x(std::string_view cat, std::string_view name, uint64_t pid, uint64_t tid,
                                uint64_t start, uint64_t end) {
  open_x(cat);
  w_.string(name);
  x_times(pid, tid, start, end);
}

void ChromeTraceWriter::begin_x(std::string_view cat, InternedName name, uint64_t pid, uint64_t tid,
                                uint64_t start, uint64_t end) {
  open_x(cat);
  name_string(name);
  x_times(pid, tid, start, end);
}

void ChromeTraceWriter::name_string(InternedName name) {
  if (const std::string* text = json_names_.of(name)) {
    w_.raw(*text);
  } else {
    w_.string(name);
  }
}

void ChromeTraceWriter::open_x(std::string_view cat) {
  w_.raw("{\"ph\":\"X\",\"cat\":\"");
  w_.raw(cat);
  w_.raw("\",\"name\":");
}

void ChromeTraceWriter::x_times(uint64_t pid, uint64_t tid, uint64_t start, uint64_t end) {
  const uint64_t ts = rel(start);
  const uint64_t te = end > start ? rel(end) : ts;
  last_ns_ = std::max(last_ns_, end);
  w_.raw(row_text_.of(pid, tid));
  w_.raw(",\"ts\":"), w_.us3(ts);
  w_.raw(",\"dur\":"), w_.us3(te - ts);
}

// A global instant on the host process's row: Kineto writes it with empty-string pid and tid,
// which Perfetto treats as a brittle special case.
void ChromeTraceWriter::window_end() {
  const uint64_t end = std::max(t_.end_ns, last_ns_);
  w_.raw("{\"ph\":\"i\",\"s\":\"g\",\"name\":\""), w_.raw(schema::name::kWindowEnd), w_.raw("\",\"pid\":");
  w_.u64(t_.process.pid);
  w_.raw(",\"tid\":"), w_.u64(t_.process.pid);
  w_.raw(",\"ts\":"), w_.us3(rel(end));
  w_.raw("}\n");
  ++events_;
}

bool draws_step_spans(const Trace& t) {
  if (t.steps.empty()) return false;
  return std::none_of(t.host.begin(), t.host.end(), [](const HostRecord& h) { return h.kind == EventKind::Step; });
}

std::string step_name(const HostRecord& step) {
  return step.name.empty() ? std::string(schema::name::kStepPrefix) + std::to_string(step.arg0) : step.name.str();
}

}  // namespace chrome

uint64_t base_time_ns(const Trace& t, uint64_t earliest_record_ns) {
  uint64_t first = std::min(t.start_ns ? t.start_ns : ~uint64_t{0}, earliest_record_ns);
  for (const StepSpan& s : t.steps) first = std::min(first, s.start_ns);
  if (first == ~uint64_t{0}) first = t.end_ns;
  const int64_t unix_ns = static_cast<int64_t>(first) + t.unix_offset_ns;
  if (unix_ns <= 0) return 0;
  return static_cast<uint64_t>(unix_ns) / kBaseTimeIntervalNs * kBaseTimeIntervalNs;
}

bool write_chrome_trace(const Trace& trace, std::string_view trace_name, JsonWriter& out, uint64_t* events) {
  chrome::ChromeTraceWriter writer(trace, out);
  writer.write(trace_name);
  if (events) *events = writer.events();
  return out.flush();
}

}  // namespace profagent::exporters
