#include "exporters/summaries/trace_scope.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "exporters/host_nesting.h"

namespace profagent::exporters {
namespace {

constexpr std::size_t kDataloader = 0, kForward = 1, kBackward = 2, kOptimization = 3;

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_dataloader_range(std::string_view n) { return starts_with(n, "enumerate(DataLoader)#"); }
bool is_module_range(std::string_view n) { return starts_with(n, "nn.Module: "); }
bool is_backward_range(std::string_view n) { return starts_with(n, "autograd.backward#"); }
bool is_optimizer_range(std::string_view n) {
  return starts_with(n, "Optimizer.step#") || starts_with(n, "Optimizer.zero_grad#");
}

// "MulBackward0", "diopiConvolution2dBackward", "aten::convolution_backward".
bool is_backward_operator_name(std::string_view n) {
  if (starts_with(n, "autograd::engine::evaluate_function:")) return true;
  if (ends_with(n, "_backward")) return true;
  std::size_t end = n.size();
  while (end > 0 && std::isdigit(static_cast<unsigned char>(n[end - 1]))) --end;
  return ends_with(n.substr(0, end), "Backward");
}

bool is_optimizer_operator_name(std::string_view n) {
  static constexpr std::string_view kNames[] = {"diopiSgd",     "diopiAdam",    "diopiAdamW",
                                                "diopiAdamax",  "diopiAdadelta", "diopiAdagrad",
                                                "diopiRmsprop", "diopiLamb",    "diopiMomentum"};
  return std::find(std::begin(kNames), std::end(kNames), n) != std::end(kNames);
}

bool inside(const std::vector<Interval>& set, uint64_t t) { return contains(set, t); }

}  // namespace

PhaseMatch match_phase(EventKind kind, std::string_view name) {
  if (kind == EventKind::Range) {
    if (is_dataloader_range(name)) return {Phase::Dataloader, "ranges enumerate(DataLoader)#…"};
    if (is_module_range(name)) return {Phase::Forward, "ranges nn.Module: … (outermost module call)"};
    if (is_backward_range(name)) return {Phase::Backward, "ranges autograd.backward#…"};
    if (is_optimizer_range(name)) return {Phase::Optimization, "ranges Optimizer.step#… / Optimizer.zero_grad#…"};
  }
  if (kind == EventKind::Operator) {
    if (starts_with(name, "autograd::engine::evaluate_function:")) {
      return {Phase::Backward, "autograd engine operators (autograd::engine::evaluate_function: …)"};
    }
    if (is_backward_operator_name(name)) return {Phase::Backward, "operators named …Backward / …_backward"};
    if (is_optimizer_operator_name(name)) return {Phase::Optimization, "DIOPI optimizer operators"};
  }
  return {};
}

void add_phase_rule(std::string& source, std::string_view rule) {
  if (source.find(rule) != std::string::npos) return;
  source += source.empty() ? "" : "; ";
  source += rule;
}

// Forward without module ranges: the step's outermost operators that lie in no other phase and
// start before its first backward (else optimization) interval, from the first to the last.
bool finish_step_phases(StepScope& st, std::array<std::vector<Interval>, 4>& raw,
                        const std::vector<Interval>& plain_operators) {
  for (std::size_t p = 0; p < 4; ++p) st.phases[p] = clip(merge_intervals(raw[p]), st.start, st.end);
  bool inferred = false;
  if (st.phases[kForward].empty()) {
    uint64_t limit = std::numeric_limits<uint64_t>::max();
    if (!st.phases[kBackward].empty()) limit = st.phases[kBackward].front().start;
    else if (!st.phases[kOptimization].empty()) limit = st.phases[kOptimization].front().start;
    Interval forward{std::numeric_limits<uint64_t>::max(), 0};
    for (const Interval& op : plain_operators) {
      if (op.start >= limit || inside(st.phases[kDataloader], op.start) || inside(st.phases[kBackward], op.start) ||
          inside(st.phases[kOptimization], op.start)) {
        continue;
      }
      forward.start = std::min(forward.start, op.start);
      forward.end = std::max(forward.end, op.end);
    }
    if (forward.end > forward.start) st.phases[kForward] = clip({forward}, st.start, st.end);
    inferred = !st.phases[kForward].empty();
  }
  for (std::size_t p = 0; p < 4; ++p) st.phase_found[p] = !st.phases[p].empty();
  return inferred;
}

Phase phase_at(const StepScope& st, uint64_t t) {
  for (std::size_t p = 0; p < 4; ++p) {
    if (inside(st.phases[p], t)) return kPhases[p];
  }
  return Phase::None;
}

namespace {

PhaseMatch record_phase(const HostRecord& h) { return match_phase(h.kind, h.name); }

// `step_records`: how many host records are steps (none: no walk for them).
std::vector<StepScope> steps_of(const Trace& t, std::size_t step_records) {
  std::vector<StepScope> steps;
  for (const StepSpan& s : t.steps) steps.push_back({s.number, s.start_ns, s.end_ns, {}, {}});
  if (steps.empty() && step_records != 0) {
    for (const HostRecord& h : t.host) {
      if (h.kind == EventKind::Step) steps.push_back({h.arg0, h.start_ns, h.end_ns, {}, {}});
    }
  }
  std::sort(steps.begin(), steps.end(), [](const StepScope& a, const StepScope& b) { return a.start < b.start; });
  return steps;
}

// The whole trace as one pseudo-step: from the first to the last host record (`host`, their
// extent: count_host_kinds) or device work.
StepScope window_of(const Trace& t, const Interval& host) {
  StepScope w;
  w.start = host.start, w.end = host.end;
  for (const DeviceRecord& d : t.device) {
    if (is_device_work(d.kind)) w.start = std::min(w.start, d.start_ns), w.end = std::max(w.end, d.end_ns);
  }
  if (w.start > w.end) w.start = w.end = 0;
  return w;
}

int32_t step_at(const std::vector<StepScope>& steps, uint64_t t) {
  auto it = std::upper_bound(steps.begin(), steps.end(), t,
                             [](uint64_t v, const StepScope& s) { return v < s.start; });
  if (it == steps.begin()) return -1;
  --it;
  return t < it->end ? static_cast<int32_t>(it - steps.begin()) : -1;
}

void assign_steps(const Trace& t, TraceScope& s) {
  if (!s.has_steps) return;  // every record is in the pseudo-step: no arrays (host_step_of)
  s.host_step.assign(t.host.size(), -1);
  s.device_step.assign(t.device.size(), -1);
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    s.host_step[i] = step_at(s.steps, t.host[i].start_ns);
    s.outside_host += s.host_step[i] < 0;
  }
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    s.device_step[i] = valid_index(d.host, t.host.size()) ? s.host_step[d.host] : step_at(s.steps, d.start_ns);
    s.outside_device += s.device_step[i] < 0;
  }
}

// Per host record the nearest operator around it (not itself), per device record the innermost
// operator at or above its call: the nesting walk of host_costs(), its order reused.
void link_operators(const Trace& t, TraceScope& s) {
  if (s.host_count(EventKind::Operator) == 0) return;  // no arrays, no nesting walk (outer_operator_of)
  const std::size_t n = t.host.size();
  s.outer_operator.assign(n, kNoIndex);
  s.device_operator.assign(t.device.size(), kNoIndex);
  const std::vector<int64_t> operator_here =
      nearest_at_or_above(t, s.costs.order, [](EventKind k) { return k == EventKind::Operator; });
  for (std::size_t i = 0; i < n; ++i) {
    if (valid_index(t.host[i].parent, n)) s.outer_operator[i] = operator_here[t.host[i].parent];
  }
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    if (is_device_work(d.kind) && valid_index(d.host, n)) s.device_operator[i] = operator_here[d.host];
  }
}

// The phases of each step from its records: the rules' intervals and the outermost operators
// that match no rule (finish_step_phases).
void find_phases(const Trace& t, TraceScope& s) {
  std::vector<std::array<std::vector<Interval>, 4>> raw(s.steps.size());
  std::vector<std::vector<Interval>> plain_operators(s.steps.size());
  const bool any_named = s.host_count(EventKind::Range) + s.host_count(EventKind::Operator) != 0;
  for (std::size_t i = 0; any_named && i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    // Only ranges and operators match a phase rule (match_phase) or infer Forward.
    const int32_t k = s.host_step_of(i);
    if (k < 0 || (h.kind != EventKind::Range && h.kind != EventKind::Operator)) continue;
    const PhaseMatch m = record_phase(h);
    if (h.kind == EventKind::Operator && s.outer_operator_of(i) < 0 && m.phase == Phase::None) {
      plain_operators[k].push_back({h.start_ns, h.end_ns});
    }
    if (m.phase == Phase::None) continue;
    raw[k][static_cast<std::size_t>(m.phase)].push_back({h.start_ns, h.end_ns});
    add_phase_rule(s.phase_source[static_cast<std::size_t>(m.phase)], m.rule);
  }
  for (std::size_t k = 0; k < s.steps.size(); ++k) {
    s.forward_inferred = finish_step_phases(s.steps[k], raw[k], plain_operators[k]) || s.forward_inferred;
  }
  if (s.forward_inferred) add_phase_rule(s.phase_source[kForward], kForwardInferredRule);
}

void assign_device_phases(const Trace& t, TraceScope& s) {
  for (const StepScope& st : s.steps) {
    for (bool found : st.phase_found) s.any_phase = s.any_phase || found;
  }
  if (!s.any_phase) return;  // every record's phase is None (device_phase_of): no array, no walk
  s.device_phase.assign(t.device.size(), Phase::None);
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const int32_t k = s.device_step_of(i);
    if (k < 0) continue;
    const DeviceRecord& d = t.device[i];
    const uint64_t at = valid_index(d.host, t.host.size()) ? t.host[d.host].start_ns : d.start_ns;
    s.device_phase[i] = phase_at(s.steps[k], at);
  }
}

}  // namespace

std::string_view phase_name(Phase phase) {
  switch (phase) {
    case Phase::Dataloader: return "Dataloader";
    case Phase::Forward: return "Forward";
    case Phase::Backward: return "Backward";
    case Phase::Optimization: return "Optimization";
    case Phase::None: break;
  }
  return "Others";
}

bool is_phase_range(std::string_view n) {
  return is_dataloader_range(n) || is_module_range(n) || is_backward_range(n) || is_optimizer_range(n);
}

// "nccl", "rccl" or "hccl" in any case. Asked for every kernel record of a window: it compares
// in place rather than lowering a copy of each (long) kernel name.
bool is_communication(std::string_view name) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  for (std::size_t i = 0; i + 4 <= name.size(); ++i) {
    const char first = lower(name[i]);
    if ((first == 'n' || first == 'r' || first == 'h') && lower(name[i + 1]) == 'c' && lower(name[i + 2]) == 'c' &&
        lower(name[i + 3]) == 'l') {
      return true;
    }
  }
  return false;
}

std::string_view operator_family(std::string_view name) {
  std::string_view s = name;
  if (const std::size_t colon = s.rfind(": "); colon != std::string_view::npos) s = s.substr(colon + 2);
  if (const std::size_t ns = s.rfind("::"); ns != std::string_view::npos) s = s.substr(ns + 2);
  auto strip = [&s](std::string_view suffix) {
    if (s.size() > suffix.size() && ends_with(s, suffix)) return s.remove_suffix(suffix.size()), true;
    return false;
  };
  if (s.size() > 5 && starts_with(s, "diopi") && std::isupper(static_cast<unsigned char>(s[5]))) {
    s.remove_prefix(5);
    static constexpr std::string_view kSuffixes[] = {"Backward", "Inp", "Scalar", "Tensor", "1d", "2d", "3d"};
    for (bool again = true; again;) {
      again = false;
      for (std::string_view suffix : kSuffixes) again = again || strip(suffix);
    }
  } else {
    for (bool again = true; again;) {
      std::size_t end = s.size();
      while (end > 0 && std::isdigit(static_cast<unsigned char>(s[end - 1]))) --end;
      again = false;
      if (end > 8 && ends_with(s.substr(0, end), "Backward") && end - 8 > 0) {
        s = s.substr(0, end - 8), again = true;
      } else {
        again = strip("_backward") || strip("_");
      }
    }
    while (s.size() > 1 && s.front() == '_') s.remove_prefix(1);
  }
  return s.empty() ? name : s;
}

namespace {

// Every summary that splits communication from computation asks per kernel record: the name
// is searched once per distinct name, the answer kept by the name's interned id (no hash per
// record). The same walk finds whether the steps' device work is all computation kernels, and
// counts the steps' device records by kind.
void find_communication(const Trace& trace, TraceScope& s) {
  enum : uint8_t { kUnknown, kComputation, kCommunication };
  std::vector<uint8_t> by_name_id;
  s.device_communication.resize(trace.device.size());
  s.work_all_computation = true;
  for (std::size_t i = 0; i < trace.device.size(); ++i) {
    const DeviceRecord& d = trace.device[i];
    if (s.device_in(i) && static_cast<std::size_t>(d.kind) < s.device_kinds_in_steps.size()) {
      ++s.device_kinds_in_steps[static_cast<std::size_t>(d.kind)];
    }
    if (d.kind != DeviceKind::Kernel) {
      if (s.device_in(i) && is_device_work(d.kind)) s.work_all_computation = false;
      continue;
    }
    const uint32_t id = d.name.id();
    if (id >= by_name_id.size()) by_name_id.resize(std::size_t(id) + 1, kUnknown);
    uint8_t& known = by_name_id[id];
    if (known == kUnknown) known = is_communication(d.name) ? kCommunication : kComputation;
    s.device_communication[i] = known == kCommunication;
    if (known == kCommunication && s.device_in(i)) s.work_all_computation = false;
  }
}

// The same walk gives the host records' extent (from the first start to the last end; {max, 0}
// without records) for window_of.
Interval count_host_kinds(const Trace& t, TraceScope& s) {
  Interval extent{std::numeric_limits<uint64_t>::max(), 0};
  for (const HostRecord& h : t.host) {
    if (static_cast<std::size_t>(h.kind) < s.host_kinds.size()) ++s.host_kinds[static_cast<std::size_t>(h.kind)];
    extent.start = std::min(extent.start, h.start_ns), extent.end = std::max(extent.end, h.end_ns);
  }
  return extent;
}

}  // namespace

TraceScope scope_trace(const Trace& trace, bool phases) {
  TraceScope s;
  const Interval host_extent = count_host_kinds(trace, s);
  s.steps = steps_of(trace, s.host_count(EventKind::Step));
  s.has_steps = !s.steps.empty();
  if (!s.has_steps) s.steps.push_back(window_of(trace, host_extent));
  assign_steps(trace, s);
  s.costs = host_costs(trace);
  s.any_device_work = s.costs.any_device_work;
  link_operators(trace, s);
  if (!phases) return s;
  find_phases(trace, s);
  assign_device_phases(trace, s);
  find_communication(trace, s);
  return s;
}

}  // namespace profagent::exporters
