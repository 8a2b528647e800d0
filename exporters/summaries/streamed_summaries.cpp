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
         name == "memory_manipulation" || name == "user_defined" || (name == "operator" && !o.op_detail);
}

void OpenUnion::add(std::vector<Interval>& part) {
  merge_intervals(part);
  if (part.empty()) return;
  for (Interval& i : part) {
    if (i.start >= closed_end_) continue;
    ++late_;  // reaches into what was closed: its part before that end is left out
    i.start = std::min(i.end, closed_end_);
  }
  std::erase_if(part, [](const Interval& i) { return i.end <= i.start; });
  if (part.empty()) return;
  // Only the open intervals that end at or after the part's first start can merge with it
  // (open_ is disjoint and sorted, so its ends are sorted too): a part mostly lies after them all.
  const auto from = std::lower_bound(open_.begin(), open_.end(), part.front().start,
                                     [](const Interval& i, uint64_t start) { return i.end < start; });
  std::vector<Interval> tail(from, open_.end());
  open_.erase(from, open_.end());
  const std::size_t middle = tail.size();
  tail.insert(tail.end(), part.begin(), part.end());
  std::inplace_merge(tail.begin(), tail.begin() + std::ptrdiff_t(middle), tail.end(),
                     [](const Interval& a, const Interval& b) { return a.start < b.start; });
  merge_intervals(tail);  // sorted already: one pass
  open_.insert(open_.end(), tail.begin(), tail.end());
  if (open_.size() <= kMaxOpen) return;
  const std::size_t closing = open_.size() / 2;
  for (std::size_t i = 0; i < closing; ++i) closed_length_ += open_[i].end - open_[i].start;
  closed_end_ = open_[closing - 1].end;
  open_.erase(open_.begin(), open_.begin() + std::ptrdiff_t(closing));
}

uint64_t OpenUnion::length() const {
  uint64_t total = closed_length_;
  for (const Interval& i : open_) total += i.end - i.start;
  return total;
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

void SummaryFold::add(const Trace& part, const TraceScope& scope) {
  saw_steps_ = saw_steps_ || scope.has_steps;
  if (saw_steps_) return;  // not the window's summaries: nothing more is folded
  if (wants(options_, "kernel")) add_kernels(part, scope);
  if (wants(options_, "operator") && !options_.op_detail) add_operators(part, scope);
  if (wants(options_, "op_type")) add_op_types(part, scope);
  if (wants_spans()) add_spans(part, scope);
  if (wants(options_, "memory_manipulation")) add_memory_manipulation(part, scope);
  if (wants(options_, "user_defined")) add_user_defined(part, scope);
}

bool SummaryFold::wants_spans() const {
  return wants(options_, "device") || wants(options_, "memory_manipulation") || wants(options_, "user_defined");
}

uint64_t SummaryFold::late_device_intervals() const {
  uint64_t late = device_busy_.late();
  for (const auto& [device, busy] : kernels_busy_) late += busy.late();
  return late;
}

// A window without steps is one span (trace_scope.h window_of): from its first host record or
// device work to its last; its device time is the union of its device work.
void SummaryFold::add_spans(const Trace& t, const TraceScope&) {
  std::vector<Interval> busy;
  std::map<uint32_t, std::vector<Interval>> kernels;
  for (const HostRecord& h : t.host) window_start_ = std::min(window_start_, h.start_ns), window_end_ = std::max(window_end_, h.end_ns);
  for (const DeviceRecord& d : t.device) {
    if (!is_device_work(d.kind)) continue;
    window_start_ = std::min(window_start_, d.start_ns), window_end_ = std::max(window_end_, d.end_ns);
    busy.push_back({d.start_ns, d.end_ns});
    if (d.kind == DeviceKind::Kernel && wants(options_, "device")) kernels[d.device].push_back({d.start_ns, d.end_ns});
  }
  device_busy_.add(busy);
  for (auto& [device, intervals] : kernels) kernels_busy_[device].add(intervals);
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
    if (!s.host_in(i) || (h.kind != EventKind::Memcpy && h.kind != EventKind::Memset)) continue;
    const uint64_t key = uint64_t(h.name.id()) << 32 | direction[i];
    SummaryRow& row = copy_calls_.of_key(key, host_position(h), [&] {
      const std::string dir = direction[i] < direction_names_.size() ? direction_names_[direction[i]] : "";
      return SummaryRow{dir.empty() ? h.name.str() : h.name + " (" + dir + ")", SummaryRowKind::Call, 0, 0, Stat{}, Stat{}};
    });
    ++row.calls;
    row.cpu->add(span_ns(h.start_ns, h.end_ns));
    row.gpu->add(s.costs.device(i));
  }
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    const bool copy_or_set = d.kind == DeviceKind::Memcpy || d.kind == DeviceKind::Memset;
    if (!s.device_in(i) || !copy_or_set || valid_index(d.host, t.host.size())) continue;
    SummaryRow& row = copy_orphans_.of(d.name, {0, d.start_ns, 0}, [&] {
      const SummaryRowKind kind = d.kind == DeviceKind::Memcpy ? SummaryRowKind::Memcpy : SummaryRowKind::Memset;
      return SummaryRow{d.name, kind, 0, 0, std::nullopt, Stat{}};
    });
    ++row.calls;
    row.gpu->add(span_ns(d.start_ns, d.end_ns));
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
    if (!s.host_in(i) || h.kind != EventKind::Range || is_phase_range(h.name)) continue;
    SummaryRow& row = ranges_[options_.thread_sep ? h.tid : 0].of(h.name, host_position(h), [&] {
      return SummaryRow{h.name, SummaryRowKind::Range, 0, 0, Stat{}, Stat{}};
    });
    ++row.calls;
    row.cpu->add(span_ns(h.start_ns, h.end_ns));
    row.gpu->add(s.costs.device(i));
  }
}

void SummaryFold::add_kernels(const Trace& t, const TraceScope& s) {
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    if (!s.device_in(i) || d.kind != DeviceKind::Kernel) continue;
    SummaryRow& row = kernels_.of(d.name, {0, d.start_ns, 0}, [&] {
      return SummaryRow{d.name, SummaryRowKind::Kernel, 0, 0, std::nullopt, Stat{}};
    });
    ++row.calls;
    row.gpu->add(span_ns(d.start_ns, d.end_ns));
  }
}

void SummaryFold::add_operators(const Trace& t, const TraceScope& s) {
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    if (!s.host_in(i) || h.kind != EventKind::Operator || s.outer_operator[i] >= 0) continue;
    SummaryRow& row = operators_[options_.thread_sep ? h.tid : 0].of(h.name, host_position(h), [&] {
      return SummaryRow{h.name, SummaryRowKind::Operator, 0, 0, Stat{}, Stat{}};
    });
    ++row.calls;
    row.cpu->add(span_ns(h.start_ns, h.end_ns));
    row.gpu->add(s.costs.device(i));
  }
}

void SummaryFold::add_op_types(const Trace& t, const TraceScope& s) {
  std::vector<uint64_t> self_device(t.host.size(), 0);
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    if (!s.device_in(i) || !is_device_work(t.device[i].kind)) continue;
    device_work_ = true;
    if (valid_index(s.device_operator[i], t.host.size())) {
      self_device[s.device_operator[i]] += span_ns(t.device[i].start_ns, t.device[i].end_ns);
    }
  }
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    if (!s.host_in(i) || h.kind != EventKind::Operator) continue;
    OpTypeRow& row = op_types_.of(h.name, host_position(h), [&] {
      return OpTypeRow{std::string(operator_family(h.name)), 0, 0, 0, 0};
    });
    ++row.calls;
    row.device_ns += self_device[i];
    row.cpu_ns += s.costs.self_cpu_ns[i];
  }
}

Summaries SummaryFold::summaries(const Trace& tail) const {
  Summaries out;
  out.span_cpu_ns = window_start_ < window_end_ ? window_end_ - window_start_ : 0;
  out.span_gpu_ns = device_busy_.length();
  if (wants(options_, "device")) {
    device_cpu_figures(tail, out);
    for (const auto& [device, busy] : kernels_busy_) {
      out.devices.push_back({"GPU" + std::to_string(device), percent(busy.length(), out.span_cpu_ns)});
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
  return out;
}

std::string render_streamed_summaries(const Trace& tail, const SummaryFold& fold, const Table& table,
                                      const SummaryOptions& options) {
  SummaryOptions shown = options;
  shown.names.clear();
  std::string missing;
  for (const std::string& name : options.names) {
    if (folds_streamed(name, options) && !fold.saw_steps()) shown.names.push_back(name);
    else missing += (missing.empty() ? "" : ", ") + name;
  }
  Summaries s = fold.summaries(tail);
  s.key_averages = table;
  const std::string overhead = overhead_line(tail);
  std::string text = render_summaries_text(tail, s, shown);
  if (text.ends_with(overhead)) text.resize(text.size() - overhead.size());
  if (!missing.empty()) {
    const std::string why = fold.saw_steps()
                                ? "the window has steps, and a segment is cut before the steps around its records end"
                                : "they need the whole window's records at once (interval unions, steps, memory)";
    text += "Not computed for a streamed window: " + missing + " (" + why +
            "; `profagent report` computes them from the trace).\n";
  }
  if (fold.late_device_intervals() > 0 && !shown.names.empty()) {
    text += "Not exact: the Device Summary's GPU rows and the GPU Ratio(%) of Memory Manipulation and UserDefined: " +
            std::to_string(fold.late_device_intervals()) +
            " device intervals came after the union of the device time before them was closed "
            "(their part before it was left out, as if covered already: the figures may be short by that much).\n";
  }
  return text + overhead;
}

}  // namespace profagent::exporters
