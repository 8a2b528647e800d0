#include "exporters/summaries/streamed_summaries.h"

#include <algorithm>
#include <numeric>

#include "exporters/summaries/overhead_line.h"
#include "exporters/summaries/step_summaries.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

constexpr uint32_t kNoRow = UINT32_MAX;

std::tuple<uint32_t, uint64_t, uint64_t> host_position(const HostRecord& h) {
  return {uint32_t(h.tid), h.start_ns, UINT64_MAX - h.end_ns};
}

}  // namespace

bool folds_streamed(std::string_view name, const SummaryOptions& o) {
  return name == "device" || name == "kernel" || name == "op_type" || name == "key_averages" ||
         name == "memory_manipulation" || name == "user_defined" || name == "memory" || (name == "operator" && !o.op_detail);
}

const std::string& row_text(const SummaryRow& r) { return r.name; }
const std::string& row_text(const OpTypeRow& r) { return r.type; }

template <typename Row>
template <typename Make>
std::size_t SummaryFold::Rows<Row>::insert(Make make, const Position& at) {
  Row fresh = make();
  auto [it, inserted] = by_text.try_emplace(row_text(fresh), rows.size());
  if (inserted) rows.push_back({std::move(fresh), at});
  return it->second;
}

template <typename Row>
Row& SummaryFold::Rows<Row>::at_index(std::size_t index, const Position& at) {
  Folded<Row>& f = rows[index];
  f.first = std::min(f.first, at);
  return f.row;
}

template <typename Row>
template <typename Make>
Row& SummaryFold::Rows<Row>::of(InternedName name, const Position& at, Make make) {
  const uint32_t id = name.id();
  if (id >= by_name_id.size()) by_name_id.resize(id + 1, kNoRow);
  if (by_name_id[id] == kNoRow) by_name_id[id] = uint32_t(insert(make, at));
  return at_index(by_name_id[id], at);
}

template <typename Row>
template <typename Make>
Row& SummaryFold::Rows<Row>::of_key(uint64_t key, const Position& at, Make make) {
  auto found = by_key.find(key);
  if (found == by_key.end()) found = by_key.emplace(key, insert(make, at)).first;
  return at_index(found->second, at);
}

template <typename Row>
std::vector<Row> SummaryFold::Rows<Row>::in_first_order() const {
  std::vector<std::size_t> order(rows.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rows[a].first < rows[b].first; });
  std::vector<Row> out;
  out.reserve(rows.size());
  for (std::size_t i : order) out.push_back(rows[i].row);
  return out;
}

namespace {

constexpr uint32_t kKernelWork = 1u << 31;  // Contribution::extra of a kernel's interval

// The time that decides a device record's step: its call's start, else its own (trace_scope.cpp assign_steps).
uint64_t device_at(const Trace& t, const DeviceRecord& d) {
  return valid_index(d.host, t.host.size()) ? t.host[std::size_t(d.host)].start_ns : d.start_ns;
}


}  // namespace

void SummaryFold::add(const Trace& part, const TraceScope& scope, StepsSoFar steps) {
  if (!not_folded_.empty()) return;
  // Steps from the part's own ProfilerStep records (steps_of) would not be the window's.
  if (scope.has_steps && part.steps.empty()) return give_up("the window's steps are its ProfilerStep records");
  steps_.update(std::move(steps));
  route_waiting();
  contribute(part, scope, /*last=*/false);
  flush_intervals();
  if (over_bound_) {
    give_up("a step had more than " + std::to_string(kMaxWaiting) + " contributions or " +
            std::to_string(kMaxWaitingRecords) + " records waiting for its end");
  }
}

void SummaryFold::add_last(const Trace& tail, const TraceScope& scope) {
  if (!not_folded_.empty()) return;
  if (scope.has_steps && tail.steps.empty()) return give_up("the window's steps are its ProfilerStep records");
  if (!steps_.expected() && !tail.steps.empty() && folded_without_steps_) {
    return give_up("a step was marked (profagent_step()) in a window not set up for steps, after part of it was folded");
  }
  std::string why = steps_.finish(tail.steps);
  if (!why.empty()) return give_up(std::move(why));
  route_waiting();
  contribute(tail, scope, /*last=*/true);
  flush_intervals();
}

void SummaryFold::give_up(std::string why) {
  *this = SummaryFold(options_);
  not_folded_ = std::move(why);
}

// Every contribution and record of the part, each added, left out or kept by its step (take()).
void SummaryFold::contribute(const Trace& t, const TraceScope& scope, bool last) {
  device_at_.clear();
  for (const DeviceRecord& d : t.device) device_at_.push_back(device_at(t, d));
  if (!steps_.all_in()) {
    for (const HostRecord& h : t.host) count_record(h.start_ns, true);
    for (const uint64_t at : device_at_) count_record(at, false);
  }
  if (wants(options_, "kernel")) add_kernels(t, scope);
  if (wants(options_, "operator") && !options_.op_detail) add_operators(t, scope);
  if (wants(options_, "op_type")) add_op_types(t, scope);
  if (wants_spans() || wants(options_, "op_type")) add_spans(t, scope);
  if (wants(options_, "memory_manipulation")) add_memory_manipulation(t, scope);
  if (wants(options_, "user_defined")) add_user_defined(t, scope);
  per_step_.add(t, scope, device_at_, steps_, last);
}

// Applies, drops or keeps the contribution by its step: true when it is to be kept (waits).
bool SummaryFold::settle(const Contribution& c) {
  uint32_t step = 0, also = 0;
  StepFate fate = steps_.fate(c.at, step);
  if (fate == StepFate::In && c.into == Into::OpTypeDevice) fate = steps_.fate(c.also_at, also);
  if (fate == StepFate::In) apply(c, step);
  return fate == StepFate::Later;
}

// Past the bound nothing more is kept (the fold gives up after the part): the vectors never
// grow beyond it. A part of a window cut meanwhile waits whole: a segment bounds it already.
void SummaryFold::take(const Contribution& c) {
  if (!settle(c)) return;
  if (waiting_.size() < kMaxWaiting || !steps_.current()) waiting_.push_back(c);
  else over_bound_ = true;
}

// A record in no step is counted (the blocks' "Left out" line); one whose step is not known yet
// waits: true.
bool SummaryFold::settle_record(uint64_t at, bool host) {
  uint32_t step = 0;
  const StepFate fate = steps_.fate(at, step);
  (host ? outside_host_ : outside_device_) += fate == StepFate::Out;
  return fate == StepFate::Later;
}

void SummaryFold::count_record(uint64_t at, bool host) {
  if (!settle_record(at, host)) return;
  if (waiting_host_at_.size() + waiting_device_at_.size() < kMaxWaitingRecords || !steps_.current()) {
    (host ? waiting_host_at_ : waiting_device_at_).push_back(at);
  } else {
    over_bound_ = true;
  }
}

// What waited for its step, decided again with the steps known now; what still waits is kept
// in place (no second copy of it).
void SummaryFold::route_waiting() {
  std::erase_if(waiting_, [this](const Contribution& c) { return !settle(c); });
  std::erase_if(waiting_host_at_, [this](uint64_t at) { return !settle_record(at, true); });
  std::erase_if(waiting_device_at_, [this](uint64_t at) { return !settle_record(at, false); });
}

void SummaryFold::apply(const Contribution& c, uint32_t step) {
  folded_without_steps_ = folded_without_steps_ || !steps_.expected();
  switch (c.into) {
    case Into::Kernel: {
      SummaryRow& row = kernels_.of(c.name, c.first, [&] {
        return SummaryRow{c.name, SummaryRowKind::Kernel, 0, 0, std::nullopt, Stat{}};
      });
      ++row.calls;
      row.gpu->add(c.b);
      return;
    }
    case Into::Operator:
    case Into::Range: {
      const bool op = c.into == Into::Operator;
      SummaryRow& row = (op ? operators_ : ranges_)[c.key].of(c.name, c.first, [&] {
        return SummaryRow{c.name, op ? SummaryRowKind::Operator : SummaryRowKind::Range, 0, 0, Stat{}, Stat{}};
      });
      ++row.calls;
      row.cpu->add(c.a);
      row.gpu->add(c.b);
      return;
    }
    case Into::OpType:
    case Into::OpTypeDevice: {
      OpTypeRow& row = op_types_.of(c.name, c.first, [&] {
        return OpTypeRow{std::string(operator_family(c.name)), 0, 0, 0, 0};
      });
      if (c.into == Into::OpTypeDevice) return void(row.device_ns += c.b);
      ++row.calls;
      row.cpu_ns += c.a;
      return;
    }
    case Into::CopyCall: {
      SummaryRow& row = copy_calls_.of_key(c.key, c.first, [&] {
        const std::string dir = c.extra < direction_names_.size() ? direction_names_[c.extra] : "";
        return SummaryRow{dir.empty() ? c.name.str() : c.name + " (" + dir + ")", SummaryRowKind::Call, 0, 0, Stat{}, Stat{}};
      });
      ++row.calls;
      row.cpu->add(c.a);
      row.gpu->add(c.b);
      return;
    }
    case Into::CopyOrphan: {
      SummaryRow& row = copy_orphans_.of(c.name, c.first, [&] {
        return SummaryRow{c.name, c.extra ? SummaryRowKind::Memset : SummaryRowKind::Memcpy, 0, 0, std::nullopt, Stat{}};
      });
      ++row.calls;
      row.gpu->add(c.b);
      return;
    }
    case Into::Work: {
      device_work_ = true;
      busy_batch_.push_back({c.a, c.b});
      if (!(c.extra & kKernelWork) || !wants(options_, "device")) return;
      const uint32_t device = c.extra & ~kKernelWork;
      kernel_batch_[device].push_back({c.a, c.b});
      std::vector<Interval>& steps = kernel_steps_[device];
      if (steps.size() <= step) steps.resize(step + 1, Interval{UINT64_MAX, 0});
      steps[step].start = std::min(steps[step].start, c.a);
      steps[step].end = std::max(steps[step].end, c.b);
      return;
    }
  }
}

void SummaryFold::flush_intervals() {
  device_busy_.add(busy_batch_);
  busy_batch_.clear();
  for (auto& [device, intervals] : kernel_batch_) kernels_busy_[device].add(intervals);
  kernel_batch_.clear();
}

bool SummaryFold::wants_spans() const {
  return wants(options_, "device") || wants(options_, "memory_manipulation") || wants(options_, "user_defined");
}

uint64_t SummaryFold::late_device_intervals() const {
  uint64_t late = device_busy_.late() + per_step_.late_intervals();
  for (const auto& [device, busy] : kernels_busy_) late += busy.late();
  return late;
}

// A window without steps is one span (trace_scope.h window_of): from its first host record or
// device work to its last. Its device time is the union of its device work in the steps.
void SummaryFold::add_spans(const Trace& t, const TraceScope&) {
  for (const HostRecord& h : t.host) window_start_ = std::min(window_start_, h.start_ns), window_end_ = std::max(window_end_, h.end_ns);
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    if (!is_device_work(d.kind)) continue;
    window_start_ = std::min(window_start_, d.start_ns), window_end_ = std::max(window_end_, d.end_ns);
    Contribution c{device_at_[i], 0, {}, {}, 0, d.start_ns, d.end_ns, d.device, Into::Work};
    if (d.kind == DeviceKind::Kernel) c.extra |= kKernelWork;
    take(c);
  }
}

// A copy call's row is "<call> (<direction>)" when one of its copy records names a direction
// (row_summaries.cpp compute_memory_manipulation): keyed by the ids of the call's name and of
// the direction, each direction found once per copy record name.
void SummaryFold::add_memory_manipulation(const Trace& t, const TraceScope& s) {
  std::vector<uint32_t> direction(t.host.size(), 0);  // per call: its direction's name id, 0: none
  for (const DeviceRecord& d : t.device) {
    if (d.kind != DeviceKind::Memcpy || !valid_index(d.host, t.host.size())) continue;
    uint32_t& call = direction[std::size_t(d.host)];
    if (call == 0) call = direction_of(d.name);
  }
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    if (h.kind != EventKind::Memcpy && h.kind != EventKind::Memset) continue;
    const uint64_t key = uint64_t(h.name.id()) << 32 | direction[i];
    take({h.start_ns, 0, host_position(h), h.name, key, span_ns(h.start_ns, h.end_ns), s.costs.device(i),
                      direction[i], Into::CopyCall});
  }
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    const bool copy_or_set = d.kind == DeviceKind::Memcpy || d.kind == DeviceKind::Memset;
    if (!copy_or_set || valid_index(d.host, t.host.size())) continue;
    take({d.start_ns, 0, {0, d.start_ns, 0}, d.name, 0, 0, span_ns(d.start_ns, d.end_ns),
                      d.kind == DeviceKind::Memset, Into::CopyOrphan});
  }
}

uint32_t SummaryFold::direction_of(InternedName copy_record) {
  const uint32_t id = copy_record.id();
  if (id >= direction_by_record_.size()) direction_by_record_.resize(id + 1, kNoRow);
  if (direction_by_record_[id] == kNoRow) {
    const InternedName direction(copy_direction(copy_record));
    direction_by_record_[id] = direction.id();
    if (direction.id() >= direction_names_.size()) direction_names_.resize(direction.id() + 1);
    direction_names_[direction.id()] = direction.str();
  }
  return direction_by_record_[id];
}

void SummaryFold::add_user_defined(const Trace& t, const TraceScope& s) {
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    if (h.kind != EventKind::Range || is_phase_range(h.name)) continue;
    take({h.start_ns, 0, host_position(h), h.name, options_.thread_sep ? uint64_t(h.tid) : 0,
                      span_ns(h.start_ns, h.end_ns), s.costs.device(i), 0, Into::Range});
  }
}

void SummaryFold::add_kernels(const Trace& t, const TraceScope&) {
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    if (d.kind != DeviceKind::Kernel) continue;
    take({device_at_[i], 0, {0, d.start_ns, 0}, d.name, 0, 0, span_ns(d.start_ns, d.end_ns), 0, Into::Kernel});
  }
}

void SummaryFold::add_operators(const Trace& t, const TraceScope& s) {
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    if (h.kind != EventKind::Operator || s.outer_operator_of(i) >= 0) continue;
    take({h.start_ns, 0, host_position(h), h.name, options_.thread_sep ? uint64_t(h.tid) : 0,
                      span_ns(h.start_ns, h.end_ns), s.costs.device(i), 0, Into::Operator});
  }
}

// An operator's type row: its call and self CPU time by its own step; the device work it
// issued itself by that work's step (when the operator is in a step too: row_summaries.cpp
// compute_op_types).
void SummaryFold::add_op_types(const Trace& t, const TraceScope& s) {
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    if (!is_device_work(d.kind) || !valid_index(s.device_operator_of(i), t.host.size())) continue;
    const HostRecord& op = t.host[std::size_t(s.device_operator_of(i))];
    take({device_at_[i], op.start_ns, host_position(op), op.name, 0, 0, span_ns(d.start_ns, d.end_ns), 0,
                      Into::OpTypeDevice});
  }
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    if (h.kind != EventKind::Operator) continue;
    take({h.start_ns, 0, host_position(h), h.name, 0, s.costs.self_cpu_ns[i], 0, 0, Into::OpType});
  }
}

Summaries SummaryFold::summaries(const Trace& tail) const {
  Summaries out;
  out.has_steps = steps_.has_steps();
  if (out.has_steps) {
    std::vector<Interval> steps;
    for (const StepSpan& st : steps_.steps()) steps.push_back({st.start_ns, st.end_ns});
    out.span_cpu_ns = merged_length(steps);
  } else {
    out.span_cpu_ns = window_start_ < window_end_ ? window_end_ - window_start_ : 0;
  }
  out.span_gpu_ns = device_busy_.length();
  out.outside_host = outside_host_;
  out.outside_device = outside_device_;
  if (wants(options_, "device")) {
    device_cpu_figures(tail, out);
    static const std::vector<Interval> kNone;
    std::vector<Interval> steps;
    for (const StepSpan& step : steps_.steps()) steps.push_back({step.start_ns, step.end_ns});
    for (const auto& [device, busy] : kernels_busy_) {
      const auto kernels = kernel_steps_.find(device);
      const uint64_t base = out.has_steps ? widened_steps_length(steps, kernels == kernel_steps_.end() ? kNone : kernels->second)
                                          : out.span_cpu_ns;
      out.devices.push_back({"GPU" + std::to_string(device), percent(busy.length(), base)});
    }
  }
  if (wants(options_, "kernel")) finish_kernels(kernels_.in_first_order(), options_, out);
  if (wants(options_, "operator") && !options_.op_detail) {
    for (const auto& [tid, rows] : operators_) {
      ThreadRows& section = out.operators.emplace_back();
      section.thread = options_.thread_sep ? std::to_string(tid) : "All threads merged";
      section.rows = rows.in_first_order();
      finish_operator_rows(section.rows, options_, section.rows_total);
    }
    if (operators_.empty() && !options_.thread_sep) out.operators.push_back({"All threads merged", {}, 0});
  }
  if (wants(options_, "op_type")) finish_op_types(op_types_.in_first_order(), device_work_, options_, out);
  if (wants(options_, "memory_manipulation")) {
    out.memory_manipulation = copy_calls_.in_first_order();
    for (SummaryRow& row : copy_orphans_.in_first_order()) out.memory_manipulation.push_back(std::move(row));
    finish_span_rows(out.memory_manipulation, out, options_, out.memory_manipulation_total);
  }
  if (wants(options_, "user_defined")) {
    for (const auto& [tid, rows] : ranges_) {
      ThreadRows& section = out.user_defined.emplace_back();
      section.thread = options_.thread_sep ? std::to_string(tid) : "All threads merged";
      section.rows = rows.in_first_order();
      finish_span_rows(section.rows, out, options_, section.rows_total);
    }
    if (ranges_.empty() && !options_.thread_sep) out.user_defined.push_back({"All threads merged", {}, 0});
  }
  if (per_step_.wanted() && per_step_.not_folded().empty() && !per_step_.no_steps()) per_step_.summaries(out);
  return out;
}

std::string SummaryFold::not_made(std::string_view name) const {
  if (!not_folded_.empty()) return "the folded ones were not made: " + not_folded_;
  if (folds_streamed(name, options_)) return "";
  if (is_per_step_summary(name)) {
    if (per_step_.no_steps()) return "a window without steps: its one step would be all its records at once";
    return per_step_.not_folded().empty() ? "" : "given up: " + per_step_.not_folded();
  }
  return "they need the whole window's records at once (op_detail's nested rows)";
}

std::string render_streamed_summaries(const Trace& tail, const SummaryFold& fold, const Table& table,
                                      const MemorySummary& memory, const SummaryOptions& options) {
  SummaryOptions shown = options;
  shown.names.clear();
  // The summaries not made, grouped by why: "a, b (why a and b; c: why c; ...)".
  std::vector<std::pair<std::string, std::string>> missing;  // why, names
  for (const std::string& name : options.names) {
    const std::string why = fold.not_made(name);
    if (why.empty()) {
      shown.names.push_back(name);
      continue;
    }
    auto same = std::find_if(missing.begin(), missing.end(), [&](const auto& m) { return m.first == why; });
    if (same == missing.end()) missing.emplace_back(why, name);
    else same->second += ", " + name;
  }
  Summaries s = fold.summaries(tail);
  s.key_averages = table;
  s.memory = memory;
  const std::string overhead = overhead_line(tail);
  std::string text = render_summaries_text(tail, s, shown);
  if (text.ends_with(overhead)) text.resize(text.size() - overhead.size());
  if (!missing.empty()) {
    std::string names, why;
    for (const auto& [reason, which] : missing) {
      names += (names.empty() ? "" : ", ") + which;
      why += (why.empty() ? "" : "; ") + (missing.size() > 1 ? which + ": " : "") + reason;
    }
    text += "Not computed for a streamed window: " + names + " (" + why +
            "; `profagent report` computes them from the trace).\n";
  }
  if (fold.late_device_intervals() > 0 && !shown.names.empty()) {
    text += "Not exact: the Device Summary's GPU rows, the GPU Ratio(%) of Memory Manipulation and UserDefined, "
            "the Overview's and the Distributed Summary's times: " +
            std::to_string(fold.late_device_intervals()) +
            " intervals came after the union they were added to was closed before them "
            "(their part before it was left out, as if covered already: the figures may be short by that much).\n";
  }
  return text + overhead;
}

}  // namespace profagent::exporters
