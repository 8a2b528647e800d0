#include "exporters/summary_json.h"

#include "exporters/summaries/memory_summary.h"
#include "exporters/drop_counters.h"

namespace profagent::exporters {
namespace {

int64_t unix_ns(const Trace& t, uint64_t ns) { return static_cast<int64_t>(ns) + t.unix_offset_ns; }

void header(const Trace& t, JsonWriter& w) {
  w.raw("{\"format\":\"profagent-summary\",\"version\":1,\"host_name\":");
  w.string(t.process.host_name);
  w.raw(",\"pid\":"), w.u64(t.process.pid);
  w.raw(",\"rank\":"), w.i64(t.process.rank);
  w.raw(",\"world_size\":"), w.i64(t.process.world_size);
  w.raw(",\"window\":"), w.u64(t.window);
  w.raw(",\"whole_run\":"), w.boolean(t.whole_run);
  w.raw(",\"first_step\":"), w.u64(t.first_step.number);
  w.raw(",\"last_step\":"), w.u64(t.last_step.number);
  w.raw(",\"steps\":[");
  for (std::size_t i = 0; i < t.steps.size(); ++i) {
    w.raw(i ? ",{\"number\":" : "{\"number\":"), w.u64(t.steps[i].number);
    w.raw(",\"start_unix_ns\":"), w.i64(unix_ns(t, t.steps[i].start_ns));
    w.raw(",\"end_unix_ns\":"), w.i64(unix_ns(t, t.steps[i].end_ns));
    w.raw("}");
  }
  w.raw("],\"start_unix_ns\":"), w.i64(unix_ns(t, t.start_ns));
  w.raw(",\"end_unix_ns\":"), w.i64(unix_ns(t, t.end_ns));
  w.raw(",\"device_backend\":"), w.string(t.device_backend);
  w.raw(",\"drops\":"), write_drop_counters(t, w);
}

}  // namespace

void write_table_row_json(const TableRow& r, JsonWriter& w) {
  w.raw("{\"name\":"), w.string(r.name);
  w.raw(",\"kind\":\""), w.raw(row_kind_name(r.kind));
  w.raw("\",\"input_shapes\":"), w.string(r.input_shapes);
  w.raw(",\"count\":"), w.u64(r.count);
  w.raw(",\"self_cpu_ns\":"), w.u64(r.self_cpu_ns);
  w.raw(",\"cpu_total_ns\":"), w.u64(r.cpu_total_ns);
  w.raw(",\"self_cuda_ns\":"), w.u64(r.self_cuda_ns);
  w.raw(",\"cuda_total_ns\":"), w.u64(r.cuda_total_ns);
  w.raw(",\"cpu_memory_usage\":"), w.i64(r.cpu_memory);
  w.raw(",\"self_cpu_memory_usage\":"), w.i64(r.self_cpu_memory);
  w.raw(",\"cuda_memory_usage\":"), w.i64(r.cuda_memory);
  w.raw(",\"self_cuda_memory_usage\":"), w.i64(r.self_cuda_memory);
  w.raw("}");
}

namespace {

// The header, the table's totals and rows; `host_records` and `device_records` are the window's.
void summary_body(const Trace& t, const Table& table, uint64_t host_records, uint64_t device_records, JsonWriter& w) {
  header(t, w);
  w.raw(",\"sort_by\":"), w.string(table.sort_by);
  w.raw(",\"self_cpu_time_total_ns\":"), w.u64(table.self_cpu_total_ns);
  w.raw(",\"self_cuda_time_total_ns\":"), w.u64(table.self_cuda_total_ns);
  w.raw(",\"host_records\":"), w.u64(host_records);
  w.raw(",\"device_records\":"), w.u64(device_records);
  w.raw(",\"rows\":[");
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    if (i) w.raw(",");
    write_table_row_json(table.rows[i], w);
  }
  w.raw("]");
}

}  // namespace

bool write_summary_json(const Trace& t, const Table& table, const MemorySummary& memory, JsonWriter& w) {
  summary_body(t, table, t.host.size(), t.device.size(), w);
  write_memory_summary_json(t, memory, w);
  w.raw("}\n");
  return w.flush();
}

bool write_streamed_summary_json(const Trace& tail, const Table& table, const MemorySummary& memory, uint64_t unplaced,
                                 JsonWriter& w) {
  summary_body(tail, table, tail.streamed.host_events + tail.host.size(),
               tail.streamed.device_records + tail.device.size(), w);
  write_memory_summary_json(tail, memory, w);
  w.raw(",\"streamed\":{\"segments\":"), w.u64(tail.streamed.segments);
  if (unplaced != 0) w.raw(",\"not_exact\":[\"memory_usage\"],\"unplaced_memory_records\":"), w.u64(unplaced);
  w.raw("}}\n");
  return w.flush();
}

}  // namespace profagent::exporters
