// The exporter registry: every output of a window is one entry of one list
// (export_entries.cpp): its name, whether the options want it, and how it is written. What
// several entries read (the table, the memory summary, the summaries: one computation of the
// summary engine per window, compute_window_summaries; the steps' figures) is made on first use
// by WindowOutputs and shared by them.
//
// A new output format is one file with its writer and one row in the list (plus its line in
// CMakeLists.txt); export_window() and the agent's one export-and-report routine need nothing.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collector/trace.h"
#include "exporters/exporter.h"
#include "exporters/output_stream.h"
#include "exporters/summaries/step_summary.h"
#include "exporters/summaries/summaries.h"

namespace profagent::exporters {

// One window's Trace and options, with what its entries compute from them, each at most once.
class WindowOutputs {
 public:
  WindowOutputs(const Trace& trace, const ExportOptions& options);
  const Trace& trace() const { return trace_; }
  const ExportOptions& options() const { return options_; }
  const std::string& stem() const { return stem_; }  // file_names.h
  // The summary options of this window, with the exit table's options (sort key, grouping).
  const SummaryOptions& summary_options() const { return summary_options_; }
  const Summaries& summaries();                      // every table and summary of the window
  const Table& table() { return summaries().key_averages; }
  const MemorySummary& memory() { return summaries().memory; }
  // The steps' figures, for the table file's step summary and the stderr table's brief one.
  const std::vector<StepFigures>& step_figures();

 private:
  const Trace& trace_;
  const ExportOptions& options_;
  std::string stem_;
  SummaryOptions summary_options_;
  std::optional<Summaries> summaries_;
  std::optional<std::vector<StepFigures>> step_figures_;
};

struct ExportEntry {
  std::string_view name;
  bool (*wanted)(const WindowOutputs& outputs);
  // Appends the files it wrote to result.paths and one line per failure to result.errors.
  void (*write)(WindowOutputs& outputs, OutputSink& sink, ExportResult& result);
};

// Every output, in the order they are written (and named in the closing "wrote" line).
std::span<const ExportEntry> export_entries();

// Opens `name`, lets `body` fill it, commits; records the path or one error line. Out of
// memory while filling it, the file is not published and the other outputs are still written.
// `gzip`: what body writes is compressed on its way to the file (gzip_stream.h).
void write_file(OutputSink& sink, const std::string& name, ExportResult& result,
                const std::function<bool(OutputStream&)>& body, bool gzip = false);

// The text table for stderr (ExportResult::table), also when no file can be written.
void write_stderr_table(WindowOutputs& outputs, ExportResult& result);

}  // namespace profagent::exporters
