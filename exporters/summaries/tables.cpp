#include "exporters/summaries/tables.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <deque>
#include <functional>
#include <unordered_map>

#include "exporters/call_names.h"
#include "exporters/host_nesting.h"
#include "exporters/stack_text.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

RowKind host_row_kind(const HostRecord& h) {
  if (h.flags & kFlagDriverApi) return RowKind::Driver;
  switch (h.kind) {
    case EventKind::Operator: return RowKind::Operator;
    case EventKind::Range: return RowKind::Range;
    case EventKind::Step: return RowKind::Step;
    default: return RowKind::Runtime;
  }
}

RowKind device_row_kind(DeviceKind k) {
  if (k == DeviceKind::Memcpy) return RowKind::Memcpy;
  if (k == DeviceKind::Memset) return RowKind::Memset;
  return RowKind::Kernel;
}

// torch's str() of a list of int lists: "[[5, 64, 56, 56], [], [3]]".
const std::vector<std::vector<int64_t>>& input_dims(const Trace& t, const HostRecord& h) {
  static const std::vector<std::vector<int64_t>> none;
  const InputShapes* shapes = shapes_of(t, h);
  return shapes ? shapes->dims : none;
}

std::string shapes_text(const std::vector<std::vector<int64_t>>& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    s += i ? ", [" : "[";
    for (std::size_t j = 0; j < dims[i].size(); ++j) {
      if (j) s += ", ";
      s += std::to_string(dims[i][j]);
    }
    s += "]";
  }
  return s + "]";
}

// A row's identity: its name and (when grouping by shape) its input shapes. Looked up by
// views, so the per-record path allocates nothing; the owned key is made once per row.
using RowKey = std::pair<std::string_view, std::string_view>;

struct RowKeyHash {
  std::size_t operator()(const RowKey& key) const {
    const std::size_t name = std::hash<std::string_view>()(key.first);
    return key.second.empty() ? name : name ^ (std::hash<std::string_view>()(key.second) * 31);
  }
};

// The second part of a row's key: its input shapes, or its source location (never both).
class RowBuilder {
 public:
  RowBuilder(bool by_shape, bool by_stack) : by_shape_(by_shape), by_stack_(by_stack) {}
  // References into rows_ stay valid: rows_ is a deque.
  // Runs of records with one name are common (a loop of the same call): the last row is
  // compared before anything is hashed.
  TableRow& row(std::string_view name, std::string_view shapes, RowKind kind) {
    if (last_ && last_->name == name && (by_stack_ ? last_->source_location : last_->input_shapes) == shapes) {
      return *last_;
    }
    const auto found = index_.find(RowKey(name, shapes));
    if (found != index_.end()) return *(last_ = found->second);
    TableRow& r = rows_.emplace_back();
    r.name = name;
    (by_stack_ ? r.source_location : r.input_shapes) = shapes;
    r.kind = kind;
    index_.emplace(RowKey(r.name, by_stack_ ? r.source_location : r.input_shapes), &r);
    return *(last_ = &r);
  }
  // Most records name their row by an interned name and are not split by shapes or stacks: the
  // row is found by the name's dense id (interned_name.h), without hashing its text per record.
  TableRow& row(InternedName name, std::string_view shapes, RowKind kind) {
    if (!shapes.empty()) return row(std::string_view(name), shapes, kind);
    const uint32_t id = name.id();
    if (id < by_id_.size() && by_id_[id]) return *(last_ = by_id_[id]);
    TableRow& r = row(std::string_view(name), shapes, kind);
    if (id >= by_id_.size()) by_id_.resize(id + 1, nullptr);
    by_id_[id] = &r;
    return r;
  }
  bool by_shape() const { return by_shape_; }
  bool by_stack() const { return by_stack_; }
  std::vector<TableRow> take() {
    index_.clear();
    by_id_.clear();
    last_ = nullptr;
    return {std::make_move_iterator(rows_.begin()), std::make_move_iterator(rows_.end())};
  }

 private:
  bool by_shape_;
  bool by_stack_;
  std::deque<TableRow> rows_;
  std::unordered_map<RowKey, TableRow*, RowKeyHash> index_;  // views into rows_
  std::vector<TableRow*> by_id_;  // rows without shapes by their name's id; null: not looked up yet
  TableRow* last_ = nullptr;  // the row the previous call returned
};

// The Source Location of a record's row (group_by_stack_n), once per distinct stack.
class SourceLocations {
 public:
  SourceLocations(const Trace& t, uint32_t n) : t_(t), n_(n), text_(t.stacks.stacks.size() + 1) {}
  const std::string& of(const HostRecord& h) {
    if (n_ == 0 || h.stack == 0 || h.stack >= text_.size()) return text_[0];
    std::string& text = text_[h.stack];
    if (text.empty()) text = innermost_lines(t_, t_.stacks.stacks[h.stack - 1], n_);
    return text;
  }

 private:
  const Trace& t_;
  uint32_t n_;
  std::vector<std::string> text_;  // by stack id; [0] stays ""
};


// Per host record: the bytes its memory columns add (memory_records() below).
struct HostMemory {
  std::vector<int64_t> cpu, self_cpu, cuda, self_cuda;
  explicit HostMemory(std::size_t n) : cpu(n, 0), self_cpu(n, 0), cuda(n, 0), self_cuda(n, 0) {}
};

// A record's memory counts in its call's columns and the totals of every record around it, and
// in the self columns of the innermost scope around its call.
void book_memory_record(const Trace& t, const MemoryRecord& m, const HostCosts& costs, HostMemory& mem) {
  const bool host = is_host_memory(m.kind);
  std::vector<int64_t>& total = host ? mem.cpu : mem.cuda;
  std::vector<int64_t>& self = host ? mem.self_cpu : mem.self_cuda;
  total[m.host] += m.bytes;
  self[m.host] += m.bytes;  // the call made it: its own memory
  const int64_t parent = t.host[m.host].parent;
  if (!valid_index(parent, t.host.size())) return;
  if (const int64_t scope = costs.scope_of(std::size_t(parent)); scope >= 0) self[std::size_t(scope)] += m.bytes;
}

HostMemory host_memory(const Trace& t, const HostCosts& costs) {
  HostMemory mem(t.memory.enabled ? t.host.size() : 0);
  if (!t.memory.enabled) return mem;
  for (const MemoryRecord& m : t.memory.records) {
    if (!m.failed && valid_index(m.host, t.host.size())) book_memory_record(t, m, costs, mem);
  }
  add_up_to_parents(t, costs.order, mem.cpu);
  add_up_to_parents(t, costs.order, mem.cuda);
  return mem;
}

void add_host_memory(const HostMemory& mem, std::size_t i, TableRow& r) {
  if (mem.cpu.empty()) return;
  r.cpu_memory += mem.cpu[i];
  r.self_cpu_memory += mem.self_cpu[i];
  r.cuda_memory += mem.cuda[i];
  r.self_cuda_memory += mem.self_cuda[i];
}

// A row per CUDA graph: a graph launch is named after the graph its device records say it
// replayed (CUPTI's graph id), so the row counts that graph's launches and its CUDA time avg is
// the device time of one replay. Launches without a record in the window keep the plain name.
class GraphLaunchNames {
 public:
  explicit GraphLaunchNames(const Trace& t) {
    for (const DeviceRecord& d : t.device) {
      if (d.graph_id == 0 || !valid_index(d.host, t.host.size())) continue;
      if (graph_of_.empty()) graph_of_.assign(t.host.size(), 0);
      graph_of_[std::size_t(d.host)] = d.graph_id;
    }
  }
  std::string_view of(std::size_t i, std::string_view api) {
    const uint32_t graph = graph_of_.empty() ? 0 : graph_of_[i];
    if (graph == 0) return api;
    auto [it, inserted] = names_.try_emplace(graph);
    if (inserted) it->second = std::string(api) + " (graph " + std::to_string(graph) + ")";
    return it->second;
  }

 private:
  std::vector<uint32_t> graph_of_;  // by host record; empty when no record came from a graph
  std::unordered_map<uint32_t, std::string> names_;
};

// What finds a host record's row: the API its name implements, its steps' and graph launches'
// names, its input shapes or source location when the table is grouped by them.
class HostRowFinder {
 public:
  HostRowFinder(const Trace& t, RowBuilder& rows, SourceLocations& locations)
      : t_(t), rows_(rows), locations_(locations), graphs_(t),
        by_find_(!rows.by_shape() && !rows.by_stack() ? bit(EventKind::Step) | bit(EventKind::GraphLaunch) : ~0u) {}

  // Ungrouped, the row of a record other than a step or a graph launch follows from its name
  // alone: found by the name's id (interned_name.h) after the first record of that name.
  // Runs of records of one name are common (a loop of the same call): the previous record's name
  // is compared first.
  TableRow& of(std::size_t i, const HostRecord& h) {
    if (by_find_ & bit(h.kind)) return find(i, h);
    const uint32_t id = h.name.id();
    if (id == last_id_ && last_) return *last_;
    last_id_ = id;
    if (id < by_name_.size() && by_name_[id]) return *(last_ = by_name_[id]);
    TableRow& r = find(i, h);
    if (id >= by_name_.size()) by_name_.resize(std::size_t(id) + 1, nullptr);
    return *(last_ = by_name_[id] = &r);  // rows do not move (RowBuilder)
  }

 private:
  TableRow& find(std::size_t i, const HostRecord& h) {
    const RowKind kind = host_row_kind(h);
    const InternedName api = calls_.of(h.name).api;
    const std::string shapes = rows_.by_shape() ? shapes_text(input_dims(t_, h))
                               : rows_.by_stack() ? locations_.of(h) : std::string();
    return kind == RowKind::Step                ? rows_.row(std::string_view("ProfilerStep*"), shapes, kind)
           : h.kind == EventKind::GraphLaunch ? rows_.row(graphs_.of(i, api), shapes, kind)
                                              : rows_.row(api, shapes, kind);
  }

  const Trace& t_;
  RowBuilder& rows_;
  SourceLocations& locations_;
  GraphLaunchNames graphs_;
  CallNames calls_;
  static constexpr uint32_t bit(EventKind kind) { return 1u << (static_cast<unsigned>(kind) & 31u); }
  // The kinds of record whose row find() makes each time (bits by EventKind): steps and graph
  // launches, and every kind when grouped by shapes or stacks.
  const uint32_t by_find_;
  std::vector<TableRow*> by_name_;  // plain records' rows by their name's id; null: not found yet
  TableRow* last_ = nullptr;        // the row of the previous plain record, whose name id is last_id_
  uint32_t last_id_ = 0;
};

void add_host_rows(const Trace& t, const HostCosts& costs, RowBuilder& rows, SourceLocations& locations) {
  const HostMemory mem = host_memory(t, costs);
  HostRowFinder finder(t, rows, locations);
  // The costs' columns, each checked once (null: the trace has no device work).
  const uint64_t* const self_cpu = costs.self_cpu_ns.data();
  const uint64_t* const device = costs.device_ns.empty() ? nullptr : costs.device_ns.data();
  const uint64_t* const self_device = costs.self_device_ns.empty() ? nullptr : costs.self_device_ns.data();
  const bool memory = !mem.cpu.empty();
  const HostRecord* const host = t.host.data();  // a local: a new row's allocation would reload it per record
  for (std::size_t i = 0, n = t.host.size(); i < n; ++i) {
    const HostRecord& h = host[i];
    if (h.kind == EventKind::Range && (h.flags & kFlagRangeMark)) continue;  // an instant: no time to add up
    TableRow& r = finder.of(i, h);
    if (r.count == 0) r.first_tid = h.tid, r.first_start_ns = h.start_ns, r.first_end_ns = h.end_ns, r.first_seen_on_host = true;
    r.count += 1;
    r.cpu_total_ns += span_ns(h.start_ns, h.end_ns);
    r.self_cpu_ns += self_cpu[i];
    if (device) r.cuda_total_ns += device[i];
    if (self_device) r.self_cuda_ns += self_device[i];
    if (memory) add_host_memory(mem, i, r);
  }
}

void add_device_rows(const Trace& t, RowBuilder& rows, SourceLocations& locations) {
  // Only driver rows read it: without driver records, no map of every device record.
  const bool any_driver = std::any_of(t.device.begin(), t.device.end(),
                                      [](const DeviceRecord& d) { return d.kind == DeviceKind::DriverApi; });
  std::unordered_map<uint32_t, uint64_t> device_time_by_correlation;
  for (const DeviceRecord& d : t.device) {
    if (any_driver && is_device_work(d.kind) && d.correlation != 0) {
      device_time_by_correlation[d.correlation] += span_ns(d.start_ns, d.end_ns);
    }
  }
  const std::string no_shapes = rows.by_shape() ? "[]" : "";
  CallNames calls;
  for (const DeviceRecord& d : t.device) {
    const uint64_t dur = span_ns(d.start_ns, d.end_ns);
    if (d.kind == DeviceKind::DriverApi) {
      TableRow& r = rows.row(calls.of(d.name).api, no_shapes, RowKind::Driver);
      if (r.count == 0) r.first_start_ns = d.start_ns, r.first_end_ns = d.end_ns;
      r.count += 1;
      r.cpu_total_ns += dur;
      r.self_cpu_ns += dur;
      const auto it = device_time_by_correlation.find(d.correlation);
      if (d.correlation != 0 && it != device_time_by_correlation.end()) r.cuda_total_ns += it->second;
    } else if (is_device_work(d.kind)) {
      const bool launched = rows.by_stack() && valid_index(d.host, t.host.size());
      TableRow& r = rows.row(d.name, launched ? locations.of(t.host[d.host]) : no_shapes, device_row_kind(d.kind));
      if (r.count == 0) r.first_start_ns = d.start_ns, r.first_end_ns = d.end_ns;
      r.count += 1;
      r.self_cuda_ns += dur;
      r.cuda_total_ns += dur;
    }
  }
}

using SortKey = std::function<double(const TableRow&)>;

double avg(uint64_t total, uint64_t count) { return count ? double(total) / double(count) : 0.0; }

bool sort_key(std::string_view key, SortKey* out) {
  auto is = [&](std::string_view a, std::string_view b) { return key == a || key == b; };
  if (is("cpu_time_total", "cpu_time_total")) *out = [](auto& r) { return double(r.cpu_total_ns); };
  else if (is("self_cpu_time_total", "self_cpu_time_total")) *out = [](auto& r) { return double(r.self_cpu_ns); };
  else if (is("cuda_time_total", "device_time_total")) *out = [](auto& r) { return double(r.cuda_total_ns); };
  else if (is("self_cuda_time_total", "self_device_time_total")) *out = [](auto& r) { return double(r.self_cuda_ns); };
  else if (is("count", "count")) *out = [](auto& r) { return double(r.count); };
  else if (is("cpu_memory_usage", "cpu_memory_usage")) *out = [](auto& r) { return double(r.cpu_memory); };
  else if (is("self_cpu_memory_usage", "self_cpu_memory_usage")) *out = [](auto& r) { return double(r.self_cpu_memory); };
  else if (is("cuda_memory_usage", "device_memory_usage")) *out = [](auto& r) { return double(r.cuda_memory); };
  else if (is("self_cuda_memory_usage", "self_device_memory_usage")) *out = [](auto& r) { return double(r.self_cuda_memory); };
  else if (is("cpu_time", "cpu_time")) *out = [](auto& r) { return avg(r.cpu_total_ns, r.count); };
  else if (is("cuda_time", "device_time")) *out = [](auto& r) { return avg(r.cuda_total_ns, r.count); };
  else if (is("self_cpu_time", "self_cpu_time")) *out = [](auto& r) { return avg(r.self_cpu_ns, r.count); };
  else if (is("self_cuda_time", "self_device_time")) *out = [](auto& r) { return avg(r.self_cuda_ns, r.count); };
  else return false;
  return true;
}

}  // namespace

std::string_view row_kind_name(RowKind kind) {
  switch (kind) {
    case RowKind::Runtime: return "runtime";
    case RowKind::Operator: return "operator";
    case RowKind::Range: return "range";
    case RowKind::Step: return "step";
    case RowKind::Driver: return "driver";
    case RowKind::Kernel: return "kernel";
    case RowKind::Memcpy: return "memcpy";
    case RowKind::Memset: return "memset";
  }
  return "runtime";
}

bool is_valid_sort_key(std::string_view key) {
  SortKey unused;
  return sort_key(key, &unused);
}

bool parse_group_by(std::string_view text, TableOptions& options) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  std::string key(text);
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  constexpr std::string_view kStack = "stack_n:";
  if (key.rfind(kStack, 0) == 0) {
    const std::string_view digits = std::string_view(key).substr(kStack.size());
    uint32_t n = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) return false;
    if (n < 1 || n > kMaxStackFrames) return false;
    options.group_by_stack_n = n, options.group_by_input_shape = false;
    return true;
  }
  if (key != "input_shape" && key != "none" && !key.empty()) return false;
  options.group_by_input_shape = key == "input_shape", options.group_by_stack_n = 0;
  return true;
}

std::string group_by_text(const TableOptions& options) {
  if (options.group_by_stack_n != 0) return "stack_n:" + std::to_string(options.group_by_stack_n);
  return options.group_by_input_shape ? "input_shape" : "none";
}

Table build_table(const Trace& trace, const TableOptions& options) { return build_table(trace, host_costs(trace), options); }

Table build_table(const Trace& trace, const HostCosts& costs, const TableOptions& options) {
  const bool by_stack = options.group_by_stack_n > 0 && !options.group_by_input_shape;
  RowBuilder rows(options.group_by_input_shape, by_stack);
  SourceLocations locations(trace, by_stack ? options.group_by_stack_n : 0);
  add_host_rows(trace, costs, rows, locations);
  add_device_rows(trace, rows, locations);
  return finish_table(rows.take(), trace.memory.enabled, options);
}

Table finish_table(std::vector<TableRow> rows, bool memory, const TableOptions& options) {
  Table table;
  table.rows = std::move(rows);
  table.memory = memory;
  for (const TableRow& r : table.rows) {
    table.self_cpu_total_ns += r.self_cpu_ns;
    if (r.kind == RowKind::Kernel || r.kind == RowKind::Memcpy || r.kind == RowKind::Memset) {
      table.self_cuda_total_ns += r.self_cuda_ns;
    }
  }
  SortKey key;
  table.sort_by = sort_key(options.sort_by, &key) ? options.sort_by : std::string(kDefaultSortKey);
  if (table.sort_by != options.sort_by) sort_key(table.sort_by, &key);
  std::stable_sort(table.rows.begin(), table.rows.end(),
                   [&](const TableRow& a, const TableRow& b) { return key(a) > key(b); });
  return table;
}

}  // namespace profagent::exporters
