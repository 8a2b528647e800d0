// `profagent report [options] PATH...`: the summaries of saved traces (docs/report.md).
// Option parsing is pure (unit-tested); run_report() reads the files and writes the output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/report/trace_stream.h"
#include "exporters/folded_stacks.h"
#include "exporters/summaries/summaries.h"

namespace profagent::report {

enum class ReportFormat { Text, Csv, Json, Html };

struct ReportOptions {
  bool help = false;
  exporters::SummaryOptions summary;
  ReportFormat format = ReportFormat::Text;
  std::string output;            // "" = stdout; a folder for --format csv with several summaries
  uint64_t max_gzip_ratio = kDefaultMaxGzipRatio;  // --max-gzip-ratio (0: no limit)
  uint64_t first_step = 0;       // --steps A-B (ProfilerStep numbers, inclusive)
  uint64_t last_step = UINT64_MAX;
  // --folded METRIC: each trace's folded stacks (exporters/folded_stacks.h), as the agent
  // writes <stem>.METRIC.folded, instead of its summaries.
  std::optional<exporters::FoldedMetric> folded;
  std::vector<std::string> paths;
};

// `args` are the words after "report". nullopt with `error` (one line) on a bad command line.
std::optional<ReportOptions> parse_report_arguments(const std::vector<std::string>& args, std::string& error);

// Reports every trace; returns the exit status: 0, or 2 when any file or the output failed
// (one line on stderr each; the other files are still reported).
int run_report(const ReportOptions& options);

extern const char* const kReportHelp;

}  // namespace profagent::report
