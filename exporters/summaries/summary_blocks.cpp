#include "exporters/summaries/summary_blocks.h"

#include "exporters/printable_text.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace profagent::exporters {
namespace {

// Decimals that show a time in `unit` to the ns.
int exact_decimals(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::S: return 9;
    case TimeUnit::Ms: return 6;
    case TimeUnit::Us: return 3;
    case TimeUnit::Ns: return 0;
  }
  return 6;
}

// As the JSON output writes a ratio (12 significant digits).
std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.12g", std::isfinite(v) ? v : 0.0);
  return text;
}

std::string fixed(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, v);
  return text;
}

double unit_ns(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::S: return 1e9;
    case TimeUnit::Ms: return 1e6;
    case TimeUnit::Us: return 1e3;
    case TimeUnit::Ns: return 1;
  }
  return 1e6;
}

constexpr std::size_t kIndentLevels = 16;

class BlockMaker {
 public:
  BlockMaker(const Trace& t, const Summaries& s, const SummaryOptions& o, BlockLayout layout)
      : t_(t), s_(s), o_(o), csv_(layout == BlockLayout::Csv), decimals_(csv_ ? exact_decimals(o.unit) : 2) {}

  std::vector<SummaryBlock> make() {
    std::vector<SummaryBlock> out;
    for (const std::string& name : o_.names) out.push_back(block(name));
    return out;
  }

 private:
  std::string time(uint64_t ns) const { return format_in_unit(ns, o_.unit, decimals_); }
  // Text: two decimals. CSV, a machine format: times to the ns and ratios as JSON writes them.
  std::string ratio(double r) const { return csv_ ? number(r) : fixed(r, decimals_); }
  // CSV has no preamble: a time column's header carries its unit ("CPU Total (ms)").
  std::string timed(std::string head) const {
    return csv_ ? head + " (" + std::string(time_unit_name(o_.unit)) + ")" : head;
  }
  // A value that does not exist: "-" in text, an empty cell in CSV (a missing value to pandas).
  std::string none() const { return csv_ ? "" : "-"; }
  // Two spaces per level, up to kIndentLevels; a deeper row says its depth instead, so that a
  // trace nesting operators 20,000 deep cannot make every line 40,000 spaces wide.
  std::string indent(const std::string& name, int depth) const {
    if (csv_) return name;
    const std::size_t levels = std::min<std::size_t>(static_cast<std::size_t>(std::max(depth, 0)), kIndentLevels);
    const std::string deeper = static_cast<std::size_t>(depth) > kIndentLevels ? "[depth " + std::to_string(depth) + "] " : "";
    return std::string(2 * levels, ' ') + deeper + truncate(name, 70);
  }
  static std::string truncate(const std::string& name, std::size_t width) {
    return name.size() <= width ? name : std::string(utf8_prefix(name, width - 3)) + "...";
  }

  void stat_header(std::vector<std::string>& h, const char* side) const {
    if (!csv_) return h.push_back(std::string(side) + " Total / Avg / Max / Min / Ratio(%)");
    for (const char* part : {"Total", "Avg", "Max", "Min"}) h.push_back(timed(std::string(side) + " " + part));
    h.push_back(std::string(side) + " Ratio(%)");
  }
  void stat_cells(std::vector<std::string>& r, const std::optional<Stat>& st, bool only_total = false) const {
    std::vector<std::string> parts;
    if (!st) parts.assign(5, none());
    else if (only_total) parts = {time(st->total_ns), none(), none(), none(), ratio(st->ratio)};
    else parts = {time(st->total_ns), time(st->avg_ns()), time(st->max_ns), time(st->min_ns), ratio(st->ratio)};
    if (csv_) {
      r.insert(r.end(), parts.begin(), parts.end());
      return;
    }
    std::string cell;
    for (std::size_t i = 0; i < parts.size(); ++i) cell += (i ? " / " : "") + parts[i];
    r.push_back(cell);
  }

  SummaryBlock start(const std::string& name, const char* title) const {
    SummaryBlock b;
    b.name = name;
    b.title = title;
    if (!csv_) b.preamble.push_back("Time unit: " + std::string(time_unit_name(o_.unit)));
    return b;
  }

  void scope_notes(SummaryBlock& b) const {
    if (!s_.has_steps) b.notes.push_back("No ProfilerStep in this trace: the whole trace is one span (\"Window\").");
    if (s_.outside_host || s_.outside_device) {
      b.notes.push_back("Left out (in no step): " + std::to_string(s_.outside_host) + " host records, " +
                        std::to_string(s_.outside_device) + " device records.");
    }
  }

  SummaryBlock block(const std::string& name) const {
    if (name == "device") return device();
    if (name == "overview") return overview();
    if (name == "model") return model();
    if (name == "distributed") return distributed();
    if (name == "operator") return threads(name, "Operator Summary", s_.operators);
    if (name == "kernel") return rows(name, "Kernel Summary", s_.kernels, false, s_.kernels_total);
    if (name == "memory_manipulation") {
      return rows(name, "Memory Manipulation Summary", s_.memory_manipulation, true, s_.memory_manipulation_total);
    }
    if (name == "user_defined") return threads(name, "UserDefined Summary", s_.user_defined);
    if (name == "perf") return perf();
    if (name == "step_trace") return step_trace();
    if (name == "op_type") return op_types();
    if (name == "key_averages") {
      if (csv_) return key_averages_rows();
      return raw(name, "key_averages", render_key_averages(s_.key_averages, o_.table));
    }
    return csv_ ? memory_rows() : raw(name, "Memory Summary", render_memory_summary(t_, s_.memory));
  }

  SummaryBlock raw(const std::string& name, const char* title, std::string text) const {
    SummaryBlock b;
    b.name = name;
    b.title = title;
    b.raw = text.empty() ? "(nothing recorded)\n" : std::move(text);
    return b;
  }

  SummaryBlock key_averages_rows() const {
    SummaryBlock b = start("key_averages", "key_averages");
    b.header = {"Name", "Kind", "Calls", timed("Self CPU"), timed("CPU total"), timed("Self CUDA"), timed("CUDA total"),
                "CPU Mem (bytes)", "Self CPU Mem (bytes)", "CUDA Mem (bytes)", "Self CUDA Mem (bytes)"};
    const std::size_t limit = o_.table.row_limit > 0 ? static_cast<std::size_t>(o_.table.row_limit) : SIZE_MAX;
    for (const TableRow& r : s_.key_averages.rows) {
      if (b.rows.size() == limit) break;
      b.rows.push_back({r.name, std::string(row_kind_name(r.kind)), std::to_string(r.count), time(r.self_cpu_ns),
                        time(r.cpu_total_ns), time(r.self_cuda_ns), time(r.cuda_total_ns), std::to_string(r.cpu_memory),
                        std::to_string(r.self_cpu_memory), std::to_string(r.cuda_memory),
                        std::to_string(r.self_cuda_memory)});
    }
    return b;
  }

  SummaryBlock memory_rows() const {
    SummaryBlock b{"memory", "Memory Summary", {}, {"Device", "Peak Allocated (bytes)", "Peak Reserved (bytes)",
                   "End Allocated (bytes)", "End Reserved (bytes)"}, {}, {}, {}, {}, {}};
    for (const DeviceMemory& d : s_.memory.devices) {
      b.rows.push_back({d.device < 0 ? "CPU" : "GPU" + std::to_string(d.device), std::to_string(d.peak_allocated),
                        std::to_string(d.peak_reserved), std::to_string(d.end_allocated), std::to_string(d.end_reserved)});
    }
    return b;
  }

  SummaryBlock device() const {
    SummaryBlock b{name_of("device"), "Device Summary", {}, {"Device", "Utilization (%)"}, {}, {}, {}, {}, {}};
    for (const DeviceUtilization& d : s_.devices) {
      b.rows.push_back({d.name, d.percent ? ratio(*d.percent) : csv_ ? "" : "n/a"});
    }
    b.notes = {"CPU(Process) = this process's CPU time on all cores / elapsed time (" + time(s_.elapsed_ns) + " " +
                   std::string(time_unit_name(o_.unit)) + "); up to 100% x cores.",
               "CPU(System) = busy time of all cores / (busy + idle time).",
               "GPU = merged kernel time of the device / the steps' time, each step widened to its own kernels",
               "on the device (they run on after the step's host end when the host runs ahead): at most 100%."};
    if (s_.devices.size() >= 2 && !s_.devices[0].percent) {
      b.notes.push_back("n/a: this trace holds no /proc CPU times (only profagent's traces do).");
    }
    return b;
  }

  SummaryBlock overview() const {
    SummaryBlock b = start("overview", "Overview Summary");
    // Text: a CPU table with a GPU part under its own header; CSV: one table, a Side column.
    b.header = {"Event Type", "Calls", csv_ ? timed("Time") : "CPU Time", "Ratio (%)"};
    if (csv_) b.header.insert(b.header.begin(), "Side");
    auto add = [&](const char* side, const TimeShare& r, int depth) {
      b.rows.push_back({indent(r.name, depth), std::to_string(r.calls), time(r.time_ns), ratio(r.ratio)});
      if (csv_) b.rows.back().insert(b.rows.back().begin(), side);
    };
    for (std::size_t i = 0; i < s_.overview_cpu.size(); ++i) add("CPU", s_.overview_cpu[i], i ? 1 : 0);
    if (!csv_) b.subheaders.push_back({b.rows.size(), {"", "Calls", "GPU Time", "Ratio (%)"}});
    for (const TimeShare& r : s_.overview_gpu) add("GPU", r, 1);
    b.notes = {"Events of one type that overlap (on any thread or stream) are counted once: their intervals are",
               "merged and the merged lengths summed. Types may include each other (Operator includes",
               "OperatorInner), so the ratios do not add up to 100%."};
    scope_notes(b);
    return b;
  }

  SummaryBlock model() const {
    SummaryBlock b = start("model", "Model Summary");
    b.header = {"Name", "Calls"};
    stat_header(b.header, "CPU");
    stat_header(b.header, "GPU");
    for (std::size_t i = 0; i < s_.model.size(); ++i) {
      const SummaryRow& r = s_.model[i];
      const bool others = r.name == "Others";
      std::vector<std::string> row{indent(r.name, r.depth), others ? none() : std::to_string(r.calls)};
      stat_cells(row, r.cpu, others);
      stat_cells(row, r.gpu, others);
      b.rows.push_back(std::move(row));
    }
    for (const auto& [phase, source] : s_.phase_sources) {
      b.notes.push_back(phase + ": " + (source.empty() ? "not found in this trace" : source));
    }
    scope_notes(b);
    return b;
  }

  SummaryBlock distributed() const {
    SummaryBlock b = start("distributed", "Distributed Summary");
    b.header = {"Name", timed("Total Time"), "Ratio (%)"};
    for (std::size_t i = 0; i < s_.distributed.size(); ++i) {
      const TimeShare& r = s_.distributed[i];
      b.rows.push_back({indent(r.name, i ? 1 : 0), time(r.time_ns), ratio(r.ratio)});
    }
    b.notes = {"Communication: kernels named nccl/rccl/hccl; Computation: the other kernels; Overlap: both at once."};
    return b;
  }

  void add_rows(SummaryBlock& b, const std::vector<SummaryRow>& rows, bool with_cpu) const {
    for (const SummaryRow& r : rows) {
      std::vector<std::string> row{indent(r.name, r.depth), std::to_string(r.calls)};
      if (csv_) row.insert(row.begin() + 1, std::to_string(r.depth));
      if (with_cpu) stat_cells(row, r.cpu);
      stat_cells(row, r.gpu);
      b.rows.push_back(std::move(row));
    }
  }

  void row_header(SummaryBlock& b, bool with_cpu) const {
    b.header = {"Name", "Calls"};
    if (csv_) b.header.insert(b.header.begin() + 1, "Depth");
    if (with_cpu) stat_header(b.header, "CPU");
    stat_header(b.header, "GPU");
  }

  // --row-limit cut a table: said under it (JSON says it with "rows_total").
  static void limit_note(SummaryBlock& b, std::size_t shown, std::size_t total, const std::string& what) {
    const std::string note = row_limit_note(shown, total);
    if (!note.empty()) b.notes.push_back(what + note);
  }
  static std::size_t top_level(const std::vector<SummaryRow>& rows) {
    return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const SummaryRow& r) { return r.depth == 0; }));
  }

  SummaryBlock rows(const std::string& name, const char* title, const std::vector<SummaryRow>& rows, bool with_cpu,
                    std::size_t total) const {
    SummaryBlock b = start(name, title);
    row_header(b, with_cpu);
    add_rows(b, rows, with_cpu);
    limit_note(b, top_level(rows), total, "");
    scope_notes(b);
    return b;
  }

  SummaryBlock threads(const std::string& name, const char* title, const std::vector<ThreadRows>& sections) const {
    SummaryBlock b = start(name, title);
    row_header(b, true);
    if (csv_) b.header.insert(b.header.begin(), "Thread");
    for (const ThreadRows& section : sections) {
      const std::size_t first = b.rows.size();
      b.sections.push_back({first, "Thread: " + section.thread});
      add_rows(b, section.rows, true);
      limit_note(b, top_level(section.rows), section.rows_total, sections.size() > 1 ? "Thread " + section.thread + ": " : "");
      if (csv_) {
        for (std::size_t i = first; i < b.rows.size(); ++i) b.rows[i].insert(b.rows[i].begin(), section.thread);
      }
    }
    scope_notes(b);
    return b;
  }

  SummaryBlock perf() const {
    SummaryBlock b;
    b.name = "perf";
    b.title = "Perf Summary";
    if (!s_.perf_figures) return b.notes.push_back("No ProfilerStep in this trace: no per-step figures."), b;
    const PerfFigures& f = *s_.perf_figures;
    auto s = [this](double seconds) { return fixed(seconds, csv_ ? 9 : 5); };
    auto ips = [this](double v) { return std::isinf(v) ? std::string("inf") : csv_ ? number(v) : fixed(v, 5); };
    if (csv_) {  // the ratio is a row, each row says its unit
      b.header = {"Metric", "Unit", "avg", "max", "min"};
      b.rows = {{"reader_cost", "s", s(f.reader_avg_s), s(f.reader_max_s), s(f.reader_min_s)},
                {"batch_cost", "s", s(f.batch_avg_s), s(f.batch_max_s), s(f.batch_min_s)},
                {"ips", "steps/s", ips(f.ips_avg), ips(f.ips_max), ips(f.ips_min)},
                {"reader_ratio", "%", number(f.reader_ratio), "", ""}};
      return b;
    }
    b.preamble = {"Reader Ratio: " + fixed(f.reader_ratio, 3) + "%", "Time Unit: s, IPS Unit: steps/s"};
    b.header = {"", "avg", "max", "min"};
    b.rows = {{"reader_cost", s(f.reader_avg_s), s(f.reader_max_s), s(f.reader_min_s)},
              {"batch_cost", s(f.batch_avg_s), s(f.batch_max_s), s(f.batch_min_s)},
              {"ips", ips(f.ips_avg), ips(f.ips_max), ips(f.ips_min)}};
    b.notes = {"batch_cost: step time; reader_cost: its Dataloader time; ips: steps per second (avg: steps / total time)."};
    return b;
  }

  SummaryBlock step_trace() const {
    SummaryBlock b = start("step_trace", "Step Trace");
    b.header = {"Step", "FP Point", "BP Point", timed("Iteration Gap"), timed("FP+BP"), timed("Iteration Tail")};
    auto point = [&](const std::string& name) { return csv_ ? name : name.empty() ? "(none)" : truncate(name, 40); };
    for (const StepTraceStep& st : s_.step_trace) {
      if (!st.complete) {
        b.rows.push_back({std::to_string(st.step), point(st.fp), point(st.bp), none(), none(), none()});
        continue;
      }
      b.rows.push_back({std::to_string(st.step), point(st.fp), point(st.bp), time(st.iteration_gap_ns),
                        time(st.fp_bp_ns), time(st.tail_ns)});
    }
    if (const auto& a = s_.step_trace_average) {
      b.rows.push_back({"Average", "", "", time(a->iteration_gap_ns), time(a->fp_bp_ns), time(a->tail_ns)});
    }
    if (s_.step_trace.empty()) b.notes.push_back("No ProfilerStep in this trace: no step trace.");
    b.notes.push_back("FP point: " + s_.fp_point_rule + "; BP point: " + s_.bp_point_rule + ".");
    b.notes.push_back("Iteration Gap = FP start - step start; FP+BP = BP end - FP start; Iteration Tail = step end - BP end.");
    return b;
  }

  SummaryBlock op_types() const {
    SummaryBlock b = start("op_type", "Operator Type Statistics");
    b.header = {"Type", "Calls", timed("Device Time (self)"), timed("CPU Time (self)"), "Ratio (%)"};
    for (const OpTypeRow& r : s_.op_types) {
      b.rows.push_back({csv_ ? r.type : truncate(r.type, 70), std::to_string(r.calls), time(r.device_ns), time(r.cpu_ns),
                        ratio(r.ratio)});
    }
    b.notes.push_back(std::string("Ratio: of the ") + (s_.op_type_by_device ? "device" : "CPU") +
                      " time of all operators (self time: without nested operators).");
    return b;
  }

  static std::string name_of(const char* n) { return n; }

  const Trace& t_;
  const Summaries& s_;
  const SummaryOptions& o_;
  bool csv_;
  int decimals_;
};

}  // namespace

std::string format_in_unit(uint64_t ns, TimeUnit unit, int decimals) {
  return fixed(double(ns) / unit_ns(unit), decimals);
}

std::vector<SummaryBlock> summary_blocks(const Trace& trace, const Summaries& s, const SummaryOptions& o,
                                         BlockLayout layout) {
  return BlockMaker(trace, s, o, layout).make();
}

}  // namespace profagent::exporters
