// Parsing of `profagent report` options (report_command.h).
#include <charconv>
#include <cstdlib>

#include "agent/report/report_command.h"

namespace profagent::report {
namespace {

bool whole_number(std::string_view text, uint64_t& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}

// "A-B", "A-", "-B" or "A".
bool parse_steps(std::string_view text, ReportOptions& o) {
  const std::size_t dash = text.find('-');
  if (dash == std::string_view::npos) return whole_number(text, o.first_step) && whole_number(text, o.last_step);
  const std::string_view a = text.substr(0, dash), b = text.substr(dash + 1);
  if (a.empty() && b.empty()) return false;
  if (!a.empty() && !whole_number(a, o.first_step)) return false;
  if (!b.empty() && !whole_number(b, o.last_step)) return false;
  return o.first_step <= o.last_step;
}

bool parse_format(std::string_view text, ReportFormat& f) {
  if (text == "text") f = ReportFormat::Text;
  else if (text == "csv") f = ReportFormat::Csv;
  else if (text == "json") f = ReportFormat::Json;
  else if (text == "html") f = ReportFormat::Html;
  else return false;
  return true;
}

// Applies `flag value`; false with `error` when either is wrong.
bool apply(const std::string& flag, const std::string& value, ReportOptions& o, bool& row_limit_given,
           std::string& error) {
  exporters::SummaryOptions& s = o.summary;
  uint64_t n = 0;
  if (flag == "--summary") return exporters::parse_summary_names(value, s.names, error);
  if (flag == "--format") {
    if (parse_format(value, o.format)) return true;
    return error = "--format is text, csv, json or html, not '" + value + "'", false;
  }
  if (flag == "--sort-by") return exporters::apply_sort_key(value, s, error);
  if (flag == "--group-by") {
    if (exporters::parse_group_by(value, s.table)) return true;
    return error = "--group-by is input_shape, stack_n:N (N 1.." + std::to_string(exporters::kMaxStackFrames) +
                   ") or none, not '" + value + "'", false;
  }
  if (flag == "--row-limit") {
    if (!whole_number(value, n) || n > 1000000) return error = "--row-limit needs a whole number, got '" + value + "'", false;
    s.row_limit = s.table.row_limit = int(n);
    row_limit_given = true;
    return true;
  }
  if (flag == "--max-gzip-ratio") {
    if (!whole_number(value, o.max_gzip_ratio)) return error = "--max-gzip-ratio needs a whole number, got '" + value + "'", false;
    return true;
  }
  if (flag == "--time-unit") {
    if (exporters::parse_time_unit(value, s.unit)) return true;
    return error = "--time-unit is s, ms, us or ns, not '" + value + "'", false;
  }
  if (flag == "--steps") {
    if (parse_steps(value, o)) return true;
    return error = "--steps needs A-B, A- or -B (step numbers, A <= B), got '" + value + "'", false;
  }
  if (flag == "--folded") {
    for (exporters::FoldedMetric metric : {exporters::FoldedMetric::SelfCudaTimeTotal, exporters::FoldedMetric::SelfCpuTimeTotal}) {
      const std::string_view suffix = exporters::folded_suffix(metric);  // "<metric>.folded"
      if (value == suffix.substr(0, suffix.rfind('.'))) return o.folded = metric, true;
    }
    return error = "--folded is self_cuda_time_total or self_cpu_time_total, not '" + value + "'", false;
  }
  if (flag == "--output") {
    if (value.empty()) return error = "--output needs a file name", false;
    return o.output = value, true;
  }
  return error = "unknown option " + flag + " (see profagent report --help)", false;
}

bool is_switch(const std::string& arg, ReportOptions& o) {
  if (arg == "--op-detail") return o.summary.op_detail = true;
  if (arg == "--thread-sep") return o.summary.thread_sep = true;
  if (arg == "-h" || arg == "--help") return o.help = true;
  return false;
}

void defaults_from_environment(exporters::SummaryOptions& s) {
  if (const char* fp = std::getenv("PROFAGENT_FP_POINT")) s.fp_point = fp;
  if (const char* bp = std::getenv("PROFAGENT_BP_POINT")) s.bp_point = bp;
}

}  // namespace

std::optional<ReportOptions> parse_report_arguments(const std::vector<std::string>& args, std::string& error) {
  ReportOptions o;
  defaults_from_environment(o.summary);
  if (!exporters::parse_summary_names("all", o.summary.names, error)) return std::nullopt;
  bool options_end = false;
  bool row_limit_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_end || arg.rfind("-", 0) != 0 || arg == "-") {
      o.paths.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_end = true;
      continue;
    }
    if (is_switch(arg, o)) continue;
    const std::size_t eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    std::string value;
    if (eq != std::string::npos) value = arg.substr(eq + 1);
    else if (i + 1 < args.size()) value = args[++i];
    else return error = flag + " needs a value", std::nullopt;
    if (!apply(flag, value, o, row_limit_given, error)) return std::nullopt;
  }
  if (o.help) return o;
  if (o.paths.empty()) return error = "no trace given (profagent report [options] PATH...)", std::nullopt;
  if (o.folded && o.format != ReportFormat::Text) return error = "--folded prints text only", std::nullopt;
  if (o.format == ReportFormat::Html && o.output.empty()) {
    return error = "--format html needs --output FILE", std::nullopt;
  }
  if (o.format == ReportFormat::Csv && o.summary.names.size() > 1 && o.output.empty()) {
    return error = "--format csv writes one file per summary: give --output DIR, or one --summary NAME", std::nullopt;
  }
  // Machine formats hold every row unless told otherwise; people read the first 100.
  const bool machine = o.format == ReportFormat::Json || o.format == ReportFormat::Csv;
  if (machine && !row_limit_given) o.summary.row_limit = o.summary.table.row_limit = 0;
  return o;
}

}  // namespace profagent::report
