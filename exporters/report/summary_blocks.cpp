#include "exporters/report/summary_blocks.h"

#include <cmath>
#include <cstdio>

namespace profagent::exporters {
namespace {

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

class BlockMaker {
 public:
  BlockMaker(const Trace& t, const Summaries& s, const SummaryOptions& o, BlockLayout layout)
      : t_(t), s_(s), o_(o), csv_(layout == BlockLayout::Csv), decimals_(csv_ ? 3 : 2) {}

  std::vector<SummaryBlock> make() {
    std::vector<SummaryBlock> out;
    for (const std::string& name : o_.names) out.push_back(block(name));
    return out;
  }

 private:
  std::string time(uint64_t ns) const { return format_in_unit(ns, o_.unit, decimals_); }
  std::string ratio(double r) const { return fixed(r, decimals_); }
  std::string indent(const std::string& name, int depth) const {
    return csv_ ? name : std::string(2 * static_cast<std::size_t>(depth), ' ') + truncate(name, 70);
  }
  static std::string truncate(const std::string& name, std::size_t width) {
    return name.size() <= width ? name : name.substr(0, width - 3) + "...";
  }

  void stat_header(std::vector<std::string>& h, const char* side) const {
    if (!csv_) return h.push_back(std::string(side) + " Total / Avg / Max / Min / Ratio(%)");
    for (const char* part : {"Total", "Avg", "Max", "Min", "Ratio(%)"}) h.push_back(std::string(side) + " " + part);
  }
  void stat_cells(std::vector<std::string>& r, const std::optional<Stat>& st, bool only_total = false) const {
    std::vector<std::string> parts;
    if (!st) parts.assign(5, "-");
    else if (only_total) parts = {time(st->total_ns), "-", "-", "-", ratio(st->ratio)};
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
    b.preamble.push_back("Time unit: " + std::string(time_unit_name(o_.unit)));
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
    if (name == "kernel") return rows(name, "Kernel Summary", s_.kernels, false);
    if (name == "memory_manipulation") return rows(name, "Memory Manipulation Summary", s_.memory_manipulation, true);
    if (name == "user_defined") return threads(name, "UserDefined Summary", s_.user_defined);
    if (name == "perf") return perf();
    if (name == "step_trace") return step_trace();
    if (name == "op_type") return op_types();
    if (name == "key_averages") {
      return csv_ ? key_averages_rows() : raw(name, "key_averages", render_table(s_.key_averages, o_.table));
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
    b.header = {"Name", "Kind", "Calls", "Self CPU", "CPU total", "Self CUDA", "CUDA total",
                "CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem"};
    for (const TableRow& r : s_.key_averages.rows) {
      b.rows.push_back({r.name, std::string(row_kind_name(r.kind)), std::to_string(r.count), time(r.self_cpu_ns),
                        time(r.cpu_total_ns), time(r.self_cuda_ns), time(r.cuda_total_ns), std::to_string(r.cpu_memory),
                        std::to_string(r.self_cpu_memory), std::to_string(r.cuda_memory),
                        std::to_string(r.self_cuda_memory)});
    }
    return b;
  }

  SummaryBlock memory_rows() const {
    SummaryBlock b{"memory", "Memory Summary", {"Bytes"}, {"Device", "Peak Allocated", "Peak Reserved",
                   "End Allocated", "End Reserved"}, {}, {}, {}, {}, {}};
    for (const DeviceMemory& d : s_.memory.devices) {
      b.rows.push_back({d.device < 0 ? "CPU" : "GPU" + std::to_string(d.device), std::to_string(d.peak_allocated),
                        std::to_string(d.peak_reserved), std::to_string(d.end_allocated), std::to_string(d.end_reserved)});
    }
    return b;
  }

  SummaryBlock device() const {
    SummaryBlock b{name_of("device"), "Device Summary", {}, {"Device", "Utilization (%)"}, {}, {}, {}, {}, {}};
    for (const DeviceUtilization& d : s_.devices) b.rows.push_back({d.name, d.percent ? fixed(*d.percent, 2) : "n/a"});
    b.notes = {"CPU(Process) = this process's CPU time on all cores / elapsed time (" + time(s_.elapsed_ns) + " " +
                   std::string(time_unit_name(o_.unit)) + "); up to 100% x cores.",
               "CPU(System) = busy time of all cores / (busy + idle time).",
               "GPU = merged kernel time of the device / the step time."};
    if (s_.devices.size() >= 2 && !s_.devices[0].percent) {
      b.notes.push_back("n/a: this trace holds no /proc CPU times (only profagent's traces do).");
    }
    return b;
  }

  SummaryBlock overview() const {
    SummaryBlock b = start("overview", "Overview Summary");
    b.header = {"Event Type", "Calls", "CPU Time", "Ratio (%)"};
    for (std::size_t i = 0; i < s_.overview_cpu.size(); ++i) {
      const TimeShare& r = s_.overview_cpu[i];
      b.rows.push_back({indent(r.name, i ? 1 : 0), std::to_string(r.calls), time(r.time_ns), ratio(r.ratio)});
    }
    b.subheaders.push_back({b.rows.size(), {"", "Calls", "GPU Time", "Ratio (%)"}});
    for (const TimeShare& r : s_.overview_gpu) {
      b.rows.push_back({indent(r.name, 1), std::to_string(r.calls), time(r.time_ns), ratio(r.ratio)});
    }
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
      std::vector<std::string> row{indent(r.name, r.depth), others ? "-" : std::to_string(r.calls)};
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
    b.header = {"Name", "Total Time", "Ratio (%)"};
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

  SummaryBlock rows(const std::string& name, const char* title, const std::vector<SummaryRow>& rows, bool with_cpu) const {
    SummaryBlock b = start(name, title);
    row_header(b, with_cpu);
    add_rows(b, rows, with_cpu);
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
    auto s = [](double seconds) { return fixed(seconds, 5); };
    auto ips = [](double v) { return std::isinf(v) ? std::string("inf") : fixed(v, 5); };
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
    b.header = {"Step", "FP Point", "BP Point", "Iteration Gap", "FP+BP", "Iteration Tail"};
    for (const StepTraceStep& st : s_.step_trace) {
      if (!st.complete) {
        b.rows.push_back({std::to_string(st.step), st.fp.empty() ? "(none)" : truncate(st.fp, 40),
                          st.bp.empty() ? "(none)" : truncate(st.bp, 40), "-", "-", "-"});
        continue;
      }
      b.rows.push_back({std::to_string(st.step), truncate(st.fp, 40), truncate(st.bp, 40), time(st.iteration_gap_ns),
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
    b.header = {"Type", "Calls", "Device Time (self)", "CPU Time (self)", "Ratio (%)"};
    for (const OpTypeRow& r : s_.op_types) {
      b.rows.push_back({r.type, std::to_string(r.calls), time(r.device_ns), time(r.cpu_ns), ratio(r.ratio)});
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
