#include "exporters/memory_events.h"

#include <string>
#include <unordered_map>

#include "exporters/field_writer.h"
#include "exporters/stack_text.h"
#include "exporters/trace_schema.h"

namespace profagent::exporters {
namespace {

namespace arg = schema::arg;

// `,"key":` inside an args object.
void key(JsonWriter& w, std::string_view key) { w.raw(",\""), w.raw(key), w.raw("\":"); }

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
    w_.raw(",\"args\":{\""), w_.raw(arg::kTotalReserved), w_.raw("\":"), w_.i64(r.total_reserved);
    key(w_, arg::kTotalAllocated), w_.i64(r.total_allocated);
    key(w_, arg::kMemoryBytes), w_.i64(r.bytes);
    if (!r.failed || r.refused) key(w_, arg::kAddress), w_.u64(r.address);
    key(w_, arg::kDeviceId), w_.i64(r.device);
    key(w_, arg::kDeviceType), w_.i64(r.device == kHostDevice ? schema::kTorchCpu : schema::kTorchCuda);
    if (!r.failed) key(w_, arg::kEventIndex), w_.u64(index);
    key(w_, arg::kMemoryKind), w_.raw("\""), w_.raw(memory_kind_name(r.kind)), w_.raw("\"");
    // When the freed memory was made, if in this window: a reader counts frees of memory made
    // in the same step from it.
    if (r.bytes < 0 && !r.failed && r.allocated_ns >= t_.start_ns && r.allocated_ns != 0) {
      key(w_, arg::kAllocatedTs), w_.us3(rel_(r.allocated_ns));
    }
    if (r.failed) key(w_, arg::kError), w_.i64(r.error);
    if (const std::string site = memory_call_site(t_, r); !site.empty()) key(w_, arg::kCallSite), w_.string(site);
    w_.raw("}},\n");
    ++events_;
    if (!r.failed) counter(r.device, r.ns, r.total_allocated, r.total_reserved);
  }

  void instant(const MemoryRecord& r, std::string_view name) {
    w_.raw("{\"ph\":\"i\",\"cat\":\""), w_.raw(schema::cat::kCpuInstant), w_.raw("\",\"s\":\"t\",\"name\":\"");
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
    w_.raw(",\"args\":{\""), w_.raw(arg::kAllocated), w_.raw("\":"), w_.i64(allocated);
    key(w_, arg::kReserved), w_.i64(reserved);
    w_.raw("}},\n");
    ++events_;
  }

  const Trace& t_;
  JsonWriter& w_;
  const std::function<uint64_t(uint64_t)>& rel_;
  uint64_t events_ = 0;
};

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

std::string_view memory_event_name(const MemoryRecord& r) {
  return !r.failed ? schema::name::kMemory : r.refused ? schema::name::kFailedMemoryCall : schema::name::kOutOfMemory;
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
void write_totals(std::string_view key, const std::vector<MemoryTotals>& totals, JsonWriter& w) {
  w.raw(",\""), w.raw(key), w.raw("\":[");
  for (std::size_t i = 0; i < totals.size(); ++i) {
    for (std::size_t column = 0; column < schema::kTotalsColumns; ++column) {
      w.raw(column ? "," : i ? ",[" : "[");
      switch (schema::TotalsColumn(column)) {
        case schema::kTotalsDevice: w.i64(totals[i].device); break;
        case schema::kTotalsAllocated: w.i64(totals[i].allocated); break;
        case schema::kTotalsReserved: w.i64(totals[i].reserved); break;
        case schema::kTotalsColumns: break;
      }
    }
    w.raw("]");
  }
  w.raw("]");
}

// The start of the call that made a live allocation, when it is in the window (in this Trace,
// or in an earlier segment of a streamed window), else 0.
uint64_t call_unix_ns(const Trace& t, const LiveAllocation& a, int64_t host) {
  if (host != kNoIndex) return unix_ns(t, t.host[std::size_t(host)].start_ns);
  return a.call_ns != 0 ? unix_ns(t, a.call_ns) : 0;
}

// One "live" row, its columns in schema::LiveColumn's order.
void write_live_row(const Trace& t, const LiveAllocation& a, int64_t host, JsonWriter& w) {
  for (std::size_t column = 0; column < schema::kLiveColumns; ++column) {
    w.raw(column ? "," : "[");
    switch (schema::LiveColumn(column)) {
      case schema::kLiveAddress: w.u64(a.address); break;
      case schema::kLiveBytes: w.u64(a.bytes); break;
      case schema::kLiveUnixNs: w.u64(unix_ns(t, a.ns)); break;
      case schema::kLiveDevice: w.i64(a.device); break;
      case schema::kLiveKind: w.u64(static_cast<uint64_t>(a.kind)); break;
      case schema::kLiveTid: w.u64(a.tid); break;
      case schema::kLiveApi: w.string(a.api); break;
      case schema::kLiveCallUnixNs: w.u64(call_unix_ns(t, a, host)); break;
      case schema::kLiveCallSite: w.string(live_call_site(t, a, host)); break;
      case schema::kLiveColumns: break;
    }
  }
  w.raw("]");
}

// The allocations live at the window's end (listed ones), so a reader of the file gives the
// same memory summary as the agent did.
void write_live(const Trace& t, JsonWriter& w) {
  std::unordered_map<uint64_t, int64_t> call_of;
  if (!t.memory.live.empty()) {
    for (std::size_t i = 0; i < t.host.size(); ++i) call_of.emplace(t.host[i].id, int64_t(i));
  }
  w.raw(",\""), w.raw(schema::memory::kLive), w.raw("\":[");
  for (std::size_t i = 0; i < t.memory.live.size(); ++i) {
    const LiveAllocation& a = t.memory.live[i];
    const auto call = a.event_id ? call_of.find(a.event_id) : call_of.end();
    if (i) w.raw(",");
    write_live_row(t, a, call == call_of.end() ? kNoIndex : call->second, w);
  }
  w.raw("]");
}

}  // namespace

uint64_t schema::failed_allocations(const MemoryReport& m, bool refused) {
  uint64_t failed = 0;
  for (const MemoryRecord& r : m.records) failed += r.failed && r.refused == refused;
  return failed;
}

void write_memory_metadata(const Trace& trace, JsonWriter& w) {
  const MemoryReport& m = trace.memory;
  if (!m.enabled) return;
  w.raw("  \""), w.raw(schema::kMemory), w.raw("\": {");
  write_fields(std::span(schema::kMemoryFields), m, w, false);
  write_totals(schema::memory::kStart, m.start, w);
  write_totals(schema::memory::kEnd, m.end, w);
  write_live(trace, w);
  w.raw("},\n");
}

}  // namespace profagent::exporters
