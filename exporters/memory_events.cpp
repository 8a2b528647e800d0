#include "exporters/stack_text.h"
#include "exporters/memory_events.h"

#include <unordered_map>

#include <string>

namespace profagent::exporters {
namespace {

constexpr int64_t kTorchCpu = 0;   // c10::DeviceType::CPU
constexpr int64_t kTorchCuda = 1;  // c10::DeviceType::CUDA

class MemoryEventWriter {
 public:
  MemoryEventWriter(const Trace& t, JsonWriter& w, const std::function<uint64_t(uint64_t)>& rel)
      : t_(t), w_(w), rel_(rel) {}

  uint64_t write() {
    for (const MemoryTotals& totals : t_.memory.start) counter(totals.device, t_.start_ns, totals.allocated, totals.reserved);
    for (std::size_t i = 0; i < t_.memory.records.size(); ++i) record(i);
    for (const MemoryTotals& totals : t_.memory.end) counter(totals.device, t_.end_ns, totals.allocated, totals.reserved);
    return events_;
  }

 private:
  void record(std::size_t index) {
    const MemoryRecord& r = t_.memory.records[index];
    instant(r, memory_event_name(r));
    w_.raw(",\"args\":{\"Total Reserved\":"), w_.i64(r.total_reserved);
    w_.raw(",\"Total Allocated\":"), w_.i64(r.total_allocated);
    w_.raw(",\"Bytes\":"), w_.i64(r.bytes);
    if (!r.failed || r.refused) w_.raw(",\"Addr\":"), w_.u64(r.address);
    w_.raw(",\"Device Id\":"), w_.i64(r.device);
    w_.raw(",\"Device Type\":"), w_.i64(r.device == kHostDevice ? kTorchCpu : kTorchCuda);
    if (!r.failed) w_.raw(",\"Ev Idx\":"), w_.u64(index);
    w_.raw(",\"Kind\":\""), w_.raw(memory_kind_name(r.kind)), w_.raw("\"");
    // When the freed memory was made, if in this window: a reader counts frees of memory made
    // in the same step from it.
    if (r.bytes < 0 && !r.failed && r.allocated_ns >= t_.start_ns && r.allocated_ns != 0) {
      w_.raw(",\"Allocated ts\":"), w_.us3(rel_(r.allocated_ns));
    }
    if (r.failed) w_.raw(",\"Error\":"), w_.i64(r.error);
    if (const std::string site = memory_call_site(t_, r); !site.empty()) w_.raw(",\"Call site\":"), w_.string(site);
    w_.raw("}},\n");
    ++events_;
    if (!r.failed) counter(r.device, r.ns, r.total_allocated, r.total_reserved);
  }

  void instant(const MemoryRecord& r, std::string_view name) {
    w_.raw("{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"");
    w_.raw(name);
    w_.raw("\",\"pid\":"), w_.u64(t_.process.pid);
    w_.raw(",\"tid\":"), w_.u64(r.tid != 0 ? r.tid : t_.process.pid);
    w_.raw(",\"ts\":"), w_.us3(rel_(r.ns));
  }

  void counter(int32_t device, uint64_t ns, int64_t allocated, int64_t reserved) {
    w_.raw("{\"ph\":\"C\",\"name\":");
    w_.string(memory_track_name(device));
    w_.raw(",\"pid\":"), w_.u64(t_.process.pid);
    w_.raw(",\"ts\":"), w_.us3(rel_(ns));
    w_.raw(",\"args\":{\"Allocated\":"), w_.i64(allocated);
    w_.raw(",\"Reserved\":"), w_.i64(reserved);
    w_.raw("}},\n");
    ++events_;
  }

  const Trace& t_;
  JsonWriter& w_;
  const std::function<uint64_t(uint64_t)>& rel_;
  uint64_t events_ = 0;
};

uint64_t failed_allocations(const MemoryReport& m, bool refused) {
  uint64_t failed = 0;
  for (const MemoryRecord& r : m.records) failed += r.failed && r.refused == refused;
  return failed;
}

constexpr const char* kKindNames[] = {"device", "pool", "managed", "pinned", "registered"};

}  // namespace

std::string memory_track_name(int32_t device) {
  return device == kHostDevice ? "Memory (CPU pinned)" : "Memory (GPU " + std::to_string(device) + ")";
}

const char* memory_kind_name(MemoryKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < std::size(kKindNames) ? kKindNames[i] : "device";
}

bool memory_kind_of(std::string_view name, MemoryKind* kind) {
  for (std::size_t i = 0; i < std::size(kKindNames); ++i) {
    if (name == kKindNames[i]) return *kind = static_cast<MemoryKind>(i), true;
  }
  return false;
}

const char* memory_event_name(const MemoryRecord& r) {
  return !r.failed ? "[memory]" : r.refused ? "[FailedMemoryCall]" : "[OutOfMemory]";
}

namespace {

std::string stack_call_site(const Trace& t, int64_t host) {
  const HostRecord* call = host >= 0 && std::size_t(host) < t.host.size() ? &t.host[std::size_t(host)] : nullptr;
  const std::vector<uint32_t>* stack = call != nullptr ? stack_of(t, *call) : nullptr;
  return stack != nullptr ? call_site(t, *stack) : std::string();
}

}  // namespace

std::string memory_call_site(const Trace& t, const MemoryRecord& r) {
  if (r.call_site != 0 && r.call_site <= t.memory.call_sites.size()) return t.memory.call_sites[r.call_site - 1];
  return stack_call_site(t, r.host);
}

std::string live_call_site(const Trace& t, const LiveAllocation& a, int64_t host) {
  return a.call_site.empty() ? stack_call_site(t, host) : a.call_site;
}

uint64_t write_memory_events(const Trace& trace, JsonWriter& w, const std::function<uint64_t(uint64_t)>& rel) {
  if (!trace.memory.enabled) return 0;
  return MemoryEventWriter(trace, w, rel).write();
}

namespace {

uint64_t unix_ns(const Trace& t, uint64_t ns) {
  const int64_t v = static_cast<int64_t>(ns) + t.unix_offset_ns;
  return v < 0 ? 0 : static_cast<uint64_t>(v);
}

// "start"/"end": [[device, allocated, reserved], ...] — the ledger's totals at the window's
// bounds, which its records alone cannot give (allocations made before the window).
void write_totals(const Trace&, const char* key, const std::vector<MemoryTotals>& totals, JsonWriter& w) {
  w.raw(",\""), w.raw(key), w.raw("\":[");
  for (std::size_t i = 0; i < totals.size(); ++i) {
    w.raw(i ? ",[" : "["), w.i64(totals[i].device), w.raw(","), w.i64(totals[i].allocated);
    w.raw(","), w.i64(totals[i].reserved), w.raw("]");
  }
  w.raw("]");
}

// "live": [[address, bytes, unix ns, device, kind, tid, api, unix ns of the allocating call's
// start or 0, the call's call site or ""], ...]: the allocations live at the window's end
// (listed ones), so a reader of the file gives the same memory summary as the agent did.
void write_live(const Trace& t, JsonWriter& w) {
  std::unordered_map<uint64_t, int64_t> call_of;
  if (!t.memory.live.empty()) {
    for (std::size_t i = 0; i < t.host.size(); ++i) call_of.emplace(t.host[i].id, int64_t(i));
  }
  w.raw(",\"live\":[");
  for (std::size_t i = 0; i < t.memory.live.size(); ++i) {
    const LiveAllocation& a = t.memory.live[i];
    const auto call = a.event_id ? call_of.find(a.event_id) : call_of.end();
    const int64_t host = call == call_of.end() ? kNoIndex : call->second;
    w.raw(i ? ",[" : "["), w.u64(a.address), w.raw(","), w.u64(a.bytes), w.raw(","), w.u64(unix_ns(t, a.ns));
    w.raw(","), w.i64(a.device), w.raw(","), w.u64(static_cast<uint64_t>(a.kind)), w.raw(","), w.u64(a.tid);
    w.raw(","), w.string(a.api), w.raw(","), w.u64(host == kNoIndex ? 0 : unix_ns(t, t.host[std::size_t(host)].start_ns));
    w.raw(","), w.string(live_call_site(t, a, host)), w.raw("]");
  }
  w.raw("]");
}

}  // namespace

void write_memory_metadata(const Trace& trace, JsonWriter& w) {
  const MemoryReport& m = trace.memory;
  if (!m.enabled) return;
  w.raw("  \"profagent_memory\": {\"records\":"), w.u64(m.records.size());
  w.raw(",\"record_capacity\":"), w.u64(m.record_capacity);
  w.raw(",\"dropped_records\":"), w.u64(m.dropped_records);
  w.raw(",\"failed_allocations\":"), w.u64(failed_allocations(m, false));
  w.raw(",\"failed_calls\":"), w.u64(failed_allocations(m, true));
  w.raw(",\"unknown_frees\":"), w.u64(m.unknown_frees);
  w.raw(",\"null_frees\":"), w.u64(m.null_frees);
  w.raw(",\"live_allocations\":"), w.u64(m.live_count);
  w.raw(",\"live_bytes\":"), w.u64(m.live_bytes);
  w.raw(",\"bookkeeping_bytes\":"), w.u64(m.bookkeeping_bytes);
  write_totals(trace, "start", m.start, w);
  write_totals(trace, "end", m.end, w);
  write_live(trace, w);
  w.raw("},\n");
}

}  // namespace profagent::exporters
