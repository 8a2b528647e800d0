// The summaries made of grouped rows: Operator (with its inner operators and kernels), Kernel,
// Memory Manipulation, UserDefined and the operator types. Definitions: docs/report.md.
#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>

#include "exporters/summaries/step_summaries.h"

namespace profagent::exporters {
namespace {

SummaryRowKind device_row_kind(DeviceKind k) {
  if (k == DeviceKind::Memcpy) return SummaryRowKind::Memcpy;
  if (k == DeviceKind::Memset) return SummaryRowKind::Memset;
  return SummaryRowKind::Kernel;
}

// The value a Paddle sort key reads from a row; rows without CPU time use their GPU numbers.
uint64_t sort_value(const SummaryRow& r, std::string_view key) {
  const bool gpu = key.starts_with("GPU") || !r.cpu;
  const std::optional<Stat>& stat = gpu ? r.gpu : r.cpu;
  if (!stat) return 0;
  if (key.ends_with("Avg")) return stat->avg_ns();
  if (key.ends_with("Max")) return stat->max_ns;
  if (key.ends_with("Min")) return stat->min_ns;
  return stat->total_ns;
}

void sort_rows(std::vector<SummaryRow>& rows, std::string_view key) {
  std::stable_sort(rows.begin(), rows.end(), [key](const SummaryRow& a, const SummaryRow& b) {
    return sort_value(a, key) > sort_value(b, key);
  });
}

// The top level of the Operator Summary: ratios of the rows' own sums, sorted (stable: ties
// keep the order the rows were first seen in), `total` the rows before `limit` (<= 0: all).
template <typename T, typename RowOf>
void rank_top_level(std::vector<T>& items, RowOf row_of, std::string_view key, int limit, std::size_t* total) {
  uint64_t cpu_sum = 0, gpu_sum = 0;
  for (const T& item : items) cpu_sum += row_of(item).cpu->total_ns, gpu_sum += row_of(item).gpu->total_ns;
  for (T& item : items) {
    row_of(item).cpu->ratio = percent(row_of(item).cpu->total_ns, cpu_sum);
    row_of(item).gpu->ratio = percent(row_of(item).gpu->total_ns, gpu_sum);
  }
  std::stable_sort(items.begin(), items.end(),
                   [&](const T& a, const T& b) { return sort_value(row_of(a), key) > sort_value(row_of(b), key); });
  if (total) *total = items.size();
  if (limit > 0 && items.size() > static_cast<std::size_t>(limit)) items.resize(static_cast<std::size_t>(limit));
}

// Slots of the names records carry, numbered in first-seen order and found by the name's dense
// id (interned_name.h): one indexed load per record instead of hashing the name's text (the
// same text is always the same id, so grouping by id is grouping by name).
class NameSlots {
 public:
  // The slot of `name`; `fresh` tells whether it was just made (slots count up from 0).
  std::size_t of(InternedName name, bool& fresh) {
    const uint32_t id = name.id();
    if (id >= slots_.size()) slots_.resize(std::size_t(id) + 1, kNone);
    uint32_t& slot = slots_[id];
    fresh = slot == kNone;
    if (fresh) slot = count_++;
    return slot;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> slots_;  // by name id
  uint32_t count_ = 0;
};

// Groups of one name in first-seen order. Each name is held once (a trace's names may be
// hundreds of MB): the index looks it up through views of the groups' own copies.
template <typename T>
class Groups {
 public:
  std::vector<T>& of(std::string_view name) {
    const auto found = index_.find(name);
    if (found != index_.end()) return order_[found->second].second;
    order_.push_back({std::string(name), {}});  // a deque: the names do not move
    index_.emplace(order_.back().first, order_.size() - 1);
    return order_.back().second;
  }
  // A record's interned name: its group is looked up by text once per distinct name, then by id.
  std::vector<T>& of(InternedName name) {
    const uint32_t id = name.id();
    if (id < by_id_.size() && by_id_[id]) return *by_id_[id];
    std::vector<T>& group = of(std::string_view(name));
    if (id >= by_id_.size()) by_id_.resize(std::size_t(id) + 1, nullptr);
    return *(by_id_[id] = &group);  // a deque's elements do not move
  }
  // The groups, handed over (their names may be moved out).
  std::deque<std::pair<std::string, std::vector<T>>> take() {
    index_.clear();
    by_id_.clear();
    return std::move(order_);
  }

 private:
  std::unordered_map<std::string_view, std::size_t> index_;
  std::vector<std::vector<T>*> by_id_;  // groups by name id; null: not looked up yet
  std::deque<std::pair<std::string, std::vector<T>>> order_;
};

class OperatorTree {
 public:
  OperatorTree(const Trace& t, const TraceScope& s, const SummaryOptions& o) : t_(t), s_(s), o_(o) {
    if (!o.op_detail || s.host_count(EventKind::Operator) == 0) return;  // no children to find
    op_children_.resize(t.host.size());
    device_children_.resize(t.host.size());
    for (std::size_t i = 0; i < t.host.size(); ++i) {
      if (t.host[i].kind == EventKind::Operator && valid_index(s.outer_operator_of(i), t.host.size())) {
        op_children_[s.outer_operator_of(i)].push_back(i);
      }
    }
    for (std::size_t i = 0; i < t.device.size(); ++i) {
      if (is_device_work(t.device[i].kind) && valid_index(s.device_operator_of(i), t.host.size())) {
        device_children_[s.device_operator_of(i)].push_back(i);
      }
    }
  }

  // Rows of the outermost operators `calls`, sorted, at most `limit` (<= 0: all), each followed
  // by its detail with --op-detail: its inner operators (grouped by name, recursively) and the
  // device records it issued itself. Depth first with an explicit stack, never by recursion:
  // a trace decides how deep operators nest.
  std::vector<SummaryRow> rows(const std::vector<std::size_t>& calls, int limit, std::size_t& total) const {
    std::vector<Pending> stack;
    push_reversed(stack, group(calls, 0, 0, 0, limit, &total));
    std::vector<SummaryRow> out;
    while (!stack.empty()) {
      Pending next = std::move(stack.back());
      stack.pop_back();
      out.push_back(std::move(next.row));
      if (!o_.op_detail || next.row_is_device) continue;
      const SummaryRow& parent = out.back();
      std::vector<Pending> devices = device_rows(next.members, parent);
      push_reversed(stack, std::move(devices));
      push_reversed(stack, group(inner_of(next.members), parent.depth + 1, parent.cpu->total_ns, parent.gpu->total_ns, 0));
    }
    return out;
  }

 private:
  // A row still to be written, and the calls it groups (operators: their detail comes after it).
  struct Pending {
    SummaryRow row;
    std::vector<std::size_t> members;
    bool row_is_device = false;
  };

  static void push_reversed(std::vector<Pending>& stack, std::vector<Pending> rows) {
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) stack.push_back(std::move(*it));
  }

  std::vector<std::size_t> inner_of(const std::vector<std::size_t>& members) const {
    std::vector<std::size_t> inner;
    for (std::size_t i : members) inner.insert(inner.end(), op_children_[i].begin(), op_children_[i].end());
    return inner;
  }

  // The operators `calls` grouped by name, sorted, ratios of `cpu_base`/`gpu_base` (at depth 0:
  // of the rows' own sums).
  std::vector<Pending> group(const std::vector<std::size_t>& calls, int depth, uint64_t cpu_base, uint64_t gpu_base,
                             int limit, std::size_t* total = nullptr) const {
    Groups<std::size_t> groups;
    for (std::size_t i : calls) groups.of(t_.host[i].name).push_back(i);
    std::vector<Pending> made;
    for (auto& [name, members] : groups.take()) {
      SummaryRow row{std::move(name), SummaryRowKind::Operator, depth, members.size(), Stat{}, Stat{}};
      for (std::size_t i : members) {
        row.cpu->add(span_ns(t_.host[i].start_ns, t_.host[i].end_ns));
        row.gpu->add(s_.costs.device(i));
      }
      made.push_back({std::move(row), std::move(members)});
    }
    if (depth == 0) {
      rank_top_level(made, [](auto& p) -> auto& { return p.row; }, o_.sort_by, limit, total);
      return made;
    }
    for (Pending& p : made) {
      p.row.cpu->ratio = percent(p.row.cpu->total_ns, cpu_base);
      p.row.gpu->ratio = percent(p.row.gpu->total_ns, gpu_base);
    }
    std::stable_sort(made.begin(), made.end(), [this](const Pending& a, const Pending& b) {
      return sort_value(a.row, o_.sort_by) > sort_value(b.row, o_.sort_by);
    });
    if (total) *total = made.size();
    if (limit > 0 && made.size() > static_cast<std::size_t>(limit)) made.resize(static_cast<std::size_t>(limit));
    return made;
  }

  // The device records the operators `members` issued themselves, grouped by name (no CPU time).
  std::vector<Pending> device_rows(const std::vector<std::size_t>& members, const SummaryRow& parent) const {
    Groups<std::size_t> devices;
    for (std::size_t i : members) {
      for (std::size_t d : device_children_[i]) devices.of(t_.device[d].name).push_back(d);
    }
    std::vector<SummaryRow> rows;
    for (auto& [name, records] : devices.take()) {
      SummaryRow row{std::move(name), device_row_kind(t_.device[records.front()].kind), parent.depth + 1, records.size(),
                     std::nullopt, Stat{}};
      for (std::size_t d : records) row.gpu->add(span_ns(t_.device[d].start_ns, t_.device[d].end_ns));
      row.gpu->ratio = percent(row.gpu->total_ns, parent.gpu->total_ns);
      rows.push_back(std::move(row));
    }
    sort_rows(rows, o_.sort_by);
    std::vector<Pending> out;
    for (SummaryRow& row : rows) out.push_back({std::move(row), {}, true});
    return out;
  }

  const Trace& t_;
  const TraceScope& s_;
  const SummaryOptions& o_;
  std::vector<std::vector<std::size_t>> op_children_;
  std::vector<std::vector<std::size_t>> device_children_;
};

// Host records `keep` selects, per thread when thread_sep (threads in id order), else merged.
template <typename Keep>
std::vector<std::pair<std::string, std::vector<std::size_t>>> by_thread(const Trace& t, const TraceScope& s,
                                                                        bool thread_sep, EventKind kind, Keep keep) {
  std::map<uint64_t, std::vector<std::size_t>> threads;
  // `keep` takes records of one kind: none of them, no walk (the answer is the same).
  for (std::size_t i = 0; s.host_count(kind) != 0 && i < t.host.size(); ++i) {
    if (s.host_in(i) && keep(i)) threads[thread_sep ? t.host[i].tid : 0].push_back(i);
  }
  std::vector<std::pair<std::string, std::vector<std::size_t>>> out;
  for (auto& [tid, calls] : threads) {
    out.emplace_back(thread_sep ? std::to_string(tid) : "All threads merged", std::move(calls));
  }
  if (out.empty()) out.emplace_back(thread_sep ? "" : "All threads merged", std::vector<std::size_t>{});
  if (thread_sep && out.front().first.empty()) out.clear();
  return out;
}

// A row of host records: CPU = their durations, GPU = the device time each issued (Memory
// Manipulation, UserDefined; finish_span_rows gives the ratios).
SummaryRow host_row(const Trace& t, const TraceScope& s, std::string name, SummaryRowKind kind,
                    const std::vector<std::size_t>& members) {
  SummaryRow row{std::move(name), kind, 0, members.size(), Stat{}, Stat{}};
  for (std::size_t i : members) {
    row.cpu->add(span_ns(t.host[i].start_ns, t.host[i].end_ns));
    row.gpu->add(s.costs.device(i));
  }
  return row;
}

}  // namespace

// "HtoD" from "Memcpy HtoD (Pageable -> Device)".
std::string copy_direction(std::string_view device_name) {
  if (!device_name.starts_with("Memcpy ")) return "";
  device_name.remove_prefix(7);
  return std::string(device_name.substr(0, device_name.find(' ')));
}

void compute_operators(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  const OperatorTree tree(t, s, o);
  for (auto& [thread, calls] : by_thread(t, s, o.thread_sep, EventKind::Operator, [&](std::size_t i) {
         return t.host[i].kind == EventKind::Operator && s.outer_operator_of(i) < 0;
       })) {
    ThreadRows& section = out.operators.emplace_back();
    section.thread = thread;
    section.rows = tree.rows(calls, o.row_limit, section.rows_total);
  }
}

void finish_operator_rows(std::vector<SummaryRow>& rows, const SummaryOptions& o, std::size_t& total) {
  rank_top_level(rows, [](auto& r) -> auto& { return r; }, o.sort_by, o.row_limit, &total);
}

// Each kernel record is added to its row as it comes (rows in first-seen order): no list of
// every row's records is kept.
void compute_kernels(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  std::vector<SummaryRow> rows;
  NameSlots slots;
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    if (d.kind != DeviceKind::Kernel || !s.device_in(i)) continue;
    bool fresh = false;
    const std::size_t slot = slots.of(d.name, fresh);
    if (fresh) rows.push_back({d.name, SummaryRowKind::Kernel, 0, 0, std::nullopt, Stat{}});
    SummaryRow& row = rows[slot];
    ++row.calls;
    row.gpu->add(span_ns(d.start_ns, d.end_ns));
  }
  finish_kernels(std::move(rows), o, out);
}

void finish_kernels(std::vector<SummaryRow> rows, const SummaryOptions& o, Summaries& out) {
  uint64_t total = 0;
  for (const SummaryRow& row : rows) total += row.gpu->total_ns;
  for (SummaryRow& row : rows) row.gpu->ratio = percent(row.gpu->total_ns, total);
  out.kernels = std::move(rows);
  sort_rows(out.kernels, o.sort_by.starts_with("GPU") ? o.sort_by : "GPUTotal");
  out.kernels_total = out.kernels.size();
  if (o.row_limit > 0 && out.kernels.size() > static_cast<std::size_t>(o.row_limit)) out.kernels.resize(o.row_limit);
}

void compute_memory_manipulation(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  // Only calls with a copy record have a direction: keyed by the call, not a string per host record.
  std::unordered_map<std::size_t, std::string> direction;
  for (const DeviceRecord& d : t.device) {
    if (d.kind == DeviceKind::Memcpy && valid_index(d.host, t.host.size())) {
      std::string& text = direction[std::size_t(d.host)];
      if (text.empty()) text = copy_direction(d.name);
    }
  }
  Groups<std::size_t> calls, orphans;
  const bool any_calls = s.host_count(EventKind::Memcpy) + s.host_count(EventKind::Memset) != 0;
  for (std::size_t i = 0; any_calls && i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    if (!s.host_in(i) || (h.kind != EventKind::Memcpy && h.kind != EventKind::Memset)) continue;
    const auto found = direction.find(i);
    const bool has_direction = found != direction.end() && !found->second.empty();
    (has_direction ? calls.of(std::string_view(h.name + " (" + found->second + ")")) : calls.of(h.name)).push_back(i);
  }
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    const bool copy_or_set = d.kind == DeviceKind::Memcpy || d.kind == DeviceKind::Memset;
    if (s.device_in(i) && copy_or_set && !valid_index(d.host, t.host.size())) orphans.of(d.name).push_back(i);
  }
  for (auto& [name, members] : calls.take()) {
    out.memory_manipulation.push_back(host_row(t, s, std::move(name), SummaryRowKind::Call, members));
  }
  for (auto& [name, records] : orphans.take()) {
    SummaryRow row{std::move(name), device_row_kind(t.device[records.front()].kind), 0, records.size(), std::nullopt, Stat{}};
    for (std::size_t i : records) row.gpu->add(span_ns(t.device[i].start_ns, t.device[i].end_ns));
    out.memory_manipulation.push_back(std::move(row));
  }
  finish_span_rows(out.memory_manipulation, out, o, out.memory_manipulation_total);
}

void finish_span_rows(std::vector<SummaryRow>& rows, const Summaries& spans, const SummaryOptions& o, std::size_t& total) {
  for (SummaryRow& row : rows) {
    if (row.cpu) row.cpu->ratio = percent(row.cpu->total_ns, spans.span_cpu_ns);
    if (row.gpu) row.gpu->ratio = percent(row.gpu->total_ns, spans.span_gpu_ns);
  }
  sort_rows(rows, o.sort_by);
  total = rows.size();
  if (o.row_limit > 0 && rows.size() > static_cast<std::size_t>(o.row_limit)) rows.resize(o.row_limit);
}

void compute_user_defined(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  for (auto& [thread, calls] : by_thread(t, s, o.thread_sep, EventKind::Range, [&](std::size_t i) {
         return t.host[i].kind == EventKind::Range && !is_phase_range(t.host[i].name);
       })) {
    Groups<std::size_t> groups;
    for (std::size_t i : calls) groups.of(t.host[i].name).push_back(i);
    ThreadRows section{thread, {}};
    for (auto& [name, members] : groups.take()) {
      section.rows.push_back(host_row(t, s, std::move(name), SummaryRowKind::Range, members));
    }
    finish_span_rows(section.rows, out, o, section.rows_total);
    out.user_defined.push_back(std::move(section));
  }
}

void compute_op_types(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  // Per operator: the device time of the work under it. Without operators there is none: no
  // array of the window's size, no walk over the host records.
  const bool any_operator = s.host_count(EventKind::Operator) != 0;
  std::vector<uint64_t> self_device(any_operator ? t.host.size() : 0, 0);
  bool device_in_scope = false;
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    if (!s.device_in(i) || !is_device_work(t.device[i].kind)) continue;
    device_in_scope = true;
    if (any_operator && valid_index(s.device_operator_of(i), t.host.size())) {
      self_device[s.device_operator_of(i)] += span_ns(t.device[i].start_ns, t.device[i].end_ns);
    }
  }
  std::vector<OpTypeRow> rows;
  std::unordered_map<std::string_view, std::size_t> index;  // views into the trace's names
  for (std::size_t i = 0; any_operator && i < t.host.size(); ++i) {
    if (!s.host_in(i) || t.host[i].kind != EventKind::Operator) continue;
    const std::string_view type = operator_family(t.host[i].name);
    auto [it, fresh] = index.try_emplace(type, rows.size());
    if (fresh) rows.push_back({std::string(type), 0, 0, 0, 0});
    OpTypeRow& row = rows[it->second];
    ++row.calls;
    row.device_ns += self_device[i];
    row.cpu_ns += s.costs.self_cpu_ns[i];
  }
  finish_op_types(std::move(rows), device_in_scope, o, out);
}

void finish_op_types(std::vector<OpTypeRow> rows, bool device_in_scope, const SummaryOptions& o, Summaries& out) {
  out.op_type_by_device = device_in_scope;
  auto metric = [&](const OpTypeRow& r) { return device_in_scope ? r.device_ns : r.cpu_ns; };
  uint64_t total = 0;
  for (const OpTypeRow& r : rows) total += metric(r);
  std::stable_sort(rows.begin(), rows.end(), [&](const OpTypeRow& a, const OpTypeRow& b) { return metric(a) > metric(b); });
  const std::size_t shown = o.op_type_rows > 0 ? static_cast<std::size_t>(o.op_type_rows) : rows.size();
  if (rows.size() > shown) {
    OpTypeRow others{"(others)", 0, 0, 0, 0};
    for (std::size_t i = shown; i < rows.size(); ++i) {
      others.calls += rows[i].calls, others.device_ns += rows[i].device_ns, others.cpu_ns += rows[i].cpu_ns;
    }
    rows.resize(shown);
    rows.push_back(others);
  }
  for (OpTypeRow& r : rows) r.ratio = percent(metric(r), total);
  out.op_types = std::move(rows);
}

}  // namespace profagent::exporters
