#include "agent/report/trace_builder.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "exporters/memory_events.h"
#include "exporters/trace_schema.h"

namespace profagent::report {
namespace {

namespace schema = exporters::schema;
namespace cat = schema::cat;
constexpr std::string_view kStepPrefix = schema::name::kStepPrefix;

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// The kind of a runtime or driver call, from its API name (the trace does not store it).
EventKind call_kind(std::string_view api) {
  if (contains(api, "GraphLaunch")) return EventKind::GraphLaunch;
  if (contains(api, "Launch")) return EventKind::Launch;
  if (contains(api, "Memcpy")) return EventKind::Memcpy;
  if (contains(api, "Memset")) return EventKind::Memset;
  if (contains(api, "Free")) return EventKind::Free;
  if (contains(api, "Malloc") || contains(api, "MemAlloc") || contains(api, "HostAlloc") || contains(api, "HostRegister")) {
    return EventKind::Alloc;
  }
  if (contains(api, "Synchronize") || contains(api, "StreamWaitEvent")) return EventKind::Sync;
  return EventKind::Runtime;
}

// cudaMemcpyKind from a copy's device name ("Memcpy HtoD (Pageable -> Device)").
uint8_t memcpy_kind(std::string_view device_name) {
  if (contains(device_name, "HtoH")) return 0;
  if (contains(device_name, "HtoD")) return 1;
  if (contains(device_name, "DtoH")) return 2;
  if (contains(device_name, "DtoD") || contains(device_name, "PtoP")) return 3;
  return 4;  // cudaMemcpyDefault
}

uint64_t ns_of(int64_t ns) { return ns < 0 ? 0 : uint64_t(ns); }

// Sorts `records` by key(index), a key that ends in the index (a total order, file order kept
// among equals), through a permutation applied in place cycle by cycle: no second copy of the
// records (std::stable_sort would take a buffer of half of them).
template <typename T, typename Key>
void sort_records(std::vector<T>& records, Key key) {
  std::vector<uint32_t> order(records.size());
  std::iota(order.begin(), order.end(), 0u);
  const auto less = [&](uint32_t a, uint32_t b) { return key(a) < key(b); };
  if (std::is_sorted(order.begin(), order.end(), less)) return;
  std::sort(order.begin(), order.end(), less);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] == i || order[i] == UINT32_MAX) continue;
    T held = std::move(records[i]);
    std::size_t at = i;
    while (order[at] != i) {
      const std::size_t from = order[at];
      records[at] = std::move(records[from]);
      order[at] = UINT32_MAX;
      at = from;
    }
    records[at] = std::move(held);
    order[at] = UINT32_MAX;
  }
}

const char* missing_field(const RawEvent& e) {
  if (!e.has_name) return "name";
  if (!e.has_ts) return "ts";
  if (e.ph == 'X' && !e.has_dur) return "dur";
  return nullptr;
}

// What is wrong with an event's times, or nullptr. A time before the trace's base (ts < 0) has
// no place in a step or a window: Kineto itself never writes one (it clamps to 0).
const char* bad_times(const RawEvent& e) {
  if (e.ts_ns < 0) return "\"ts\" is negative";
  if (e.dur_ns < 0) return "negative \"dur\"";
  return nullptr;
}

}  // namespace

bool TraceBuilder::add(const RawEvent& e, std::string& error) {
  switch (e.ph) {
    case 'X': return complete_event(e, error);
    case 'i':
    case 'I': return instant_event(e, error);
    case 'M': return metadata_event(e), true;
    case 's':
    case 'f': return flow(e), true;
    case 0: return error = "no \"ph\"", false;
    default: return skip(e), true;
  }
}

// torch.profiler without Kineto (Debian's torch) writes no "cat": its annotations are known by
// name (steps, the data loader, the optimizer), every other event is an operator.
static std::string_view legacy_category(std::string_view name) {
  for (std::string_view annotation : {kStepPrefix, std::string_view("enumerate(DataLoader)#"),
                                     std::string_view("Optimizer.step#"), std::string_view("Optimizer.zero_grad#")}) {
    if (name.substr(0, annotation.size()) == annotation) return cat::kUserAnnotation;
  }
  return cat::kCpuOp;
}

bool TraceBuilder::complete_event(const RawEvent& e, std::string& error) {
  if (const char* field = missing_field(e)) return error = std::string("no \"") + field + "\"", false;
  if (const char* why = bad_times(e)) return error = why, false;
  const std::string_view category = e.cat.empty() ? legacy_category(e.name) : std::string_view(e.cat);
  DeviceKind device_kind = DeviceKind::Kernel;
  if (category == cat::kCpuOp) host_record(e, EventKind::Operator);
  else if (category == cat::kUserAnnotation && e.name.substr(0, kStepPrefix.size()) == kStepPrefix) {
    uint64_t number = 0;
    const std::string_view digits = e.name.substr(kStepPrefix.size());
    for (char c : digits) number = c >= '0' && c <= '9' ? number * 10 + uint64_t(c - '0') : number;
    step(e, e.args.has_step ? e.args.step : number);
  } else if (category == cat::kUserAnnotation) host_record(e, EventKind::Range);
  else if (category == cat::kCudaRuntime || category == cat::kCudaDriver) {
    host_record(e, call_kind(e.args.entry_point.empty() ? e.name : e.args.entry_point));
  } else if (schema::device_kind_of(category, &device_kind)) device_record(e, device_kind);
  else if (category == cat::kProfagent) agent_slice(e);
  else skip(e);
  return true;
}

bool TraceBuilder::instant_event(const RawEvent& e, std::string& error) {
  if (const char* field = missing_field(e)) return error = std::string("no \"") + field + "\"", false;
  if (const char* why = bad_times(e)) return error = why, false;
  if (e.name == schema::name::kMemory || e.name == schema::name::kOutOfMemory || e.name == schema::name::kFailedMemoryCall) {
    memory_record(e);
  } else if (e.name == schema::name::kWindowEnd) {
    window_end_ns_ = ns_of(e.ts_ns);
    window_end_pid_ = e.pid;
  } else {
    skip(e);
  }
  return true;
}

void TraceBuilder::metadata_event(const RawEvent& e) {
  if (e.name == schema::name::kProcessName) process_names_.emplace_back(e.pid, std::string(e.args.label));
  else if (e.name == schema::name::kThreadName) {
    thread_names_.emplace_back(std::pair(e.pid, e.tid), std::string(schema::native_thread_name(e.args.label)));
  }
}

void TraceBuilder::skip(const RawEvent& e) {
  std::string_view key = e.cat;
  if (key.empty()) key = e.ph == 'C' ? "counter" : e.ph == 's' || e.ph == 'f' || e.ph == 't' ? "flow" : "uncategorised";
  const auto it = skipped_.find(key);
  if (it != skipped_.end()) ++it->second;
  else skipped_.emplace(std::string(key), 1);
}

void TraceBuilder::flow(const RawEvent& e) {
  if (e.ph == 's') flow_starts_.emplace_back(e.id, e.pid, e.tid, ns_of(e.ts_ns));
  else flow_ends_.emplace_back(e.pid, ns_of(e.ts_ns), e.id);
}

// The call whose flow arrow ends at `d` (same device row and start): the innermost host record
// starting where the arrow starts.
int64_t TraceBuilder::flow_launcher(const DeviceRecord& d) const {
  auto end = std::lower_bound(flow_ends_.begin(), flow_ends_.end(), std::tuple(uint64_t(d.device), d.start_ns, uint64_t(0)));
  for (; end != flow_ends_.end() && std::get<0>(*end) == d.device && std::get<1>(*end) == d.start_ns; ++end) {
    const uint64_t id = std::get<2>(*end);
    auto start = std::lower_bound(flow_starts_.begin(), flow_starts_.end(), std::tuple(id, uint64_t(0), uint64_t(0), uint64_t(0)));
    if (start == flow_starts_.end() || std::get<0>(*start) != id) continue;
    const auto [fid, pid, tid, ns] = *start;
    auto host = std::upper_bound(t_.host.begin(), t_.host.end(), std::tuple(uint32_t(pid), uint32_t(tid), ns),
                                 [](const auto& key, const HostRecord& h) { return key < std::tuple(h.pid, h.tid, h.start_ns); });
    if (host == t_.host.begin() || (host - 1)->start_ns != ns || (host - 1)->tid != tid) continue;
    return int64_t(host - t_.host.begin()) - 1;
  }
  return kNoIndex;
}

// The agent's own work (the profagent track): kept as it was written, for the trace's cost.
void TraceBuilder::agent_slice(const RawEvent& e) {
  const uint64_t start = ns_of(e.ts_ns);
  t_.agent_cost.slices.push_back({std::string(e.name), uint32_t(e.tid), start, start + ns_of(e.dur_ns)});
}

void TraceBuilder::host_record(const RawEvent& e, EventKind kind) {
  HostRecord& h = host_.emplace_back();
  h.start_ns = ns_of(e.ts_ns);
  h.end_ns = h.start_ns + ns_of(e.dur_ns);
  h.pid = uint32_t(e.pid);
  h.tid = uint32_t(e.tid);
  h.kind = kind;
  const RawArgs& a = e.args;
  h.name = a.entry_point.empty() ? e.name : a.entry_point;
  h.external_id = a.has_external_id ? a.external_id : 0;
  max_id_ = std::max(max_id_, h.external_id);
  h.stack = e.sf <= UINT32_MAX ? uint32_t(e.sf) : 0;  // its "sf" until attach_stacks() (trace_stacks.h)
  if (is_scope(kind)) {
    if (!a.input_dims.empty() || !a.input_types.empty()) set_shapes(t_, h, InputShapes{a.input_dims, a.input_types});
    return;
  }
  h.correlation = uint32_t(a.correlation);
  h.kernel_name = a.kernel;
  h.result = int16_t(std::clamp<int64_t>(a.cuda_error, INT16_MIN, INT16_MAX));  // as the hooks clamp it
  if (a.has_error && a.cuda_error != 0) h.flags |= kFlagFailed;
  if (a.captured) h.flags |= kFlagCaptured;
  if (e.cat == cat::kCudaDriver) h.flags |= kFlagDriverApi;
  if (kind == EventKind::Launch || kind == EventKind::GraphLaunch || contains(h.name, "Async")) h.flags |= kFlagAsync;
  if (kind == EventKind::Memcpy || kind == EventKind::Memset || kind == EventKind::Alloc) h.arg0 = a.bytes;
}

// A ProfilerStep#N range: always a step span; a host record too when it has its own External
// id (Kineto's, and profagent's Step records; profagent draws steps it only knows as spans
// without one, and those are not host records at exit either).
void TraceBuilder::step(const RawEvent& e, uint64_t number) {
  const uint64_t start = ns_of(e.ts_ns);
  t_.steps.push_back({number, start, start + ns_of(e.dur_ns)});
  if (!e.args.has_external_id) return;
  host_record(e, EventKind::Step);
  host_.back().arg0 = number;
}

void TraceBuilder::device_record(const RawEvent& e, DeviceKind kind) {
  DeviceRecord& d = device_.emplace_back();
  const RawArgs& a = e.args;
  d.kind = kind;
  d.start_ns = ns_of(e.ts_ns);
  d.end_ns = d.start_ns + ns_of(e.dur_ns);
  d.device = uint32_t(a.device ? a.device : int64_t(e.pid));
  d.context = uint32_t(a.context);
  d.stream = a.stream;
  d.correlation = uint32_t(a.correlation);
  d.external_id = a.has_external_id ? a.external_id : 0;
  d.name = e.name;
  std::copy(std::begin(a.grid), std::end(a.grid), d.grid);
  std::copy(std::begin(a.block), std::end(a.block), d.block);
  d.registers_per_thread = uint32_t(a.registers);
  d.shared_memory = uint32_t(a.shared_memory);
  d.bytes = a.bytes;
  d.graph_id = uint32_t(a.graph_id);
  d.graph_node_id = a.graph_node_id;
  d.queued_ns = a.queued;  // Unix ns until finish() knows the base time
  d.sync_type = schema::sync_type_of(a.sync_kind);
  d.event_id = uint32_t(a.event_id);
}

void TraceBuilder::memory_record(const RawEvent& e) {
  MemoryRecord& m = memory_.emplace_back();
  const RawArgs& a = e.args;
  t_.memory.enabled = true;
  m.ns = ns_of(e.ts_ns);
  m.address = a.address;
  m.bytes = a.memory_bytes;
  m.total_allocated = a.total_allocated;
  m.total_reserved = a.total_reserved;
  m.tid = uint32_t(e.tid);
  const bool host = a.device_type == schema::kTorchCpu;
  m.device = host ? kHostDevice : int32_t(a.device_id);
  if (!exporters::memory_kind_of(a.memory_kind, &m.kind)) m.kind = host ? MemoryKind::Pinned : MemoryKind::Device;
  m.failed = e.name != schema::name::kMemory;
  m.refused = e.name == schema::name::kFailedMemoryCall;
  m.error = int32_t(a.memory_error);
  if (a.has_allocated_ts) m.allocated_ns = ns_of(a.allocated_ts_ns);
  m.call_site = call_site_index(a.call_site);
}

// 1 + the index of a call site in the trace's list (0 for none): each distinct text once.
uint32_t TraceBuilder::call_site_index(std::string_view site) {
  if (site.empty()) return 0;
  std::vector<std::string>& sites = t_.memory.call_sites;
  const auto [it, added] = call_site_ids_.try_emplace(std::string(site), uint32_t(sites.size() + 1));
  if (added) sites.emplace_back(site);
  return it->second;
}

void TraceBuilder::finish() {
  host_.move_into(t_.host);
  device_.move_into(t_.device);
  memory_.move_into(t_.memory.records);
  sort_host();
  nest_host();
  link_device();
  link_memory();
  finish_steps();
  finish_process();
}

// (pid, tid, start, longest first, widest scope first, file order).
void TraceBuilder::sort_host() {
  sort_records(t_.host, [&](uint32_t i) {
    const HostRecord& h = t_.host[i];
    return std::tuple(h.pid, h.tid, h.start_ns, UINT64_MAX - h.end_ns, nesting_rank(h.kind), i);
  });
}

// Only scopes (operators, ranges, steps) enclose others, as in the collector's join.
void TraceBuilder::nest_host() {
  std::vector<int64_t> scopes;
  uint64_t next_id = max_id_ + 1;
  for (std::size_t i = 0; i < t_.host.size(); ++i) {
    HostRecord& r = t_.host[i];
    if (i > 0 && (t_.host[i - 1].tid != r.tid || t_.host[i - 1].pid != r.pid)) scopes.clear();
    while (!scopes.empty()) {
      const HostRecord& s = t_.host[size_t(scopes.back())];
      if (s.start_ns <= r.start_ns && r.end_ns <= s.end_ns) break;
      scopes.pop_back();
    }
    r.parent = scopes.empty() ? kNoIndex : scopes.back();
    if (is_scope(r.kind)) {
      r.id = r.external_id ? r.external_id : next_id++;
      r.external_id = r.id;
      scopes.push_back(int64_t(i));
    } else {
      // A call outside every scope carried its own id as External id.
      r.id = scopes.empty() && r.external_id ? r.external_id : next_id++;
      if (r.external_id == 0) r.external_id = scopes.empty() ? r.id : t_.host[size_t(scopes.back())].id;
    }
  }
}

void TraceBuilder::link_device() {
  std::vector<std::pair<uint32_t, uint32_t>> calls;  // (correlation, host index)
  for (std::size_t i = 0; i < t_.host.size(); ++i) {
    if (t_.host[i].correlation != 0 && !is_scope(t_.host[i].kind)) calls.emplace_back(t_.host[i].correlation, uint32_t(i));
  }
  std::sort(calls.begin(), calls.end());
  std::sort(flow_starts_.begin(), flow_starts_.end());
  std::sort(flow_ends_.begin(), flow_ends_.end());
  const uint64_t base = uint64_t(std::max<int64_t>(t_.unix_offset_ns, 0));
  for (DeviceRecord& d : t_.device) {
    d.queued_ns = d.queued_ns > base ? d.queued_ns - base : 0;
    const auto it = std::lower_bound(calls.begin(), calls.end(), std::pair(d.correlation, 0u));
    const bool by_correlation = d.correlation != 0 && it != calls.end() && it->first == d.correlation;
    d.host = by_correlation ? int64_t(it->second) : flow_launcher(d);
    if (d.host == kNoIndex) continue;
    HostRecord& call = t_.host[size_t(d.host)];
    if (d.external_id == 0) d.external_id = call.external_id;
    if (d.kind == DeviceKind::Memcpy && call.kind == EventKind::Memcpy) {
      call.flags = uint8_t((call.flags & ~kMemcpyKindMask) | memcpy_kind(d.name));
    }
  }
  sort_records(t_.device, [&](uint32_t i) { return std::pair(t_.device[i].start_ns, i); });
}

// A memory record belongs to the innermost host record of its thread that encloses it (the
// allocating call, or torch's operator).
void TraceBuilder::link_memory() {
  std::vector<MemoryRecord>& records = t_.memory.records;
  sort_records(records, [&](uint32_t i) { return std::pair(records[i].ns, i); });
  const uint32_t pid = uint32_t(window_end_pid_ ? window_end_pid_ : t_.host.empty() ? 0 : t_.host.front().pid);
  for (MemoryRecord& m : t_.memory.records) {
    auto at = std::upper_bound(t_.host.begin(), t_.host.end(), std::tuple(pid, m.tid, m.ns),
                               [](const auto& key, const HostRecord& h) { return key < std::tuple(h.pid, h.tid, h.start_ns); });
    if (at == t_.host.begin()) continue;
    int64_t i = int64_t(at - t_.host.begin()) - 1;
    if (t_.host[size_t(i)].tid != m.tid || t_.host[size_t(i)].pid != pid) continue;
    while (i != kNoIndex && t_.host[size_t(i)].end_ns < m.ns) i = t_.host[size_t(i)].parent;
    if (i == kNoIndex) continue;
    m.host = i;
    m.event_id = t_.host[size_t(i)].id;
  }
}

void TraceBuilder::finish_steps() {
  std::sort(t_.steps.begin(), t_.steps.end(),
            [](const StepSpan& a, const StepSpan& b) { return std::tie(a.start_ns, a.number) < std::tie(b.start_ns, b.number); });
}

void TraceBuilder::finish_process() {
  ProcessInfo& p = t_.process;
  p.pid = uint32_t(window_end_pid_ ? window_end_pid_ : t_.host.empty() ? 0 : t_.host.front().pid);
  for (const auto& [pid, name] : process_names_) {
    if (pid == p.pid && p.exe_name.empty()) p.exe_name = name;
  }
  for (const auto& [row, name] : thread_names_) {
    if (row.first == p.pid && !name.empty()) p.thread_names.emplace_back(uint32_t(row.second), name);
  }
  uint64_t first = UINT64_MAX, last = window_end_ns_;
  for (const HostRecord& h : t_.host) first = std::min(first, h.start_ns), last = std::max(last, h.end_ns);
  for (const DeviceRecord& d : t_.device) first = std::min(first, d.start_ns), last = std::max(last, d.end_ns);
  for (const StepSpan& s : t_.steps) first = std::min(first, s.start_ns), last = std::max(last, s.end_ns);
  t_.start_ns = first == UINT64_MAX ? 0 : first;
  t_.end_ns = last;
}

}  // namespace profagent::report
