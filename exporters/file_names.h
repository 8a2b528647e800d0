// Output file names: many processes, ranks and windows share one directory.
//
//   <host>.<pid>[.r<rank>].w<window>[.steps<a>-<b>].<format suffix>
//
// - host: Trace::process.host_name, bytes other than [A-Za-z0-9_-] replaced by '_' (dots
//   too, so the fields stay split on '.'); "unknown-host" when empty.
// - .r<rank>: only when the run is distributed (world_size > 1 or rank != 0).
// - .w<window>: 1-based window number.
// - .steps<a>-<b>: the first and last step of the window, when a step schedule made it.
// e.g. "node7.4242.r3.w2.steps10-12.trace.json", "laptop.4242.w1.table.txt".
#pragma once

#include <string>

#include "collector/trace.h"

namespace profagent::exporters {

std::string file_stem(const Trace& trace);
// "<stem>.table.txt": the key_averages table of a window (a streamed one's too).
std::string table_file_name(const Trace& trace);
// "<stem>.summary.txt": the summaries of a window (a streamed one's: those folded).
std::string summary_file_name(const Trace& trace);
// "<stem>.summary.ndjson": the table's rows and totals, machine-readable (summary_json.h).
std::string summary_json_file_name(const Trace& trace);
// "<stem>.rank.ndjson": the per-rank table of the cross-rank report (rank_table.h).
std::string rank_table_file_name(const Trace& trace);

}  // namespace profagent::exporters
