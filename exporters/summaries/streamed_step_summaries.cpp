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

// A record in a step known already that only adds to the Overview's unions and counts (a runtime
// call, an inner operator, a range of no phase, a driver call) is added at once, whenever it
// comes; one the step's figures are made of (a phase's record, an outermost operator, an FP/BP
// point named, device work) is kept in its step until the step is made, or until its step is
// known. One that comes after its step was made (its thread's chunk stayed open meanwhile)
// gives these summaries up.
void StepSummaryFold::place_host(const HostRec& h, const StepSorter& steps) {
  if (!not_folded_.empty()) return;
  uint32_t k = 0;
  const StepFate fate = steps.fate(h.start, k);
  if (fate == StepFate::Out) return;
  if (fate == StepFate::In) {
    const PhaseMatch m = phase_of(h.kind, h.name);
    const bool named_point = (h.kind == EventKind::Operator || h.kind == EventKind::Range) &&
                             (!options_.fp_point.empty() || !options_.bp_point.empty());
    if (m.phase == Phase::None && !(h.kind == EventKind::Operator && h.outermost) && !named_point) {
      return add_to_overview(h, m);
    }
    if (k < made_) {
      return give_up("a record of step " + std::to_string(steps.steps()[k].number) +
                     " that its figures are made of came after it was made");
    }
  }
  if (held_ >= kMaxHeld && steps.current()) return void(over_bound_ = true);
  ++held_;
  if (fate == StepFate::Later) pending_host_.push_back(h);
  else records_of(k).host.push_back(h);
}

void StepSummaryFold::place_device(const DeviceRec& d, const StepSorter& steps) {
  if (!not_folded_.empty()) return;
  uint32_t k = 0;
  const StepFate fate = steps.fate(d.at, k);
  if (fate == StepFate::Out) return;
  if (fate == StepFate::In && !is_device_work(d.kind)) {
    if (d.kind == DeviceKind::DriverApi) add_host_interval(0, {d.start, d.end});
    return;
  }
  if (fate == StepFate::In && k < made_) {
    return give_up("device work of step " + std::to_string(steps.steps()[k].number) + " came after the step was made");
  }
  if (held_ >= kMaxHeld && steps.current()) return void(over_bound_ = true);
  ++held_;
  if (fate == StepFate::Later) pending_device_.push_back(d);
  else records_of(k).device.push_back(d);
}

void StepSummaryFold::add_to_overview(const HostRec& h, const PhaseMatch& m) {
  const HostType type = overview_type(h, m);
  if (type != HostType::Other) add_host_interval(std::size_t(type), {h.start, h.end});
}

// A range that a phase rule claims is not user-defined (host_type's is_phase_range, here from
// the match found once per name).
HostType StepSummaryFold::overview_type(const HostRec& h, const PhaseMatch& m) {
  if (h.kind == EventKind::Range) return m.phase == Phase::None ? HostType::UserDefined : HostType::Other;
  return host_type(h.kind, h.name, h.kind == EventKind::Operator && !h.outermost);
}

// Records come mostly in the step of the record before them: that step's records found once.
StepSummaryFold::StepRecords& StepSummaryFold::records_of(std::size_t k) {
  if (last_open_ == nullptr || last_open_step_ != k) last_open_ = &open_[k], last_open_step_ = k;
  return *last_open_;
}

// The phase rule an operator's or range's name matches, found once per name (match_phase
// compares the name with every rule).
PhaseMatch StepSummaryFold::phase_of(EventKind kind, InternedName name) {
  if (kind != EventKind::Operator && kind != EventKind::Range) return {};
  std::vector<std::optional<PhaseMatch>>& known = kind == EventKind::Operator ? operator_phases_ : range_phases_;
  if (name.id() >= known.size()) known.resize(name.id() + 1);
  std::optional<PhaseMatch>& match = known[name.id()];
  if (!match) match = match_phase(kind, name);
  return *match;
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
  for (std::size_t i = 0; i < t.host.size() && not_folded_.empty(); ++i) {
    const HostRecord& h = t.host[i];
    if (h.kind == EventKind::Step || h.kind == EventKind::StackTag) continue;  // in no summary here
    place_host({h.start_ns, h.end_ns, h.name, h.tid, h.kind, scope.outer_operator_of(i) < 0}, steps);
  }
  for (std::size_t i = 0; i < t.device.size() && not_folded_.empty(); ++i) {
    const DeviceRecord& d = t.device[i];
    place_device({d.start_ns, d.end_ns, device_at[i], d.kind, communication(d)}, steps);
  }
  if (!not_folded_.empty()) return;
  if (over_bound_) {
    return give_up("a step had more than " + std::to_string(kMaxHeld) + " records before it was made");
  }
  if (last) return make_steps_before(UINT64_MAX, steps);
  // Every record still to come starts at or after the collector's mark (the header).
  make_steps_before(t.streamed.complete_before_ns, steps);
  // Past half the bound, a scope open for long (and what its thread holds for it) is no longer
  // waited for.
  if (held_ > kMaxHeld / 2) make_steps_before(t.streamed.complete_but_scopes_before_ns, steps);
}

// Makes, in order, the steps whose records are all in: final, and ending at or before `done_ns`.
void StepSummaryFold::make_steps_before(uint64_t done_ns, const StepSorter& steps) {
  const std::vector<StepSpan>& spans = steps.steps();
  while (made_ < spans.size() && spans[made_].end_ns <= done_ns) {
    uint32_t k = 0;
    if (done_ns != UINT64_MAX && steps.fate(spans[made_].start_ns, k) != StepFate::In) break;  // not final yet
    make_step(made_, spans[made_]);
    ++made_;
  }
  flush_unions();
}

// Each rule once, with where its first record comes.
void StepSummaryFold::note_rule(const PhaseMatch& m, const StepPoints::Position& at) {
  auto& rules = rules_[std::size_t(m.phase)];
  auto same = std::find_if(rules.begin(), rules.end(), [&](const auto& r) { return r.second == m.rule; });
  if (same == rules.end()) rules.push_back({at, m.rule});
  else same->first = std::min(same->first, at);
}

// A record of Overview type `type` (kHostTypeNames). The intervals go to the union in batches
// of kBatch: fewer merges, and what waits for one stays small.
void StepSummaryFold::add_host_interval(std::size_t type, Interval iv) {
  ++host_calls_[type];
  std::vector<Interval>& batch = batch_.host[type];
  batch.push_back(iv);
  if (batch.size() >= kBatch) host_types_[type].add(batch), batch.clear();
}

// The steps made by one call add their intervals to the unions at once (an OpenUnion's add costs
// a merge of what it is given with its latest intervals).
void StepSummaryFold::flush_unions() {
  for (std::size_t i = 0; i < 4; ++i) {
    host_types_[i].add(batch_.host[i]);
    device_types_[i].add(batch_.device[i]);
    phases_[i].add(batch_.phases[i]);
    batch_.host[i].clear(), batch_.device[i].clear(), batch_.phases[i].clear();
  }
  kernels_.add(batch_.kernels);
  computation_.add(batch_.computation);
  batch_.kernels.clear(), batch_.computation.clear();
}

// One step's figures, by the functions a whole window's are made by (step_summaries.h).
void StepSummaryFold::make_step(std::size_t k, const StepSpan& span) {
  StepRecords records;
  if (auto it = open_.find(k); it != open_.end()) {
    records = std::move(it->second);
    open_.erase(it);
  }
  if (last_open_step_ == k) last_open_ = nullptr;
  held_ -= records.host.size() + records.device.size();
  StepScope st{span.number, span.start_ns, span.end_ns, {}, {}};
  std::array<std::vector<Interval>, 4> raw;
  std::vector<Interval> plain_operators;
  StepPoints points;
  for (const HostRec& h : records.host) {
    const PhaseMatch m = phase_of(h.kind, h.name);
    if (h.kind == EventKind::Operator && h.outermost && m.phase == Phase::None) plain_operators.push_back({h.start, h.end});
    if (m.phase != Phase::None) {
      raw[std::size_t(m.phase)].push_back({h.start, h.end});
      note_rule(m, {h.tid, h.start, UINT64_MAX - h.end});
    }
    const HostType type = overview_type(h, m);
    if (type != HostType::Other) add_host_interval(std::size_t(type), {h.start, h.end});
  }
  forward_inferred_ = finish_step_phases(st, raw, plain_operators) || forward_inferred_;
  for (const HostRec& h : records.host) {
    points.consider(st, h.kind, h.outermost, h.start, h.end, h.name, {h.tid, h.start, UINT64_MAX - h.end}, options_);
  }
  std::array<std::vector<Interval>, 5> gpu;
  std::vector<Interval> step_gpu;
  for (const DeviceRec& d : records.device) {
    const Interval iv{d.start, d.end};
    if (d.kind == DeviceKind::DriverApi) add_host_interval(0, iv);
    const unsigned types = device_types(d.kind, d.communication);
    for (std::size_t type = 0; type < batch_.device.size(); ++type) {
      if (types & (1u << type)) batch_.device[type].push_back(iv), ++device_calls_[type];
    }
    if (d.kind == DeviceKind::Kernel) batch_.kernels.push_back(iv);
    if (d.kind == DeviceKind::Kernel && !d.communication) batch_.computation.push_back(iv);
    if (!is_device_work(d.kind)) continue;
    gpu[std::size_t(phase_at(st, d.at))].push_back(iv);
    step_gpu.push_back(iv);
  }
  for (std::size_t i = 0; i < 4; ++i) {
    batch_.phases[i].insert(batch_.phases[i].end(), st.phases[i].begin(), st.phases[i].end());
    phase_steps_[i] += !st.phases[i].empty();
  }
  std::array<uint64_t, 5> gpu_ns{};
  for (std::size_t p = 0; p < gpu.size(); ++p) gpu_ns[p] = merged_length(gpu[p]);
  model_.add(st, gpu_ns, merged_length(step_gpu));
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
  out.phase_sources.clear();  // in the order of each rule's first record (trace_scope.cpp find_phases)
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
