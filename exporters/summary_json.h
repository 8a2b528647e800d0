// The machine-readable summary of one window: the table's rows with full-precision ns
// numbers (every row, not only the row_limit shown), totals, window and steps, drops and the
// device backend. One JSON object on one line (so the file is also valid NDJSON).
//
// {"format":"profagent-summary","version":1,"host_name":..,"pid":..,"rank":..,
//  "world_size":..,"window":..,"whole_run":..,"first_step":..,"last_step":..,
//  "steps":[{"number":..,"start_unix_ns":..,"end_unix_ns":..}],"start_unix_ns":..,
//  "end_unix_ns":..,"device_backend":..,"drops":{...},"sort_by":..,
//  "self_cpu_time_total_ns":..,"self_cuda_time_total_ns":..,"host_records":..,
//  "device_records":..,"rows":[{"name":..,"kind":..,"input_shapes":..,"count":..,
//  "self_cpu_ns":..,"cpu_total_ns":..,"self_cuda_ns":..,"cuda_total_ns":..,
//  "cpu_memory_usage":..,"self_cpu_memory_usage":..,"cuda_memory_usage":..,
//  "self_cuda_memory_usage":..}],
//  "memory":{...}}  (PROFAGENT_PROFILE_MEMORY only: exporters/summaries/memory_summary.h)
#pragma once

#include "collector/trace.h"
#include "exporters/json_writer.h"
#include "exporters/summaries/memory_summary.h"
#include "exporters/summaries/tables.h"

namespace profagent::exporters {

bool write_summary_json(const Trace& trace, const Table& table, const MemorySummary& memory, JsonWriter& out);

// A streamed window's (docs/streamed_windows.md): `tail` is its last part, which carries the
// window's head (start, end, steps, drops, what its segments held) and its memory records,
// `table` the key_averages table folded over all its parts, `memory` its memory summary
// (exporters/summaries/streamed_memory.h). host_records and device_records count the whole
// window. Then "streamed":{"segments":N}, and when `unplaced` device-reported allocation
// records found no call (the rows' memory figures leave them out)
//   "streamed":{"segments":N,"not_exact":["memory_usage"],"unplaced_memory_records":K}
bool write_streamed_summary_json(const Trace& tail, const Table& table, const MemorySummary& memory, uint64_t unplaced,
                                 JsonWriter& out);

// One table row as a JSON object (name, kind, input_shapes, count, the four times in ns, the four
// memory figures): the summary file's rows and `profagent report --format json`'s key_averages.
void write_table_row_json(const TableRow& row, JsonWriter& out);

}  // namespace profagent::exporters
