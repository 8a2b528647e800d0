// What the agent calls at each window end and at exit: one finished Trace in, files out.
//
// Formats, one per file, all named from one stem (file_names.h); each is one entry of the
// exporter registry (export_entries.h), which says whether the options want it and writes it:
//   <stem>.trace.json      Chrome/Perfetto trace, Kineto layout (chrome_trace.h); and/or, as
//   <stem>.trace.json.gz   PROFAGENT_TRACE_FORMAT says (trace_format.h), the same gzip-compressed
//   <stem>.pftrace         or Perfetto's protobuf trace (perfetto_trace.h)
//   <stem>.table.txt       the key_averages()-style table (tables.h)
//   <stem>.summary.txt     Paddle's, MindInsight's summaries (report/summaries.h)
//   <stem>.self_cuda_time_total.folded, <stem>.self_cpu_time_total.folded
//                          flame graph input, when the window has call stacks (folded_stacks.h)
//   <stem>.summary.ndjson  the same rows and totals, machine-readable (summary_json.h); one
//                          JSON object on one line. Not ".json": HTA loads every *.json in a
//                          trace directory as a trace.
// Nothing throws; every failure becomes one line in ExportResult::errors and the other
// formats are still written.
#pragma once

#include <string>
#include <vector>

#include "collector/trace.h"
#include "exporters/output_stream.h"
#include "exporters/summaries/summaries.h"
#include "exporters/summaries/tables.h"
#include "exporters/trace_format.h"

namespace profagent::exporters {

struct ExportOptions {
  std::string output_dir = "profagent_out";  // PROFAGENT_OUTPUT_DIR
  TableOptions table;                         // PROFAGENT_SORT_BY, PROFAGENT_ROW_LIMIT, ...
  bool write_trace = true;
  TraceFormats trace_formats;  // PROFAGENT_TRACE_FORMAT: json (default), json.gz, perfetto
  bool write_table = true;
  bool write_summary = true;
  bool write_folded = true;   // flame graph files, when the window has call stacks
  // <stem>.summary.txt: the summaries `profagent report` prints for this trace, by the same
  // code (compute_summaries); not written when summaries.names is empty.
  SummaryOptions summaries;
};

struct ExportResult {
  std::vector<std::string> paths;   // every file written, as OutputSink::location() gives it
  std::string table;                // the text table for stderr: per-step part summarised
                                    // ("" when there are no rows); the file has every step
  std::vector<std::string> errors;  // one line each
  uint64_t trace_events = 0;  // of the last trace format written
  uint64_t trace_bytes = 0;

  bool ok() const { return errors.empty(); }
  // The closing stderr line: "wrote a, b, c" (or "wrote nothing").
  std::string written_line() const;
};

// Writes the window's files into options.output_dir (created if missing): every entry of the
// registry that the options want, in the registry's order.
ExportResult export_window(const Trace& trace, const ExportOptions& options);

// The same through any sink (MemorySink in tests).
ExportResult export_window(const Trace& trace, const ExportOptions& options, OutputSink& sink);

}  // namespace profagent::exporters
