// The summaries of one trace: Paddle's (Device, Overview, Model, Distributed, Operator, Kernel,
// Memory Manipulation, UserDefined, Perf), MindInsight's (step trace, operator types) and torch's
// key_averages table. What each number is: docs/report.md.
//
// compute_summaries() is a pure function of a finished Trace; the agent runs it at every window
// end (<stem>.summary.txt) and `profagent report` on a trace read back from its file, so the
// two can never disagree. Renderers (text, CSV, JSON, HTML) only format a computed Summaries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/trace.h"
#include "exporters/summaries/memory_summary.h"
#include "exporters/summaries/tables.h"

namespace profagent::exporters {

// Summary names, in the order they are printed (docs/report.md).
inline constexpr std::string_view kSummaryNames[] = {
    "device", "overview", "model", "distributed", "operator", "kernel", "memory_manipulation",
    "user_defined", "perf", "step_trace", "op_type", "key_averages", "memory"};

enum class TimeUnit : uint8_t { S, Ms, Us, Ns };

struct SummaryOptions {
  std::vector<std::string> names;     // which summaries (subset of kSummaryNames, in that order)
  TimeUnit unit = TimeUnit::Ms;
  std::string sort_by = "GPUTotal";   // Paddle's key for the Paddle tables: kDefaultSortKey's twin
  TableOptions table;                 // key_averages (torch's sort key, row limit, grouping)
  int row_limit = kDefaultRowLimit;   // rows per Paddle/MindInsight table; <= 0: all
  int op_type_rows = 20;              // operator types listed before "(others)"
  bool op_detail = false;
  bool thread_sep = false;
  std::string fp_point;               // PROFAGENT_FP_POINT: "" = detect
  std::string bp_point;               // PROFAGENT_BP_POINT
};

// Parses a comma list ("all", names) into options.names; false with `error` on an unknown name.
bool parse_summary_names(std::string_view list, std::vector<std::string>& names, std::string& error);
// Maps torch's and Paddle's sort keys onto each other: sets options.sort_by (Paddle) and
// options.table.sort_by (torch). False with `error` on an unknown key.
bool apply_sort_key(std::string_view key, SummaryOptions& options, std::string& error);
bool parse_time_unit(std::string_view text, TimeUnit& unit);
std::string_view time_unit_name(TimeUnit unit);

// "Total / Avg / Max / Min / Ratio(%)" over the calls of a row.
struct Stat {
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
  uint64_t min_ns = 0;
  uint64_t calls = 0;
  double ratio = 0;  // percent of the row's base
  uint64_t avg_ns() const { return calls ? total_ns / calls : 0; }
  // Inline: the row summaries add every record of their rows.
  void add(uint64_t ns) {
    min_ns = calls == 0 ? ns : (ns < min_ns ? ns : min_ns);
    max_ns = ns > max_ns ? ns : max_ns;
    total_ns += ns;
    ++calls;
  }
};

enum class SummaryRowKind : uint8_t { Operator, Kernel, Memcpy, Memset, Range, Call, Phase };

struct SummaryRow {
  std::string name;
  SummaryRowKind kind = SummaryRowKind::Operator;
  int depth = 0;                 // 0: top level; children follow their parent, depth + 1
  uint64_t calls = 0;
  std::optional<Stat> cpu;       // nullopt: "-" (device records have no CPU time)
  std::optional<Stat> gpu;
};

struct TimeShare {               // Overview / Distributed rows
  std::string name;
  uint64_t calls = 0;
  uint64_t time_ns = 0;
  double ratio = 0;
};

struct ThreadRows {
  std::string thread;            // "All threads merged" or the thread id
  std::vector<SummaryRow> rows;
  std::size_t rows_total = 0;    // top-level rows before --row-limit
};

struct DeviceUtilization {
  std::string name;              // "CPU(Process)", "CPU(System)", "GPU0"
  std::optional<double> percent; // nullopt: not recorded in this trace
};

struct PerfStep {
  uint64_t step = 0;
  uint64_t batch_cost_ns = 0;
  uint64_t reader_cost_ns = 0;
};

// Paddle's Perf Summary figures over the steps (seconds, steps per second).
struct PerfFigures {
  double reader_ratio = 0;                              // percent of the batch cost
  double batch_avg_s = 0, batch_max_s = 0, batch_min_s = 0;
  double reader_avg_s = 0, reader_max_s = 0, reader_min_s = 0;
  double ips_avg = 0, ips_max = 0, ips_min = 0;         // infinite for a zero-length step
};

struct StepTraceStep {
  uint64_t step = 0;
  std::string fp;                // FP point operator ("" when none was found)
  std::string bp;
  uint64_t iteration_gap_ns = 0;
  uint64_t fp_bp_ns = 0;
  uint64_t tail_ns = 0;
  bool complete = false;         // both points found
};

struct OpTypeRow {
  std::string type;
  uint64_t calls = 0;
  uint64_t device_ns = 0;        // self device time
  uint64_t cpu_ns = 0;           // self CPU time
  double ratio = 0;
};

struct Summaries {
  // What the summaries cover.
  bool has_steps = false;        // span kind: "ProfileStep" or "Window"
  uint64_t span_cpu_ns = 0;      // merged step time (or the window span)
  uint64_t span_gpu_ns = 0;      // merged device time of the records in the steps
  uint64_t outside_host = 0;     // records in no step (left out)
  uint64_t outside_device = 0;
  std::vector<std::pair<std::string, std::string>> phase_sources;  // phase -> how it was found

  uint64_t elapsed_ns = 0;       // Device Summary's elapsed time
  std::vector<DeviceUtilization> devices;
  std::vector<TimeShare> overview_cpu;
  std::vector<TimeShare> overview_gpu;
  std::vector<SummaryRow> model;
  std::vector<TimeShare> distributed;
  std::vector<ThreadRows> operators;
  std::vector<SummaryRow> kernels;
  std::size_t kernels_total = 0;              // rows before --row-limit
  std::vector<SummaryRow> memory_manipulation;
  std::size_t memory_manipulation_total = 0;
  std::vector<ThreadRows> user_defined;
  std::vector<PerfStep> perf;
  std::optional<PerfFigures> perf_figures;          // none without steps
  std::vector<StepTraceStep> step_trace;
  std::optional<StepTraceStep> step_trace_average;  // over the steps with both points
  std::string fp_point_rule;     // "PROFAGENT_FP_POINT=conv1" or "first Forward operator"
  std::string bp_point_rule;
  bool op_type_by_device = true; // ratio metric: device time (else CPU)
  std::vector<OpTypeRow> op_types;
  Table key_averages;
  MemorySummary memory;
};

// `--steps A-B`: the records of steps first..last (by ProfilerStep number) with their links;
// nullopt with `error` when the trace has no such step.
std::optional<Trace> select_steps(const Trace& trace, uint64_t first, uint64_t last, std::string& error);

// Whether options.names holds `name`.
bool wants(const SummaryOptions& options, std::string_view name);

Summaries compute_summaries(const Trace& trace, const SummaryOptions& options);

// What a window's end writes, computed once: the summaries of options.names and, whatever they
// are, the exit table and the memory summary (<stem>.table.txt).
Summaries compute_window_summaries(const Trace& trace, const SummaryOptions& options);
// The head of <stem>.table.txt and of the table on stderr: the key_averages table (with its row
// limit note) and the memory summary, each exactly the text of its block in
// `profagent report --summary key_averages,memory` below the block's title line. The table
// file and stderr end, after the step lines, with the overhead line (overhead_line.h), as the
// summaries' text does.
std::string render_exit_table(const Trace& trace, const Summaries& s, const SummaryOptions& options);

// Renderers. `wanted` is options.names; a summary with nothing to show says so in one line.
std::string render_summaries_text(const Trace& trace, const Summaries& s, const SummaryOptions& options);
// --format csv: one table per summary, each a file of its own (pure CSV: a header line, then one
// line per row; no title, unit line or blank line), its first column "Trace" naming the trace so
// that the tables of several traces concatenate.
struct CsvTable {
  std::string name;    // kSummaryNames entry
  std::string header;  // the header line
  std::string rows;    // the row lines
};
std::vector<CsvTable> render_summaries_csv(const Trace& trace, const Summaries& s, const SummaryOptions& options,
                                           std::string_view trace_path);
// One trace's object of the `--format json` output ({"path": …, "summaries": {…}}); `source` is
// "profagent" or "kineto", `skipped` the events of kinds the summaries do not use, by category.
void write_summaries_json(const Trace& trace, const Summaries& s, const SummaryOptions& options,
                          std::string_view path, std::string_view source,
                          const std::vector<std::pair<std::string, uint64_t>>& skipped, JsonWriter& w);

}  // namespace profagent::exporters
