// The summaries made of grouped rows: Operator (with its inner operators and kernels), Kernel,
// Memory Manipulation, UserDefined and the operator types. Definitions: docs/report.md.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "exporters/report/step_summaries.h"

namespace profagent::exporters {
namespace {

uint64_t span(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }
double percent(uint64_t part, uint64_t base) { return base ? 100.0 * double(part) / double(base) : 0.0; }
bool valid(int64_t i, std::size_t n) { return i >= 0 && static_cast<std::size_t>(i) < n; }

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

// Groups of one name in first-seen order.
template <typename T>
class Groups {
 public:
  std::vector<T>& of(const std::string& name) {
    auto [it, fresh] = index_.try_emplace(name, order_.size());
    if (fresh) order_.push_back({name, {}});
    return order_[it->second].second;
  }
  std::vector<std::pair<std::string, std::vector<T>>>& all() { return order_; }

 private:
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::pair<std::string, std::vector<T>>> order_;
};

class OperatorTree {
 public:
  OperatorTree(const Trace& t, const TraceScope& s, const SummaryOptions& o) : t_(t), s_(s), o_(o) {
    if (!o.op_detail) return;
    op_children_.resize(t.host.size());
    device_children_.resize(t.host.size());
    for (std::size_t i = 0; i < t.host.size(); ++i) {
      if (t.host[i].kind == EventKind::Operator && valid(s.outer_operator[i], t.host.size())) {
        op_children_[s.outer_operator[i]].push_back(i);
      }
    }
    for (std::size_t i = 0; i < t.device.size(); ++i) {
      if (is_device_work(t.device[i].kind) && valid(s.device_operator[i], t.host.size())) {
        device_children_[s.device_operator[i]].push_back(i);
      }
    }
  }

  // Rows of the operators `calls` (any names), sorted, with their detail; ratios of `cpu_base`
  // and `gpu_base` (0: of the rows' own sums).
  std::vector<SummaryRow> rows(const std::vector<std::size_t>& calls, int depth, uint64_t cpu_base,
                               uint64_t gpu_base, int limit) const {
    Groups<std::size_t> groups;
    for (std::size_t i : calls) groups.of(t_.host[i].name).push_back(i);
    std::vector<std::pair<SummaryRow, std::vector<std::size_t>>> made;
    uint64_t cpu_sum = 0, gpu_sum = 0;
    for (auto& [name, members] : groups.all()) {
      SummaryRow row{name, SummaryRowKind::Operator, depth, members.size(), Stat{}, Stat{}};
      for (std::size_t i : members) {
        row.cpu->add(span(t_.host[i].start_ns, t_.host[i].end_ns));
        row.gpu->add(s_.issued_ns[i]);
      }
      cpu_sum += row.cpu->total_ns, gpu_sum += row.gpu->total_ns;
      made.emplace_back(std::move(row), std::move(members));
    }
    if (depth == 0) cpu_base = cpu_sum, gpu_base = gpu_sum;
    for (auto& [row, members] : made) {
      row.cpu->ratio = percent(row.cpu->total_ns, cpu_base);
      row.gpu->ratio = percent(row.gpu->total_ns, gpu_base);
    }
    std::stable_sort(made.begin(), made.end(), [this](const auto& a, const auto& b) {
      return sort_value(a.first, o_.sort_by) > sort_value(b.first, o_.sort_by);
    });
    if (limit > 0 && made.size() > static_cast<std::size_t>(limit)) made.resize(static_cast<std::size_t>(limit));
    std::vector<SummaryRow> out;
    for (auto& [row, members] : made) {
      out.push_back(row);
      if (o_.op_detail) detail(members, row, depth + 1, out);
    }
    return out;
  }

 private:
  void detail(const std::vector<std::size_t>& members, const SummaryRow& parent, int depth,
              std::vector<SummaryRow>& out) const {
    std::vector<std::size_t> inner;
    Groups<std::size_t> devices;
    for (std::size_t i : members) {
      inner.insert(inner.end(), op_children_[i].begin(), op_children_[i].end());
      for (std::size_t d : device_children_[i]) devices.of(t_.device[d].name).push_back(d);
    }
    for (SummaryRow& row : rows(inner, depth, parent.cpu->total_ns, parent.gpu->total_ns, 0)) out.push_back(std::move(row));
    std::vector<SummaryRow> device_rows;
    for (auto& [name, records] : devices.all()) {
      SummaryRow row{name, device_row_kind(t_.device[records.front()].kind), depth, records.size(), std::nullopt, Stat{}};
      for (std::size_t d : records) row.gpu->add(span(t_.device[d].start_ns, t_.device[d].end_ns));
      row.gpu->ratio = percent(row.gpu->total_ns, parent.gpu->total_ns);
      device_rows.push_back(std::move(row));
    }
    sort_rows(device_rows, o_.sort_by);
    for (SummaryRow& row : device_rows) out.push_back(std::move(row));
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
                                                                        bool thread_sep, Keep keep) {
  std::map<uint64_t, std::vector<std::size_t>> threads;
  for (std::size_t i = 0; i < t.host.size(); ++i) {
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

// "HtoD" from "Memcpy HtoD (Pageable -> Device)".
std::string copy_direction(std::string_view device_name) {
  if (!device_name.starts_with("Memcpy ")) return "";
  device_name.remove_prefix(7);
  return std::string(device_name.substr(0, device_name.find(' ')));
}

// A row of host records: CPU = their durations, GPU = the device time each issued; ratios of
// the step totals (Memory Manipulation, UserDefined).
SummaryRow host_row(const Trace& t, const TraceScope& s, const Summaries& out, const std::string& name,
                    SummaryRowKind kind, const std::vector<std::size_t>& members) {
  SummaryRow row{name, kind, 0, members.size(), Stat{}, Stat{}};
  for (std::size_t i : members) {
    row.cpu->add(span(t.host[i].start_ns, t.host[i].end_ns));
    row.gpu->add(s.issued_ns[i]);
  }
  row.cpu->ratio = percent(row.cpu->total_ns, out.span_cpu_ns);
  row.gpu->ratio = percent(row.gpu->total_ns, out.span_gpu_ns);
  return row;
}

}  // namespace

void compute_operators(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  const OperatorTree tree(t, s, o);
  for (auto& [thread, calls] : by_thread(t, s, o.thread_sep, [&](std::size_t i) {
         return t.host[i].kind == EventKind::Operator && s.outer_operator[i] < 0;
       })) {
    out.operators.push_back({thread, tree.rows(calls, 0, 0, 0, o.row_limit)});
  }
}

void compute_kernels(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  Groups<std::size_t> groups;
  uint64_t total = 0;
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    if (!s.device_in(i) || t.device[i].kind != DeviceKind::Kernel) continue;
    groups.of(t.device[i].name).push_back(i);
    total += span(t.device[i].start_ns, t.device[i].end_ns);
  }
  for (auto& [name, records] : groups.all()) {
    SummaryRow row{name, SummaryRowKind::Kernel, 0, records.size(), std::nullopt, Stat{}};
    for (std::size_t i : records) row.gpu->add(span(t.device[i].start_ns, t.device[i].end_ns));
    row.gpu->ratio = percent(row.gpu->total_ns, total);
    out.kernels.push_back(std::move(row));
  }
  sort_rows(out.kernels, o.sort_by.starts_with("GPU") ? o.sort_by : "GPUTotal");
  if (o.row_limit > 0 && out.kernels.size() > static_cast<std::size_t>(o.row_limit)) out.kernels.resize(o.row_limit);
}

void compute_memory_manipulation(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  std::vector<std::string> direction(t.host.size());
  for (const DeviceRecord& d : t.device) {
    if (d.kind == DeviceKind::Memcpy && valid(d.host, t.host.size()) && direction[d.host].empty()) {
      direction[d.host] = copy_direction(d.name);
    }
  }
  Groups<std::size_t> calls, orphans;
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    const HostRecord& h = t.host[i];
    if (!s.host_in(i) || (h.kind != EventKind::Memcpy && h.kind != EventKind::Memset)) continue;
    calls.of(direction[i].empty() ? h.name : h.name + " (" + direction[i] + ")").push_back(i);
  }
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    const DeviceRecord& d = t.device[i];
    const bool copy_or_set = d.kind == DeviceKind::Memcpy || d.kind == DeviceKind::Memset;
    if (s.device_in(i) && copy_or_set && !valid(d.host, t.host.size())) orphans.of(d.name).push_back(i);
  }
  for (auto& [name, members] : calls.all()) {
    out.memory_manipulation.push_back(host_row(t, s, out, name, SummaryRowKind::Call, members));
  }
  for (auto& [name, records] : orphans.all()) {
    SummaryRow row{name, device_row_kind(t.device[records.front()].kind), 0, records.size(), std::nullopt, Stat{}};
    for (std::size_t i : records) row.gpu->add(span(t.device[i].start_ns, t.device[i].end_ns));
    row.gpu->ratio = percent(row.gpu->total_ns, out.span_gpu_ns);
    out.memory_manipulation.push_back(std::move(row));
  }
  sort_rows(out.memory_manipulation, o.sort_by);
  if (o.row_limit > 0 && out.memory_manipulation.size() > static_cast<std::size_t>(o.row_limit)) {
    out.memory_manipulation.resize(o.row_limit);
  }
}

void compute_user_defined(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  for (auto& [thread, calls] : by_thread(t, s, o.thread_sep, [&](std::size_t i) {
         return t.host[i].kind == EventKind::Range && !is_phase_range(t.host[i].name);
       })) {
    Groups<std::size_t> groups;
    for (std::size_t i : calls) groups.of(t.host[i].name).push_back(i);
    ThreadRows section{thread, {}};
    for (auto& [name, members] : groups.all()) {
      section.rows.push_back(host_row(t, s, out, name, SummaryRowKind::Range, members));
    }
    sort_rows(section.rows, o.sort_by);
    if (o.row_limit > 0 && section.rows.size() > static_cast<std::size_t>(o.row_limit)) section.rows.resize(o.row_limit);
    out.user_defined.push_back(std::move(section));
  }
}

void compute_op_types(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out) {
  std::vector<uint64_t> self_device(t.host.size(), 0);
  bool device_in_scope = false;
  for (std::size_t i = 0; i < t.device.size(); ++i) {
    if (!s.device_in(i) || !is_device_work(t.device[i].kind)) continue;
    device_in_scope = true;
    if (valid(s.device_operator[i], t.host.size())) {
      self_device[s.device_operator[i]] += span(t.device[i].start_ns, t.device[i].end_ns);
    }
  }
  out.op_type_by_device = device_in_scope;
  std::vector<OpTypeRow> rows;
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < t.host.size(); ++i) {
    if (!s.host_in(i) || t.host[i].kind != EventKind::Operator) continue;
    const std::string type = operator_family(t.host[i].name);
    auto [it, fresh] = index.try_emplace(type, rows.size());
    if (fresh) rows.push_back({type, 0, 0, 0, 0});
    OpTypeRow& row = rows[it->second];
    ++row.calls;
    row.device_ns += self_device[i];
    row.cpu_ns += static_cast<uint64_t>(s.self_cpu_ns[i]);
  }
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
