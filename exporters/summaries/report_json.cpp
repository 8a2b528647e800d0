// The `--format json` object of one trace (schema: docs/report.md, "Machine-readable output").
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "exporters/summaries/summaries.h"
#include "exporters/summary_json.h"

namespace profagent::exporters {
namespace {

class JsonOut {
 public:
  explicit JsonOut(JsonWriter& w) : w_(w) {}
  void key(std::string_view k) {
    w_.raw(first_ ? "" : ",");
    w_.string(k);
    w_.raw(":");
    first_ = false;
  }
  void open(char c) { w_.raw(std::string_view(&c, 1)), first_ = true; }
  void close(char c) { w_.raw(std::string_view(&c, 1)), first_ = false; }
  void item() { w_.raw(first_ ? "" : ","), first_ = false; }
  void number(double v) {
    char text[40];
    std::snprintf(text, sizeof(text), "%.12g", std::isfinite(v) ? v : 0.0);
    w_.raw(text);
  }
  void stat(const std::optional<Stat>& s, bool only_total = false) {
    if (!s) return w_.raw("null");
    open('{');
    key("total_ns"), w_.u64(s->total_ns);
    key("avg_ns"), only_total ? w_.raw("null") : w_.u64(s->avg_ns());
    key("max_ns"), only_total ? w_.raw("null") : w_.u64(s->max_ns);
    key("min_ns"), only_total ? w_.raw("null") : w_.u64(s->min_ns);
    key("ratio"), number(s->ratio);
    close('}');
  }
  void row(const SummaryRow& r) {
    static constexpr const char* kKinds[] = {"operator", "kernel", "memcpy", "memset", "range", "call", "phase"};
    const bool others = r.name == "Others" && r.kind == SummaryRowKind::Phase;
    open('{');
    key("name"), w_.string(r.name);
    key("kind"), w_.string(kKinds[static_cast<int>(r.kind)]);
    key("depth"), w_.i64(r.depth);
    key("calls"), others ? w_.raw("null") : w_.u64(r.calls);
    key("cpu"), stat(r.cpu, others);
    key("gpu"), stat(r.gpu, others);
    close('}');
  }
  void rows(const std::vector<SummaryRow>& rows) {
    open('[');
    for (const SummaryRow& r : rows) item(), row(r);
    close(']');
  }
  void shares(const std::vector<TimeShare>& shares, const char* name_key, bool calls) {
    open('[');
    for (const TimeShare& s : shares) {
      item(), open('{');
      key(name_key), w_.string(s.name);
      if (calls) key("calls"), w_.u64(s.calls);
      key("time_ns"), w_.u64(s.time_ns);
      key("ratio"), number(s.ratio);
      close('}');
    }
    close(']');
  }
  void threads(const std::vector<ThreadRows>& sections) {
    open('{');
    key("threads"), open('[');
    for (const ThreadRows& t : sections) {
      item(), open('{');
      key("thread"), w_.string(t.thread);
      key("rows"), rows(t.rows);
      key("rows_total"), w_.u64(t.rows_total);
      close('}');
    }
    close(']');
    close('}');
  }
  JsonWriter& w() { return w_; }

 private:
  JsonWriter& w_;
  bool first_ = true;
};

void write_perf(JsonOut& j, const Summaries& s) {
  JsonWriter& w = j.w();
  j.open('{');
  j.key("steps"), j.open('[');
  for (const PerfStep& p : s.perf) {
    j.item(), j.open('{');
    j.key("step"), w.u64(p.step);
    j.key("batch_cost_ns"), w.u64(p.batch_cost_ns);
    j.key("reader_cost_ns"), w.u64(p.reader_cost_ns);
    j.close('}');
  }
  j.close(']');
  const std::optional<PerfFigures>& f = s.perf_figures;
  auto value = [&](double PerfFigures::*field) { f ? j.number((*f).*field) : w.raw("null"); };
  j.key("reader_ratio"), value(&PerfFigures::reader_ratio);
  auto triple = [&](const char* name, double PerfFigures::*avg, double PerfFigures::*max, double PerfFigures::*min,
                    bool seconds) {
    j.key(name), j.open('{');
    j.key(seconds ? "avg_s" : "avg"), value(avg);
    j.key(seconds ? "max_s" : "max"), value(max);
    j.key(seconds ? "min_s" : "min"), value(min);
    j.close('}');
  };
  triple("batch_cost", &PerfFigures::batch_avg_s, &PerfFigures::batch_max_s, &PerfFigures::batch_min_s, true);
  triple("reader_cost", &PerfFigures::reader_avg_s, &PerfFigures::reader_max_s, &PerfFigures::reader_min_s, true);
  triple("ips", &PerfFigures::ips_avg, &PerfFigures::ips_max, &PerfFigures::ips_min, false);
  j.close('}');
}

void write_step_trace(JsonOut& j, const Summaries& s) {
  JsonWriter& w = j.w();
  j.open('{');
  j.key("fp_point"), w.string(s.fp_point_rule);
  j.key("bp_point"), w.string(s.bp_point_rule);
  j.key("steps"), j.open('[');
  for (const StepTraceStep& st : s.step_trace) {
    j.item(), j.open('{');
    j.key("step"), w.u64(st.step);
    j.key("fp"), st.fp.empty() ? w.raw("null") : w.string(st.fp);
    j.key("bp"), st.bp.empty() ? w.raw("null") : w.string(st.bp);
    j.key("iteration_gap_ns"), st.complete ? w.u64(st.iteration_gap_ns) : w.raw("null");
    j.key("fp_bp_ns"), st.complete ? w.u64(st.fp_bp_ns) : w.raw("null");
    j.key("tail_ns"), st.complete ? w.u64(st.tail_ns) : w.raw("null");
    j.close('}');
  }
  j.close(']');
  j.key("average");
  if (const auto& a = s.step_trace_average) {
    j.open('{');
    j.key("iteration_gap_ns"), w.u64(a->iteration_gap_ns);
    j.key("fp_bp_ns"), w.u64(a->fp_bp_ns);
    j.key("tail_ns"), w.u64(a->tail_ns);
    j.close('}');
  } else {
    w.raw("null");
  }
  j.close('}');
}

void write_op_types(JsonOut& j, const Summaries& s) {
  JsonWriter& w = j.w();
  j.open('{');
  j.key("metric"), w.string(s.op_type_by_device ? "device" : "cpu");
  j.key("rows"), j.open('[');
  for (const OpTypeRow& r : s.op_types) {
    j.item(), j.open('{');
    j.key("type"), w.string(r.type);
    j.key("calls"), w.u64(r.calls);
    j.key("device_ns"), w.u64(r.device_ns);
    j.key("cpu_ns"), w.u64(r.cpu_ns);
    j.key("ratio"), j.number(r.ratio);
    j.close('}');
  }
  j.close(']');
  j.close('}');
}

void write_key_averages(JsonOut& j, const Table& t, int limit) {
  JsonWriter& w = j.w();
  j.open('{');
  j.key("sort_by"), w.string(t.sort_by);
  j.key("self_cpu_total_ns"), w.u64(t.self_cpu_total_ns);
  j.key("self_cuda_total_ns"), w.u64(t.self_cuda_total_ns);
  j.key("rows"), j.open('[');
  const std::size_t shown = limit > 0 ? std::min(t.rows.size(), static_cast<std::size_t>(limit)) : t.rows.size();
  for (std::size_t i = 0; i < shown; ++i) {
    j.item();
    write_table_row_json(t.rows[i], w);
  }
  j.close(']');
  j.key("rows_total"), w.u64(t.rows.size());
  j.close('}');
}

// Allocated and reserved totals per device over time (every record), with the peaks.
void write_memory(JsonOut& j, const Trace& trace, const MemorySummary& m) {
  JsonWriter& w = j.w();
  j.open('{');
  j.key("devices"), j.open('[');
  for (const DeviceMemory& d : m.devices) {
    j.item(), j.open('{');
    j.key("device"), w.i64(d.device);
    j.key("peak_allocated"), w.i64(d.peak_allocated);
    j.key("peak_reserved"), w.i64(d.peak_reserved);
    j.key("timeline"), j.open('[');
    for (const MemoryRecord& r : trace.memory.records) {
      if (r.device != d.device || r.failed) continue;
      j.item();
      w.raw("["), w.u64(r.ns), w.raw(","), w.i64(r.total_allocated), w.raw(","), w.i64(r.total_reserved), w.raw("]");
    }
    j.close(']');
    j.close('}');
  }
  j.close(']');
  j.close('}');
}

void write_summary(JsonOut& j, const Trace& trace, const Summaries& s, const SummaryOptions& o, std::string_view name) {
  JsonWriter& w = j.w();
  j.key(name);
  if (name == "device") {
    j.open('{');
    j.key("elapsed_ns"), w.u64(s.elapsed_ns);
    j.key("rows"), j.open('[');
    for (const DeviceUtilization& d : s.devices) {
      j.item(), j.open('{');
      j.key("name"), w.string(d.name);
      j.key("utilization"), d.percent ? j.number(*d.percent) : w.raw("null");
      j.close('}');
    }
    j.close(']'), j.close('}');
  } else if (name == "overview") {
    j.open('{');
    j.key("cpu"), j.shares(s.overview_cpu, "type", true);
    j.key("gpu"), j.shares(s.overview_gpu, "type", true);
    j.close('}');
  } else if (name == "model") {
    j.open('{');
    j.key("rows"), j.rows(s.model);
    j.close('}');
  } else if (name == "kernel" || name == "memory_manipulation") {
    const bool kernel = name == "kernel";
    j.open('{');
    j.key("rows"), j.rows(kernel ? s.kernels : s.memory_manipulation);
    j.key("rows_total"), w.u64(kernel ? s.kernels_total : s.memory_manipulation_total);
    j.close('}');
  } else if (name == "distributed") {
    j.open('{');
    j.key("rows"), j.shares(s.distributed, "name", false);
    j.close('}');
  } else if (name == "operator" || name == "user_defined") {
    j.threads(name == "operator" ? s.operators : s.user_defined);
  } else if (name == "perf") {
    write_perf(j, s);
  } else if (name == "step_trace") {
    write_step_trace(j, s);
  } else if (name == "op_type") {
    write_op_types(j, s);
  } else if (name == "key_averages") {
    write_key_averages(j, s.key_averages, o.table.row_limit);
  } else {
    write_memory(j, trace, s.memory);
  }
}

}  // namespace

void write_summaries_json(const Trace& trace, const Summaries& s, const SummaryOptions& o, std::string_view path,
                          std::string_view source, const std::vector<std::pair<std::string, uint64_t>>& skipped,
                          JsonWriter& w) {
  JsonOut j(w);
  j.open('{');
  j.key("path"), w.string(path);
  j.key("source"), w.string(source);
  j.key("rank"), w.i64(trace.process.rank);
  j.key("window"), w.u64(trace.window);
  j.key("time_unit"), w.string(time_unit_name(o.unit));
  j.key("span"), j.open('{');
  j.key("kind"), w.string(s.has_steps ? "ProfileStep" : "Window");
  j.key("cpu_ns"), w.u64(s.span_cpu_ns);
  j.key("gpu_ns"), w.u64(s.span_gpu_ns);
  j.close('}');
  j.key("outside_steps"), j.open('{');
  j.key("host"), w.u64(s.outside_host);
  j.key("device"), w.u64(s.outside_device);
  j.close('}');
  j.key("phases"), j.open('{');
  for (const auto& [phase, how] : s.phase_sources) j.key(phase), how.empty() ? w.raw("null") : w.string(how);
  j.close('}');
  j.key("skipped"), j.open('{');
  for (const auto& [category, n] : skipped) j.key(category), w.u64(n);
  j.close('}');
  j.key("summaries"), j.open('{');
  for (const std::string& name : o.names) write_summary(j, trace, s, o, name);
  j.close('}');
  j.close('}');
}

}  // namespace profagent::exporters
