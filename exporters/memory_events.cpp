#include "exporters/stack_text.h"
#include "exporters/memory_events.h"

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
    instant(r, r.failed ? "[OutOfMemory]" : "[memory]");
    w_.raw(",\"args\":{\"Total Reserved\":"), w_.i64(r.total_reserved);
    w_.raw(",\"Total Allocated\":"), w_.i64(r.total_allocated);
    w_.raw(",\"Bytes\":"), w_.i64(r.bytes);
    if (!r.failed) w_.raw(",\"Addr\":"), w_.u64(r.address);
    w_.raw(",\"Device Id\":"), w_.i64(r.device);
    w_.raw(",\"Device Type\":"), w_.i64(r.device == kHostDevice ? kTorchCpu : kTorchCuda);
    if (!r.failed) w_.raw(",\"Ev Idx\":"), w_.u64(index);
    const HostRecord* call = r.host >= 0 && std::size_t(r.host) < t_.host.size() ? &t_.host[r.host] : nullptr;
    const std::vector<uint32_t>* stack = call != nullptr ? stack_of(t_, *call) : nullptr;
    if (stack != nullptr) w_.raw(",\"Call site\":"), w_.string(call_site(t_, *stack));
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

uint64_t failed_allocations(const MemoryReport& m) {
  uint64_t failed = 0;
  for (const MemoryRecord& r : m.records) failed += r.failed;
  return failed;
}

}  // namespace

std::string memory_track_name(int32_t device) {
  return device == kHostDevice ? "Memory (CPU pinned)" : "Memory (GPU " + std::to_string(device) + ")";
}

uint64_t write_memory_events(const Trace& trace, JsonWriter& w, const std::function<uint64_t(uint64_t)>& rel) {
  if (!trace.memory.enabled) return 0;
  return MemoryEventWriter(trace, w, rel).write();
}

void write_memory_metadata(const Trace& trace, JsonWriter& w) {
  const MemoryReport& m = trace.memory;
  if (!m.enabled) return;
  w.raw("  \"profagent_memory\": {\"records\":"), w.u64(m.records.size());
  w.raw(",\"record_capacity\":"), w.u64(m.record_capacity);
  w.raw(",\"dropped_records\":"), w.u64(m.dropped_records);
  w.raw(",\"failed_allocations\":"), w.u64(failed_allocations(m));
  w.raw(",\"unknown_frees\":"), w.u64(m.unknown_frees);
  w.raw(",\"null_frees\":"), w.u64(m.null_frees);
  w.raw(",\"live_allocations\":"), w.u64(m.live_count);
  w.raw(",\"live_bytes\":"), w.u64(m.live_bytes);
  w.raw(",\"bookkeeping_bytes\":"), w.u64(m.bookkeeping_bytes);
  w.raw("},\n");
}

}  // namespace profagent::exporters
