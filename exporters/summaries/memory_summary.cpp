#include "exporters/summaries/memory_summary.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "exporters/host_nesting.h"
#include "exporters/memory_events.h"
#include "exporters/stack_text.h"
#include "exporters/summaries/tables.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

// Per host record the innermost operator or range at or above it (-1 none), from the one nesting
// walk of host_costs(): no chain is followed per memory record.
using NamedScopes = std::vector<int64_t>;

// The index of the first step (in time order) whose [start, end] holds ns, or -1. Steps are in
// time order and do not overlap (touching ones share an instant, which is the earlier's): a
// binary search, so a window of many steps and records stays linear-logarithmic.
int64_t step_index_at(const Trace& t, uint64_t ns) {
  const auto after = std::upper_bound(t.steps.begin(), t.steps.end(), ns,
                                      [](uint64_t v, const StepSpan& s) { return v < s.start_ns; });
  if (after == t.steps.begin()) return -1;
  auto it = std::prev(after);
  if (it != t.steps.begin() && std::prev(it)->end_ns >= ns) it = std::prev(it);
  return it->end_ns >= ns ? int64_t(it - t.steps.begin()) : -1;
}

int64_t step_at(const Trace& t, uint64_t ns) {
  const int64_t i = step_index_at(t, ns);
  return i < 0 ? -1 : int64_t(t.steps[std::size_t(i)].number);
}

// Where the calls of memory records were: in the trace (its host records, their named scopes),
// or, for a streamed window's tail, in an earlier segment (EarlierCalls).
struct Calls {
  const Trace& t;
  NamedScopes scopes;
  const EarlierCalls* earlier = nullptr;

  // The call with this event id written in an earlier part (nullptr: none, or it is in `t`).
  const EarlierCall* earlier_call(int64_t host, uint64_t event_id) const {
    if (earlier == nullptr || event_id == 0 || valid_index(host, t.host.size())) return nullptr;
    const auto found = earlier->find(event_id);
    return found != earlier->end() ? &found->second : nullptr;
  }
  std::string scope_of(int64_t host, uint64_t event_id) const {
    if (const EarlierCall* call = earlier_call(host, event_id)) return call->scope;
    if (!valid_index(host, t.host.size()) || scopes[std::size_t(host)] < 0) return {};
    return t.host[std::size_t(scopes[std::size_t(host)])].name;
  }
  MemoryPlace place_of(uint64_t ns, int64_t host, uint64_t event_id, std::string call_site) const {
    return MemoryPlace{ns, step_at(t, ns), scope_of(host, event_id), std::move(call_site)};
  }
  MemoryPlace place_of(const MemoryRecord& r) const { return place_of(r.ns, r.host, r.event_id, memory_call_site(t, r)); }
};

DeviceMemory& device_entry(std::map<int32_t, DeviceMemory>& devices, const Trace& t, int32_t device) {
  auto [it, added] = devices.try_emplace(device);
  if (added) {
    it->second.device = device;
    it->second.allocated_at.ns = it->second.reserved_at.ns = t.start_ns;
    it->second.allocated_at.step = it->second.reserved_at.step = step_at(t, t.start_ns);
  }
  return it->second;
}

std::vector<DeviceMemory> device_peaks(const Calls& calls) {
  const Trace& t = calls.t;
  std::map<int32_t, DeviceMemory> devices;
  for (const MemoryTotals& s : t.memory.start) {
    DeviceMemory& d = device_entry(devices, t, s.device);
    d.peak_allocated = s.allocated, d.peak_reserved = s.reserved;
  }
  for (const MemoryRecord& r : t.memory.records) {
    if (r.failed) continue;
    DeviceMemory& d = device_entry(devices, t, r.device);
    if (r.total_allocated > d.peak_allocated) d.peak_allocated = r.total_allocated, d.allocated_at = calls.place_of(r);
    if (r.total_reserved > d.peak_reserved) d.peak_reserved = r.total_reserved, d.reserved_at = calls.place_of(r);
  }
  for (const MemoryTotals& e : t.memory.end) {
    DeviceMemory& d = device_entry(devices, t, e.device);
    d.end_allocated = e.allocated, d.end_reserved = e.reserved;
  }
  std::vector<DeviceMemory> out;
  for (auto& [device, d] : devices) out.push_back(std::move(d));
  return out;
}

void count_record(const StepSpan& span, const MemoryRecord& r, StepMemory& s) {
  if (r.failed) return void(++s.failed);
  s.net_bytes += r.bytes;
  if (r.bytes >= 0) return void(++s.allocations);
  ++s.frees;
  const bool made_in_step = r.allocated_ns >= span.start_ns && r.allocated_ns <= span.end_ns;
  if (made_in_step && r.kind != MemoryKind::Pool) ++s.churn_pairs, s.churn_bytes += uint64_t(-r.bytes);
}

std::vector<StepMemory> step_counts(const Trace& t) {
  std::vector<StepMemory> steps;
  for (const StepSpan& s : t.steps) steps.push_back({s.number});
  for (const MemoryRecord& r : t.memory.records) {
    const int64_t i = step_index_at(t, r.ns);
    if (i >= 0) count_record(t.steps[std::size_t(i)], r, steps[std::size_t(i)]);
  }
  return steps;
}

std::vector<LiveMemory> live_allocations(const Calls& calls) {
  const Trace& t = calls.t;
  std::unordered_map<uint64_t, int64_t> host_of_id;
  for (std::size_t i = 0; i < t.host.size(); ++i) host_of_id.emplace(t.host[i].id, int64_t(i));
  std::vector<LiveMemory> live;
  for (const LiveAllocation& a : t.memory.live) {
    LiveMemory& m = live.emplace_back();
    m.allocation = a;
    const auto it = a.event_id != 0 ? host_of_id.find(a.event_id) : host_of_id.end();
    const int64_t host = it != host_of_id.end() ? it->second : kNoIndex;
    m.in_window = host != kNoIndex || calls.earlier_call(host, a.event_id) != nullptr;
    m.made = calls.place_of(a.ns, host, a.event_id, live_call_site(t, a, host));
  }
  return live;
}

// Every step of the window but its first (warm-up allocations are expected there) churns.
bool churns_every_step(const std::vector<StepMemory>& steps) {
  if (steps.size() < 3) return false;
  return std::all_of(steps.begin() + 1, steps.end(), [](const StepMemory& s) { return s.churn_pairs > 0; });
}

std::string churn_advice(const std::vector<StepMemory>& steps) {
  uint64_t pairs = 0, bytes = 0;
  for (std::size_t i = 1; i < steps.size(); ++i) pairs += steps[i].churn_pairs, bytes += steps[i].churn_bytes;
  const uint64_t per_step = pairs / (steps.size() - 1);
  return "every step allocates and frees the same memory (" + std::to_string(per_step) + " alloc/free pairs, " +
         format_memory(int64_t(bytes / (steps.size() - 1))) +
         " per step): each cudaMalloc/cudaFree may synchronise the device; allocate once outside the loop, or "
         "use stream-ordered allocation (cudaMallocAsync) or a caching allocator";
}

std::string where(const MemoryPlace& p) {
  std::string s;
  if (p.step >= 0) s = "step " + std::to_string(p.step);
  if (!p.scope.empty()) s += (s.empty() ? "in " : ", in ") + p.scope;
  if (s.empty()) s = "outside any step, operator or range";
  return p.call_site.empty() ? s : s + ", at " + p.call_site;
}

std::string device_name(int32_t device) { return device == kHostDevice ? "CPU pinned" : "GPU " + std::to_string(device); }

std::string ms_into(const Trace& t, uint64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "+%.3fms", ns > t.start_ns ? double(ns - t.start_ns) / 1e6 : 0.0);
  return buf;
}

std::string device_lines(const Trace& t, const MemorySummary& m) {
  std::string out;
  for (const DeviceMemory& d : m.devices) {
    out += "  " + device_name(d.device) + ": peak allocated " + format_memory(d.peak_allocated) + " (" +
           ms_into(t, d.allocated_at.ns) + ", " + where(d.allocated_at) + "), peak reserved " +
           format_memory(d.peak_reserved) + " (" + ms_into(t, d.reserved_at.ns) + ", " + where(d.reserved_at) +
           "); at window end allocated " + format_memory(d.end_allocated) + ", reserved " +
           format_memory(d.end_reserved) + "\n";
  }
  return out;
}

std::string step_lines(const MemorySummary& m) {
  std::string out;
  for (const StepMemory& s : m.steps) {
    out += "  step " + std::to_string(s.step) + ": " + std::to_string(s.allocations) + " allocations, " +
           std::to_string(s.frees) + " frees, net " + format_memory(s.net_bytes);
    if (s.failed) out += ", " + std::to_string(s.failed) + " failed";
    if (s.churn_pairs) out += ", " + std::to_string(s.churn_pairs) + " freed in the step they were made";
    out += "\n";
  }
  return out;
}

std::string live_lines(const Trace& t, const MemorySummary& m, std::size_t limit) {
  std::string out = "  live at window end: " + std::to_string(t.memory.live_count) + " allocations, " +
                    format_memory(int64_t(t.memory.live_bytes)) + "\n";
  for (std::size_t i = 0; i < m.live.size() && i < limit; ++i) {
    const LiveMemory& l = m.live[i];
    const std::string thread = l.allocation.tid != 0 ? " on thread " + std::to_string(l.allocation.tid) : "";
    out += "    " + format_memory(int64_t(l.allocation.bytes)) + " " + device_name(l.allocation.device) + " by " +
           l.allocation.api + thread + ", " +
           (l.in_window ? where(l.made) : std::string("before this window")) + "\n";
  }
  if (m.live.size() > limit) out += "    ... (all listed in the summary file)\n";
  return out;
}

// A refused call (memory already registered, an invalid value) is said as the failed call it
// is, with its error, never as an out-of-memory.
std::string failure_line(const FailedAllocation& f) {
  const MemoryRecord& r = f.record;
  if (r.refused) {
    return "  failed call: " + (f.call.empty() ? std::string("an allocation call") : f.call) + " of " +
           format_memory(r.bytes) + " " + device_name(r.device) + " returned error " + std::to_string(r.error) +
           ", not out of memory (" + where(f.place) + ")\n";
  }
  return "  failed allocation: " + format_memory(r.bytes) + " on " + device_name(r.device) + " (" + where(f.place) +
         "; " + format_memory(r.total_allocated) + " allocated then)\n";
}

std::string problem_lines(const Trace& t, const MemorySummary& m) {
  std::string out;
  for (const FailedAllocation& f : m.failed) out += failure_line(f);
  if (t.memory.unknown_frees) out += "  " + std::to_string(t.memory.unknown_frees) + " frees of unknown or already freed pointers\n";
  if (t.memory.null_frees) out += "  " + std::to_string(t.memory.null_frees) + " frees of a null pointer\n";
  // Dropped records are said once, by the agent's drop report, not again in the table.
  if (!m.advice.empty()) out += "  advice: " + m.advice + "\n";
  return out;
}

void write_place(const Trace& t, const MemoryPlace& p, JsonWriter& w) {
  w.raw("{\"unix_ns\":"), w.i64(int64_t(p.ns) + t.unix_offset_ns);
  w.raw(",\"step\":"), w.i64(p.step);
  w.raw(",\"scope\":"), w.string(p.scope);
  if (!p.call_site.empty()) w.raw(",\"call_site\":"), w.string(p.call_site);
  w.raw("}");
}

void write_devices(const Trace& t, const MemorySummary& m, JsonWriter& w) {
  w.raw("\"devices\":[");
  for (std::size_t i = 0; i < m.devices.size(); ++i) {
    const DeviceMemory& d = m.devices[i];
    w.raw(i ? ",{\"device\":" : "{\"device\":"), w.i64(d.device);
    w.raw(",\"peak_allocated\":"), w.i64(d.peak_allocated);
    w.raw(",\"peak_allocated_at\":"), write_place(t, d.allocated_at, w);
    w.raw(",\"peak_reserved\":"), w.i64(d.peak_reserved);
    w.raw(",\"peak_reserved_at\":"), write_place(t, d.reserved_at, w);
    w.raw(",\"end_allocated\":"), w.i64(d.end_allocated);
    w.raw(",\"end_reserved\":"), w.i64(d.end_reserved);
    w.raw("}");
  }
  w.raw("]");
}

void write_steps(const MemorySummary& m, JsonWriter& w) {
  w.raw(",\"steps\":[");
  for (std::size_t i = 0; i < m.steps.size(); ++i) {
    const StepMemory& s = m.steps[i];
    w.raw(i ? ",{\"step\":" : "{\"step\":"), w.u64(s.step);
    w.raw(",\"allocations\":"), w.u64(s.allocations);
    w.raw(",\"frees\":"), w.u64(s.frees);
    w.raw(",\"failed\":"), w.u64(s.failed);
    w.raw(",\"net_bytes\":"), w.i64(s.net_bytes);
    w.raw(",\"churn_pairs\":"), w.u64(s.churn_pairs);
    w.raw("}");
  }
  w.raw("]");
}

void write_live(const Trace& t, const MemorySummary& m, JsonWriter& w) {
  w.raw(",\"live_count\":"), w.u64(t.memory.live_count);
  w.raw(",\"live_bytes\":"), w.u64(t.memory.live_bytes);
  w.raw(",\"live\":[");
  for (std::size_t i = 0; i < m.live.size(); ++i) {
    const LiveMemory& l = m.live[i];
    w.raw(i ? ",{\"bytes\":" : "{\"bytes\":"), w.u64(l.allocation.bytes);
    w.raw(",\"device\":"), w.i64(l.allocation.device);
    w.raw(",\"address\":"), w.u64(l.allocation.address);
    w.raw(",\"api\":"), w.string(l.allocation.api);
    w.raw(",\"tid\":"), w.u64(l.allocation.tid);
    w.raw(",\"in_window\":"), w.boolean(l.in_window);
    w.raw(",\"made\":"), write_place(t, l.made, w);
    w.raw("}");
  }
  w.raw("]");
}

void write_problems(const Trace& t, const MemorySummary& m, JsonWriter& w) {
  w.raw(",\"failed\":[");
  for (std::size_t i = 0; i < m.failed.size(); ++i) {
    const FailedAllocation& f = m.failed[i];
    w.raw(i ? ",{\"bytes\":" : "{\"bytes\":"), w.i64(f.record.bytes);
    w.raw(",\"device\":"), w.i64(f.record.device);
    w.raw(",\"out_of_memory\":"), w.boolean(!f.record.refused);
    w.raw(",\"error\":"), w.i64(f.record.error);
    w.raw(",\"call\":"), w.string(f.call);
    w.raw(",\"at\":"), write_place(t, f.place, w);
    w.raw("}");
  }
  w.raw("],\"unknown_frees\":"), w.u64(t.memory.unknown_frees);
  w.raw(",\"null_frees\":"), w.u64(t.memory.null_frees);
  w.raw(",\"dropped_records\":"), w.u64(t.memory.dropped_records);
  w.raw(",\"record_capacity\":"), w.u64(t.memory.record_capacity);
  w.raw(",\"bookkeeping_bytes\":"), w.u64(t.memory.bookkeeping_bytes);
  w.raw(",\"churn_every_step\":"), w.boolean(m.churn_every_step);
  w.raw(",\"advice\":"), w.string(m.advice);
}

}  // namespace

MemorySummary summarize_memory(const Trace& t) { return summarize_memory(t, host_costs(t)); }

MemorySummary summarize_memory(const Trace& t, const HostCosts& costs, const EarlierCalls* earlier) {
  MemorySummary m;
  m.enabled = t.memory.enabled;
  if (!m.enabled) return m;
  const Calls calls{t, nearest_at_or_above(t, costs.order, is_named_scope), earlier};
  m.devices = device_peaks(calls);
  m.steps = step_counts(t);
  m.live = live_allocations(calls);
  for (const MemoryRecord& r : t.memory.records) {
    if (!r.failed) continue;
    const bool known = r.host >= 0 && std::size_t(r.host) < t.host.size();
    const EarlierCall* before = calls.earlier_call(r.host, r.event_id);
    m.failed.push_back({r, calls.place_of(r), known ? t.host[std::size_t(r.host)].name.str() : before ? before->name : std::string()});
  }
  m.churn_every_step = churns_every_step(m.steps);
  if (m.churn_every_step) m.advice = churn_advice(m.steps);
  return m;
}

std::string render_memory_summary(const Trace& t, const MemorySummary& m, std::size_t limit) {
  if (!m.enabled) return {};
  return "\nMemory (allocations through CUDA; CPU = pinned or registered host memory):\n" + device_lines(t, m) +
         step_lines(m) + live_lines(t, m, limit) + problem_lines(t, m);
}

void write_memory_summary_json(const Trace& t, const MemorySummary& m, JsonWriter& w) {
  if (!m.enabled) return;
  w.raw(",\"memory\":{");
  write_devices(t, m, w);
  write_steps(m, w);
  write_live(t, m, w);
  write_problems(t, m, w);
  w.raw("}");
}

}  // namespace profagent::exporters
