#include "exporters/summaries/streamed_step_summaries.h"

#include <algorithm>
#include <unordered_map>

namespace profagent::exporters {

bool is_per_step_summary(std::string_view name) {
  return name == "overview" || name == "model" || name == "distributed" || name == "perf" || name == "step_trace";
}

StepSummaryFold::StepSummaryFold(const SummaryOptions& options) : options_(options) {
  for (const std::string& name : options_.names) wanted_ = wanted_ || is_per_step_summary(name);
}

void StepSummaryFold::give_up(std::string why) {
  StepSummaryFold none(options_);
  *this = std::move(none);
  not_folded_ = std::move(why);
}

bool StepSummaryFold::communication(const DeviceRecord& d) {
  if (d.kind != DeviceKind::Kernel) return false;  // as trace_scope.cpp find_communication
  const uint32_t id = d.name.id();
  if (id >= communication_by_name_.size()) communication_by_name_.resize(id + 1, -1);
  if (communication_by_name_[id] < 0) communication_by_name_[id] = is_communication(d.name) ? 1 : 0;
  return communication_by_name_[id] == 1;
}

// Into its step (kept until the step is made), left out, or kept until its step is known. A
// record of a step made already came late: the figures made without it are given up.
void StepSummaryFold::place_host(const HostRec& h, const StepSorter& steps) {
  if (!not_folded_.empty()) return;
  uint32_t k = 0;
  const StepFate fate = steps.fate(h.start, k);
  if (fate == StepFate::Out) return;
  if (fate == StepFate::In && k < made_) {
    return give_up("a record of step " + std::to_string(steps.steps()[k].number) + " came after that step was made");
  }
  if (held_ >= kMaxHeld && steps.current()) return void(over_bound_ = true);
  ++held_;
  if (fate == StepFate::Later) pending_host_.push_back(h);
  else open_[k].host.push_back(h);
}

void StepSummaryFold::place_device(const DeviceRec& d, const StepSorter& steps) {
  if (!not_folded_.empty()) return;
  uint32_t k = 0;
  const StepFate fate = steps.fate(d.at, k);
  if (fate == StepFate::Out) return;
  if (fate == StepFate::In && k < made_) {
    return give_up("a device record of step " + std::to_string(steps.steps()[k].number) + " came after that step was made");
  }
  if (held_ >= kMaxHeld && steps.current()) return void(over_bound_ = true);
  ++held_;
  if (fate == StepFate::Later) pending_device_.push_back(d);
  else open_[k].device.push_back(d);
}

void StepSummaryFold::route_pending(const StepSorter& steps) {
  std::vector<HostRec> host = std::move(pending_host_);
  std::vector<DeviceRec> device = std::move(pending_device_);
  pending_host_.clear(), pending_device_.clear();
  held_ -= host.size() + device.size();
  for (const HostRec& h : host) place_host(h, steps);
  for (const DeviceRec& d : device) place_device(d, steps);
}

void StepSummaryFold::add(const Trace& t, const TraceScope& scope, const std::vector<uint64_t>& device_at,
                          const StepSorter& steps, bool last) {
  if (!wanted_ || !not_folded_.empty() || no_steps_) return;
  if (steps.all_in()) {  // folded as a window without steps: not made (the header)
    give_up("");
    no_steps_ = true;
    return;
  }
  route_pending(steps);
  // Per thread, the latest start among its records in the part: the steps ending at or before
  // the least of them have all their records in (the header).
  std::unordered_map<uint32_t, uint64_t> latest;
  for (std::size_t i = 0; i < t.host.size() && not_folded_.empty(); ++i) {
    const HostRecord& h = t.host[i];
    uint64_t& thread = latest[h.tid];
    thread = std::max(thread, h.start_ns);
    if (h.kind == EventKind::Step || h.kind == EventKind::StackTag) continue;  // in no summary here
    place_host({h.start_ns, h.end_ns, h.name, h.tid, h.kind, scope.outer_operator[i] < 0}, steps);
  }
  for (std::size_t i = 0; i < t.device.size() && not_folded_.empty(); ++i) {
    const DeviceRecord& d = t.device[i];
    place_device({d.start_ns, d.end_ns, device_at[i], d.kind, communication(d)}, steps);
  }
  if (!not_folded_.empty()) return;
  if (over_bound_) {
    return give_up("a step had more than " + std::to_string(kMaxHeld) + " records before it was made");
  }
  uint64_t done = latest.empty() ? 0 : UINT64_MAX;
  for (const auto& [tid, start] : latest) done = std::min(done, start);
  make_steps_before(last ? UINT64_MAX : done, steps);
}

// Makes, in order, the steps whose records are all in: final, and ending at or before `done_ns`.
void StepSummaryFold::make_steps_before(uint64_t done_ns, const StepSorter& steps) {
  const std::vector<StepSpan>& spans = steps.steps();
  while (made_ < spans.size() && spans[made_].end_ns <= done_ns) {
    uint32_t k = 0;
    if (done_ns != UINT64_MAX && steps.fate(spans[made_].start_ns, k) != StepFate::In) return;  // not final yet
    make_step(made_, spans[made_]);
    ++made_;
  }
}

// One step's figures, by the functions a whole window's are made by (step_summaries.h).
void StepSummaryFold::make_step(std::size_t k, const StepSpan& span) {
  StepRecords records;
  if (auto it = open_.find(k); it != open_.end()) {
    records = std::move(it->second);
    open_.erase(it);
  }
  held_ -= records.host.size() + records.device.size();
  StepScope st{span.number, span.start_ns, span.end_ns, {}, {}};
  std::array<std::vector<Interval>, 4> raw;
  std::vector<Interval> plain_operators;
  std::array<std::vector<Interval>, 4> host_sets;
  StepPoints points;
  for (const HostRec& h : records.host) {
    const PhaseMatch m = match_phase(h.kind, h.name);
    if (h.kind == EventKind::Operator && h.outermost && m.phase == Phase::None) plain_operators.push_back({h.start, h.end});
    if (m.phase != Phase::None) {
      raw[std::size_t(m.phase)].push_back({h.start, h.end});
      rules_[std::size_t(m.phase)].push_back({{h.tid, h.start, UINT64_MAX - h.end}, m.rule});
    }
    const HostType type = host_type(h.kind, h.name, h.kind == EventKind::Operator && !h.outermost);
    if (type != HostType::Other) host_sets[std::size_t(type)].push_back({h.start, h.end}), ++host_calls_[std::size_t(type)];
  }
  forward_inferred_ = finish_step_phases(st, raw, plain_operators) || forward_inferred_;
  for (const HostRec& h : records.host) {
    points.consider(st, h.kind, h.outermost, h.start, h.end, h.name, {h.tid, h.start, UINT64_MAX - h.end}, options_);
  }
  std::array<std::vector<Interval>, 4> device_sets;
  std::vector<Interval> kernels, computation;
  std::array<std::vector<Interval>, 5> gpu;
  std::vector<Interval> step_gpu;
  for (const DeviceRec& d : records.device) {
    const Interval iv{d.start, d.end};
    if (d.kind == DeviceKind::DriverApi) host_sets[0].push_back(iv), ++host_calls_[0];
    const unsigned types = device_types(d.kind, d.communication);
    for (std::size_t type = 0; type < device_sets.size(); ++type) {
      if (types & (1u << type)) device_sets[type].push_back(iv), ++device_calls_[type];
    }
    if (d.kind == DeviceKind::Kernel) kernels.push_back(iv);
    if (d.kind == DeviceKind::Kernel && !d.communication) computation.push_back(iv);
    if (!is_device_work(d.kind)) continue;
    gpu[std::size_t(phase_at(st, d.at))].push_back(iv);
    step_gpu.push_back(iv);
  }
  for (std::size_t i = 0; i < 4; ++i) {
    host_types_[i].add(host_sets[i]);
    device_types_[i].add(device_sets[i]);
    std::vector<Interval> phase = st.phases[i];
    phases_[i].add(phase);
    phase_steps_[i] += !st.phases[i].empty();
  }
  kernels_.add(kernels);
  computation_.add(computation);
  model_.add(st, gpu, step_gpu);
  perf_.push_back(perf_step(st));
  step_trace_.push_back(points.row(st));
}

uint64_t StepSummaryFold::late_intervals() const {
  uint64_t late = kernels_.late() + computation_.late();
  for (std::size_t i = 0; i < 4; ++i) late += host_types_[i].late() + phases_[i].late() + device_types_[i].late();
  return late;
}

// As compute_overview, compute_model, compute_distributed, compute_perf and compute_step_trace
// fill them, from the running totals.
void StepSummaryFold::summaries(Summaries& out) const {
  const uint64_t base = out.span_cpu_ns;
  out.phase_sources.clear();
  for (std::size_t p = 0; p < 4; ++p) {
    std::vector<std::pair<StepPoints::Position, const char*>> rules = rules_[p];
    std::stable_sort(rules.begin(), rules.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string source;
    for (const auto& [at, rule] : rules) add_phase_rule(source, rule);
    if (p == std::size_t(Phase::Forward) && forward_inferred_) add_phase_rule(source, kForwardInferredRule);
    out.phase_sources.emplace_back(phase_name(kPhases[p]), std::move(source));
  }
  out.overview_cpu = {{"ProfileStep", made_, base, 100.0}};
  for (std::size_t k = 0; k < 4; ++k) {
    const uint64_t time = host_types_[k].length();
    out.overview_cpu.push_back({kHostTypeNames[k], host_calls_[k], time, percent(time, base)});
  }
  for (std::size_t p = 0; p < 4; ++p) {
    const uint64_t time = phases_[p].length();
    out.overview_cpu.push_back({std::string(phase_name(kPhases[p])), phase_steps_[p], time, percent(time, base)});
  }
  for (std::size_t k = 0; k < 4; ++k) {
    const uint64_t time = device_types_[k].length();
    out.overview_gpu.push_back({kDeviceTypeNames[k], device_calls_[k], time, percent(time, base)});
  }
  out.model = model_.rows(true);
  // Their overlap: what lies in both unions is counted once in the union of all kernels.
  const uint64_t comm = device_types_[3].length(), compute = computation_.length();
  out.distributed = distributed_rows(true, base, comm, compute, comm + compute - std::min(comm + compute, kernels_.length()));
  out.perf = perf_;
  finish_perf(out);
  step_trace_rules(options_, out);
  out.step_trace = step_trace_;
  finish_step_trace(out);
}

}  // namespace profagent::exporters
