// The summaries made of steps and phases: Device, Overview, Model, Distributed, Perf and the
// step trace. Definitions: docs/report.md.
#include "exporters/summaries/step_summaries.h"

#include <algorithm>
#include <limits>
#include <map>

#include "collector/huge_pages.h"

namespace profagent::exporters {
namespace {

// Merged device intervals of the records `keep` selects, among those in the steps.
template <typename Keep>
std::vector<Interval> device_set(const Trace& t, const TraceScope& s, Keep keep) {
  std::vector<Interval> set;
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    if (s.device_in(i) && keep(i, t.device[i])) set.push_back({t.device[i].start_ns, t.device[i].end_ns});
  }
  merge_intervals(set);
  return set;
}

uint64_t length(const std::vector<Interval>& merged) {
  uint64_t total = 0;
  for (const Interval& i : merged) total += i.end - i.start;
  return total;
}

std::vector<Interval> step_set(const TraceScope& s) {
  std::vector<Interval> set;
  for (const StepScope& st : s.steps) set.push_back({st.start, st.end});
  return merge_intervals(set);
}

// Only a range's type depends on its name: no other record's name is read.
HostType type_of(const HostRecord& h, const TraceScope& s, std::size_t i) {
  return host_type(h.kind, h.kind == EventKind::Range ? std::string_view(h.name) : std::string_view(),
                   h.kind == EventKind::Operator && s.outer_operator_of(i) >= 0);
}

// A device's kernel time in the steps, and the extent of its kernels in each step.
struct GpuTime {
  explicit GpuTime(const TraceScope& s) : kernels(s.steps.size(), Interval{UINT64_MAX, 0}) {}
  std::vector<Interval> busy;
  std::vector<Interval> kernels;  // by step index
};

}  // namespace

void compute_span(const Trace& t, const TraceScope& s, Summaries& out) {
  out.has_steps = s.has_steps;
  std::vector<Interval> steps = step_set(s);
  out.span_cpu_ns = length(steps);
  // Merged as it comes (the join sorts device records by start): no gathered set to sort.
  UnionGatherer work;
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    if (is_device_work(d.kind) && s.device_in(i)) work.add(d.start_ns, d.end_ns);
  }
  out.span_gpu_ns = work.length();
  out.outside_host = s.outside_host;
  out.outside_device = s.outside_device;
  for (Phase p : kPhases) {
    out.phase_sources.emplace_back(phase_name(p), s.phase_source[static_cast<std::size_t>(p)]);
  }
}

void device_cpu_figures(const Trace& t, Summaries& out) {
  const bool cpu = t.cpu_start.valid && t.cpu_end.valid && t.cpu_end.ns > t.cpu_start.ns;
  out.elapsed_ns = cpu ? t.cpu_end.ns - t.cpu_start.ns : out.span_cpu_ns;
  DeviceUtilization process{"CPU(Process)", std::nullopt}, system{"CPU(System)", std::nullopt};
  if (cpu) {
    const uint64_t used = span_ns(t.cpu_start.process_ns, t.cpu_end.process_ns);
    process.percent = percent(used, out.elapsed_ns);
    const uint64_t busy = span_ns(t.cpu_start.system_busy_ns, t.cpu_end.system_busy_ns);
    const uint64_t idle = span_ns(t.cpu_start.system_idle_ns, t.cpu_end.system_idle_ns);
    system.percent = percent(busy, busy + idle);
  }
  out.devices = {process, system};
}

// After compute_span (compute_summaries' order): with one device whose work is all computation
// kernels, its busy time is span_gpu_ns, and its kernels' intervals are not merged again.
void compute_device(const Trace& t, const TraceScope& s, Summaries& out) {
  device_cpu_figures(t, out);
  const bool span_is_kernels = s.work_all_computation;
  std::map<uint32_t, GpuTime> gpus;
  auto each_kernel = [&](auto&& take) {
    GpuTime* last = nullptr;  // the previous kernel's device (a map's elements do not move)
    uint32_t last_id = 0;
    for (std::size_t i = 0; i < t.device.size(); ++i) {
      const DeviceRecord& d = t.device[i];
      if (d.kind != DeviceKind::Kernel || !s.device_in(i)) continue;
      if (!last || last_id != d.device) last = &gpus.try_emplace(d.device, s).first->second, last_id = d.device;
      take(i, d, *last);
    }
  };
  each_kernel([&](std::size_t i, const DeviceRecord& d, GpuTime& gpu) {
    if (!span_is_kernels) gpu.busy.push_back({d.start_ns, d.end_ns});
    Interval& extent = gpu.kernels[static_cast<std::size_t>(s.device_step_of(i))];
    extent.start = std::min(extent.start, d.start_ns);
    extent.end = std::max(extent.end, d.end_ns);
  });
  const bool one_busy_set = span_is_kernels && gpus.size() == 1;
  if (span_is_kernels && !one_busy_set) {  // several devices: each one's own kernels
    each_kernel([](std::size_t, const DeviceRecord& d, GpuTime& gpu) { gpu.busy.push_back({d.start_ns, d.end_ns}); });
  }
  std::vector<Interval> steps;
  for (const StepScope& st : s.steps) steps.push_back({st.start, st.end});
  for (auto& [id, gpu] : gpus) {
    const uint64_t busy_ns = one_busy_set ? out.span_gpu_ns : merged_length(gpu.busy);
    out.devices.push_back({"GPU" + std::to_string(id), percent(busy_ns, widened_steps_length(steps, gpu.kernels))});
  }
}

uint64_t widened_steps_length(std::vector<Interval> steps, const std::vector<Interval>& kernels) {
  for (std::size_t k = 0; k < steps.size() && k < kernels.size(); ++k) {
    steps[k].start = std::min(steps[k].start, kernels[k].start);
    steps[k].end = std::max(steps[k].end, kernels[k].end);
  }
  return merged_length(steps);
}

void compute_overview(const Trace& t, const TraceScope& s, Summaries& out) {
  const uint64_t base = out.span_cpu_ns;
  // Merged as they come (the join sorts a thread's records by start): no sort or merge pass.
  UnionGatherer sets[4];
  // Room for every record up front: growing by doubling would copy and first-touch each set
  // twice over; the pages never used are never touched.
  for (UnionGatherer& set : sets) set.reserve(t.host.size() + t.device.size());
  uint64_t calls[4] = {};
  // Locals: the sets' growth would reload them per record. No steps: every record is in.
  const HostRecord* const host = t.host.data();
  const int32_t* const host_step = s.host_step.empty() ? nullptr : s.host_step.data();
  for (std::size_t i = 0, n = t.host.size(); i < n; ++i) {
    if (host_step && host_step[i] < 0) continue;
    const HostType type = type_of(host[i], s, i);
    if (type == HostType::Other) continue;
    sets[static_cast<int>(type)].add(host[i].start_ns, host[i].end_ns);
    ++calls[static_cast<int>(type)];
  }
  const bool any_driver = s.device_count_in_steps(DeviceKind::DriverApi) != 0;
  for (std::size_t i = 0; any_driver && i < t.device.size(); ++i) {  // driver calls no hook saw are runtime calls too
    if (!s.device_in(i) || t.device[i].kind != DeviceKind::DriverApi) continue;
    sets[0].add(t.device[i].start_ns, t.device[i].end_ns);
    ++calls[0];
  }
  out.overview_cpu.push_back({s.has_steps ? "ProfileStep" : "Window", s.has_steps ? s.steps.size() : 1, base, 100.0});
  for (int k = 0; k < 4; ++k) {
    const uint64_t time = sets[k].length();
    out.overview_cpu.push_back({kHostTypeNames[k], calls[k], time, percent(time, base)});
  }
  for (Phase p : kPhases) {
    std::vector<Interval> set;
    uint64_t steps = 0;
    for (const StepScope& st : s.steps) {
      const auto& phase = st.phases[static_cast<std::size_t>(p)];
      set.insert(set.end(), phase.begin(), phase.end());
      steps += !phase.empty();
    }
    const uint64_t time = merged_length(set);
    out.overview_cpu.push_back({std::string(phase_name(p)), steps, time, percent(time, base)});
  }
  constexpr std::size_t kTypes = std::size(kDeviceTypeNames);
  uint64_t device_records[kTypes] = {}, device_time[kTypes] = {};
  if (s.work_all_computation) {
    // Every device record of the steps that is work is a computation kernel: the Kernel set is
    // compute_span's (merged already), the others are empty.
    device_records[0] = s.device_count_in_steps(DeviceKind::Kernel);
    device_time[0] = out.span_gpu_ns;
  } else {
    // Every device type's set in one walk of the records (a communication kernel is in two).
    UnionGatherer device_sets[kTypes];  // the join sorts device records by start
    for (std::size_t i = 0; i < t.device.size(); ++i) {
      if (!s.device_in(i)) continue;
      const DeviceRecord& d = t.device[i];
      const unsigned types = device_types(d.kind, s.communication(i));
      for (std::size_t k = 0; k < kTypes; ++k) {
        if (!(types & (1u << k))) continue;
        device_sets[k].add(d.start_ns, d.end_ns);
        ++device_records[k];
      }
    }
    for (std::size_t k = 0; k < kTypes; ++k) device_time[k] = device_sets[k].length();
  }
  for (std::size_t k = 0; k < kTypes; ++k) {
    out.overview_gpu.push_back({kDeviceTypeNames[k], device_records[k], device_time[k], percent(device_time[k], base)});
  }
}

// Asked for every host record: the calls, by far the most, are told apart with one bit test.
HostType host_type(EventKind kind, std::string_view name, bool inner_operator) {
  constexpr auto bit = [](EventKind k) { return 1u << static_cast<unsigned>(k); };
  constexpr unsigned kNotCalls = bit(EventKind::Operator) | bit(EventKind::Range) | bit(EventKind::Step) |
                                 bit(EventKind::StackTag);
  if (static_cast<unsigned>(kind) >= 32 || !(bit(kind) & kNotCalls)) return HostType::CudaRuntime;
  if (kind == EventKind::Operator) return inner_operator ? HostType::OperatorInner : HostType::Operator;
  if (kind == EventKind::Range) return is_phase_range(name) ? HostType::Other : HostType::UserDefined;
  return HostType::Other;  // steps and stack tags
}

unsigned device_types(DeviceKind kind, bool communication) {
  return unsigned(kind == DeviceKind::Kernel) | unsigned(kind == DeviceKind::Memcpy) << 1 |
         unsigned(kind == DeviceKind::Memset) << 2 | unsigned(communication) << 3;
}

// After compute_span (compute_summaries' order). Without phases every device record's phase is
// None, so a step's set of work in no phase is all its work: merged once. One step holds every
// device record of the steps: its set is compute_span's, merged already, and no walk is needed.
void compute_model(const Trace& t, const TraceScope& s, Summaries& out) {
  // Per step: CPU and GPU time of the step and of each phase; GPU of records in no phase.
  const std::size_t n = s.steps.size();
  ModelSteps model;
  if (!s.any_phase && n == 1) {
    model.add(s.steps[0], {0, 0, 0, 0, out.span_gpu_ns}, out.span_gpu_ns);
    out.model = model.rows(s.has_steps);
    return;
  }
  // Merged as they come (the join sorts device records by start).
  std::vector<std::array<UnionGatherer, 5>> gpu(s.any_phase ? n : 0);  // phases 0..3, 4 = none
  std::vector<UnionGatherer> step_gpu(n);
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    if (!s.device_in(i) || !is_device_work(d.kind)) continue;
    step_gpu[s.device_step_of(i)].add(d.start_ns, d.end_ns);
    if (s.any_phase) gpu[s.device_step_of(i)][static_cast<std::size_t>(s.device_phase_of(i))].add(d.start_ns, d.end_ns);
  }
  for (std::size_t k = 0; k < n; ++k) {
    const uint64_t step_ns = step_gpu[k].length();
    std::array<uint64_t, 5> gpu_ns{0, 0, 0, 0, step_ns};
    for (std::size_t p = 0; s.any_phase && p < 5; ++p) gpu_ns[p] = gpu[k][p].length();
    model.add(s.steps[k], gpu_ns, step_ns);
  }
  out.model = model.rows(s.has_steps);
}

void ModelSteps::add(const StepScope& st, const std::array<uint64_t, 5>& gpu_ns, uint64_t step_gpu_ns) {
  cpu_.add(span_ns(st.start, st.end));
  gpu_.add(step_gpu_ns);
  std::vector<Interval> all_phases;
  for (std::size_t p = 0; p < 4; ++p) {
    SummaryRow& row = phases_[p];
    if (!row.cpu) row = {std::string(phase_name(kPhases[p])), SummaryRowKind::Phase, 1, 0, Stat{}, Stat{}};
    if (!st.phase_found[p]) continue;
    std::vector<Interval> cpu = st.phases[p];
    row.cpu->add(merged_length(cpu));
    row.gpu->add(gpu_ns[p]);
    all_phases.insert(all_phases.end(), st.phases[p].begin(), st.phases[p].end());
  }
  const uint64_t in_phases = merged_length(all_phases);
  others_cpu_ += span_ns(in_phases, span_ns(st.start, st.end));
  others_gpu_ += gpu_ns[4];
}

std::vector<SummaryRow> ModelSteps::rows(bool has_steps) const {
  std::vector<SummaryRow> rows;
  SummaryRow step_row{has_steps ? "ProfileStep" : "Window", SummaryRowKind::Phase, 0, 0, cpu_, gpu_};
  step_row.calls = step_row.cpu->calls;
  auto finish = [&](SummaryRow row) {
    if (row.cpu) {
      row.calls = row.cpu->calls;
      row.cpu->ratio = percent(row.cpu->total_ns, step_row.cpu->total_ns);
      row.gpu->ratio = percent(row.gpu->total_ns, step_row.gpu->total_ns);
    }
    return row;
  };
  step_row.cpu->ratio = step_row.gpu->ratio = 100.0;
  rows.push_back(step_row);
  for (const SummaryRow& row : phases_) rows.push_back(finish(row));
  SummaryRow others{"Others", SummaryRowKind::Phase, 1, 0, Stat{}, Stat{}};
  others.cpu->total_ns = others_cpu_;
  others.gpu->total_ns = others_gpu_;
  others.cpu->ratio = percent(others_cpu_, step_row.cpu->total_ns);
  others.gpu->ratio = percent(others_gpu_, step_row.gpu->total_ns);
  rows.push_back(others);
  return rows;
}

// After compute_span (compute_summaries' order): its span_gpu_ns may be reused.
void compute_distributed(const Trace& t, const TraceScope& s, Summaries& out) {
  // All computation kernels: no communication to overlap, and the steps' merged device time
  // (compute_span's span_gpu_ns) is their computation time.
  if (s.work_all_computation) {
    out.distributed = distributed_rows(s.has_steps, out.span_cpu_ns, 0, out.span_gpu_ns, 0);
    return;
  }
  const auto comm = device_set(t, s, [&s](std::size_t i, const DeviceRecord&) { return s.communication(i); });
  const auto compute = device_set(t, s, [&s](std::size_t i, const DeviceRecord& d) {
    return d.kind == DeviceKind::Kernel && !s.communication(i);
  });
  out.distributed = distributed_rows(s.has_steps, out.span_cpu_ns, length(comm), length(compute), overlap_length(comm, compute));
}

std::vector<TimeShare> distributed_rows(bool has_steps, uint64_t base, uint64_t communication, uint64_t computation,
                                        uint64_t overlap) {
  return {{has_steps ? "ProfileStep" : "Window", 0, base, 100.0},
          {"Communication", 0, communication, percent(communication, base)},
          {"Computation", 0, computation, percent(computation, base)},
          {"Overlap", 0, overlap, percent(overlap, base)}};
}

static PerfFigures perf_figures(const std::vector<PerfStep>& steps) {
  uint64_t batch = 0, reader = 0, bmax = 0, bmin = UINT64_MAX, rmax = 0, rmin = UINT64_MAX;
  for (const PerfStep& p : steps) {
    batch += p.batch_cost_ns, reader += p.reader_cost_ns;
    bmax = std::max(bmax, p.batch_cost_ns), bmin = std::min(bmin, p.batch_cost_ns);
    rmax = std::max(rmax, p.reader_cost_ns), rmin = std::min(rmin, p.reader_cost_ns);
  }
  const double n = double(steps.size());
  auto ips = [](double ns) { return ns > 0 ? 1e9 / ns : std::numeric_limits<double>::infinity(); };
  PerfFigures f;
  f.reader_ratio = percent(reader, batch);
  f.batch_avg_s = double(batch) / n / 1e9, f.batch_max_s = double(bmax) / 1e9, f.batch_min_s = double(bmin) / 1e9;
  f.reader_avg_s = double(reader) / n / 1e9, f.reader_max_s = double(rmax) / 1e9, f.reader_min_s = double(rmin) / 1e9;
  f.ips_avg = ips(double(batch) / n), f.ips_max = ips(double(bmin)), f.ips_min = ips(double(bmax));
  return f;
}

PerfStep perf_step(const StepScope& st) {
  std::vector<Interval> reader = st.phases[0];
  return {st.number, span_ns(st.start, st.end), merged_length(reader)};
}

void finish_perf(Summaries& out) { out.perf_figures = perf_figures(out.perf); }

void compute_perf(const TraceScope& s, Summaries& out) {
  if (!s.has_steps) return;
  for (const StepScope& st : s.steps) out.perf.push_back(perf_step(st));
  finish_perf(out);
}

void step_trace_rules(const SummaryOptions& o, Summaries& out) {
  out.fp_point_rule = o.fp_point.empty() ? "first operator of the Forward phase" : "PROFAGENT_FP_POINT=" + o.fp_point;
  out.bp_point_rule = o.bp_point.empty() ? "last operator of the Backward phase" : "PROFAGENT_BP_POINT=" + o.bp_point;
}

void compute_step_trace(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  step_trace_rules(o, out);
  if (!s.has_steps) return;
  std::vector<StepPoints> points(s.steps.size());
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const int32_t k = s.host_step_of(i);
    if (k < 0) continue;
    const HostRecord& h = t.host[i];
    points[k].consider(s.steps[k], h.kind, s.outer_operator_of(i) < 0, h.start_ns, h.end_ns, h.name, {0, i, 0}, o);
  }
  for (std::size_t k = 0; k < s.steps.size(); ++k) out.step_trace.push_back(points[k].row(s.steps[k]));
  finish_step_trace(out);
}

// The FP point: the first outermost operator starting in the step's Forward phase (else the
// phase's start); the BP point: the outermost operator ending last among those starting in its
// Backward phase (ties: the first in the trace). PROFAGENT_FP_POINT/BP_POINT name them instead.
void StepPoints::consider(const StepScope& st, EventKind kind, bool outermost, uint64_t start, uint64_t end,
                          InternedName name, const Position& at, const SummaryOptions& o) {
  const bool named = kind == EventKind::Operator || kind == EventKind::Range;
  const bool outer_operator = kind == EventKind::Operator && outermost;
  const bool fp_candidate = o.fp_point.empty() ? outer_operator && contains(st.phases[1], start) : named && name == o.fp_point;
  const bool bp_candidate = o.bp_point.empty() ? outer_operator && contains(st.phases[2], start) : named && name == o.bp_point;
  if (fp_candidate && (!fp_.found || start < fp_.start || (start == fp_.start && at < fp_.at))) {
    fp_ = {true, start, end, at, name};
  }
  if (bp_candidate && (!bp_.found || end > bp_.end || (end == bp_.end && at < bp_.at))) bp_ = {true, start, end, at, name};
}

StepTraceStep StepPoints::row(const StepScope& st) const {
  StepTraceStep row;
  row.step = st.number;
  if (fp_.found) row.fp = fp_.name;
  if (bp_.found) row.bp = bp_.name;
  if (fp_.found && bp_.found && bp_.end >= fp_.start) {
    const uint64_t bp_end = std::min(bp_.end, st.end);
    row.iteration_gap_ns = span_ns(st.start, fp_.start);
    row.fp_bp_ns = span_ns(fp_.start, bp_end);
    row.tail_ns = span_ns(bp_end, st.end);
    row.complete = true;
  }
  return row;
}

void finish_step_trace(Summaries& out) {
  StepTraceStep average;
  uint64_t complete = 0;
  for (const StepTraceStep& st : out.step_trace) {
    if (!st.complete) continue;
    average.iteration_gap_ns += st.iteration_gap_ns, average.fp_bp_ns += st.fp_bp_ns, average.tail_ns += st.tail_ns;
    ++complete;
  }
  if (complete == 0) return;
  average.iteration_gap_ns /= complete, average.fp_bp_ns /= complete, average.tail_ns /= complete;
  average.complete = true;
  out.step_trace_average = average;
}

}  // namespace profagent::exporters
