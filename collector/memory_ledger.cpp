// The allocation ledger (memory_ledger.h).
#include "collector/memory_ledger.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "collector/names.h"
#include "collector/thread_buffer.h"

namespace profagent::collector {

std::atomic<bool> g_memory_tracking{false};

namespace {

inline constexpr int32_t kMaxDevices = 64;  // devices above are booked on the last slot

struct Live {
  uint64_t bytes = 0;
  uint64_t ticks = 0;
  uint64_t event_id = 0;
  uint32_t tid = 0;
  int32_t device = kHostDevice;
  MemoryKind kind = MemoryKind::Device;
  NameId api = kNoName;
};

struct DeviceTotals {
  int64_t allocated = 0;       // all live allocations
  int64_t pool_allocated = 0;  // the part of `allocated` served by pools
  int64_t pool_reserved = 0;   // what the pools hold, as the device last reported
  bool used = false;
  int64_t reserved() const {
    return allocated - pool_allocated + std::max(pool_allocated, pool_reserved);
  }
};

struct Ledger {
  std::mutex mutex;  // leaf lock
  std::unordered_map<uint64_t, Live> live;
  std::array<DeviceTotals, kMaxDevices + 1> totals{};  // [0] host, [d + 1] device d
  std::vector<MemoryTotals> window_start;               // totals at the previous cut
  std::vector<MemoryRecord> records;                    // this window's, ns still in ticks
  size_t capacity = (size_t(64) << 20) / sizeof(MemoryRecord);  // configure_memory_records()
  uint64_t unknown_frees = 0;
  uint64_t null_frees = 0;
  uint64_t dropped = 0;
};

Ledger& ledger() {
  static Ledger* instance = new Ledger;  // leaked: hooks may run during static destruction
  return *instance;
}

size_t slot_of(int32_t device) {
  return device < 0 ? 0 : size_t(std::min(device, kMaxDevices - 1)) + 1;
}

uint32_t current_tid() noexcept {
  if (EventCursor* cursor = tls_cursor) return static_cast<ThreadBuffer*>(cursor)->tid;
  return uint32_t(syscall(SYS_gettid));
}

// Under the lock: a record of this call for the window, if the session records.
void keep_record(Ledger& l, MemoryRecord&& record) {
  if (!recording()) return;
  if (l.records.size() >= l.capacity) {
    ++l.dropped;
    return;
  }
  if (l.records.size() == l.records.capacity()) {  // grow by doubling, never past the bound
    l.records.reserve(std::min(std::max<size_t>(2 * l.records.capacity(), 1024), l.capacity));
  }
  l.records.push_back(record);
}

MemoryRecord record_of(const MemoryOp& op, uint64_t ticks, uint64_t event_id, uint32_t tid) {
  MemoryRecord r;
  r.ns = ticks;
  r.address = op.address;
  r.event_id = event_id;
  r.tid = tid;
  r.device = op.device;
  r.kind = op.kind;
  return r;
}

void with_totals(MemoryRecord& r, const DeviceTotals& t) {
  r.total_allocated = t.allocated;
  r.total_reserved = t.reserved();
}

void book_alloc(Ledger& l, const MemoryOp& op, uint64_t ticks, uint64_t event_id, uint32_t tid) {
  Live entry{op.bytes, ticks, event_id, tid, op.device, op.kind, op.api};
  auto [it, inserted] = l.live.insert_or_assign(op.address, entry);
  (void)it;
  (void)inserted;  // an address handed out again without our seeing its free: the new one wins
  DeviceTotals& t = l.totals[slot_of(op.device)];
  t.used = true;
  t.allocated += int64_t(op.bytes);
  if (op.kind == MemoryKind::Pool) t.pool_allocated += int64_t(op.bytes);
  MemoryRecord r = record_of(op, ticks, event_id, tid);
  r.bytes = int64_t(op.bytes);
  with_totals(r, t);
  keep_record(l, std::move(r));
}

void book_free(Ledger& l, const MemoryOp& op, uint64_t ticks, uint64_t event_id, uint32_t tid) {
  if (op.address == 0) {
    ++l.null_frees;
    return;
  }
  const auto it = l.live.find(op.address);
  if (it == l.live.end()) {
    ++l.unknown_frees;
    return;
  }
  const Live freed = it->second;
  l.live.erase(it);
  DeviceTotals& t = l.totals[slot_of(freed.device)];
  t.allocated -= int64_t(freed.bytes);
  if (freed.kind == MemoryKind::Pool) t.pool_allocated -= int64_t(freed.bytes);
  MemoryOp as_freed = op;
  as_freed.device = freed.device;
  as_freed.kind = freed.kind;
  MemoryRecord r = record_of(as_freed, ticks, event_id, tid);
  r.bytes = -int64_t(freed.bytes);
  r.allocated_ns = freed.ticks;
  with_totals(r, t);
  keep_record(l, std::move(r));
}

void book_failure(Ledger& l, const MemoryOp& op, uint64_t ticks, uint64_t event_id, uint32_t tid) {
  MemoryRecord r = record_of(op, ticks, event_id, tid);
  r.bytes = int64_t(op.bytes);
  r.failed = true;
  with_totals(r, l.totals[slot_of(op.device)]);
  keep_record(l, std::move(r));
}

void book(Ledger& l, const MemoryOp& op, uint64_t ticks, uint64_t event_id, uint32_t tid) {
  switch (op.type) {
    case MemoryOpType::Alloc: return book_alloc(l, op, ticks, event_id, tid);
    case MemoryOpType::Free: return book_free(l, op, ticks, event_id, tid);
    case MemoryOpType::FailedAlloc: return book_failure(l, op, ticks, event_id, tid);
    case MemoryOpType::FailedFree:
      if (l.live.count(op.address) == 0) ++l.unknown_frees;  // why it failed, most likely
      return;
  }
}

std::vector<MemoryTotals> totals_now(const Ledger& l) {
  std::vector<MemoryTotals> out;
  for (size_t slot = 0; slot < l.totals.size(); ++slot) {
    const DeviceTotals& t = l.totals[slot];
    if (t.used) out.push_back({int32_t(slot) - 1, t.allocated, t.reserved()});
  }
  return out;
}

std::vector<LiveAllocation> largest_live(const Ledger& l, std::vector<NameId>& apis) {
  std::vector<std::pair<uint64_t, const Live*>> all;
  all.reserve(l.live.size());
  for (const auto& [address, entry] : l.live) all.emplace_back(address, &entry);
  const size_t listed = std::min(all.size(), kMaxLiveListed);
  std::partial_sort(all.begin(), all.begin() + listed, all.end(), [](const auto& a, const auto& b) {
    return a.second->bytes != b.second->bytes ? a.second->bytes > b.second->bytes : a.second->ticks < b.second->ticks;
  });
  std::vector<LiveAllocation> out;
  out.reserve(listed);
  for (size_t i = 0; i < listed; ++i) {
    const Live& e = *all[i].second;
    out.push_back({all[i].first, e.bytes, e.ticks, e.event_id, e.tid, e.device, e.kind, {}});
    apis.push_back(e.api);  // named at finish_memory (not under this lock)
  }
  return out;
}

uint64_t bookkeeping_bytes(const Ledger& l) {
  const uint64_t per_live = sizeof(Live) + sizeof(uint64_t) + 2 * sizeof(void*);  // node + bucket
  return l.live.size() * per_live + l.records.capacity() * sizeof(MemoryRecord);
}

// Under the lock: the window's report, and the ledger starts the next window.
MemoryCut take_window(Ledger& l, bool keep) {
  MemoryCut cut;
  MemoryReport& report = cut.report;
  report.enabled = true;
  report.start = std::move(l.window_start);
  report.end = totals_now(l);
  l.window_start = report.end;
  report.unknown_frees = std::exchange(l.unknown_frees, 0);
  report.null_frees = std::exchange(l.null_frees, 0);
  report.dropped_records = std::exchange(l.dropped, 0);
  report.record_capacity = l.capacity;
  report.bookkeeping_bytes = bookkeeping_bytes(l);
  report.records = std::move(l.records);
  l.records = {};
  if (!keep) return {};
  report.live_count = l.live.size();
  for (const auto& [address, entry] : l.live) report.live_bytes += entry.bytes;
  report.live = largest_live(l, cut.live_apis);
  return cut;
}

}  // namespace

void configure_memory_records(size_t max_records) noexcept {
  Ledger& l = ledger();
  std::lock_guard lock(l.mutex);
  l.capacity = max_records;
}

void note_memory(const MemoryOp& op, uint64_t event_id) noexcept {
  try {
    const uint32_t tid = current_tid();
    Ledger& l = ledger();
    std::lock_guard lock(l.mutex);
    book(l, op, now(), event_id, tid);  // ticks under the lock: records are in booking order
  } catch (...) {
    static SwallowedSite site{"out of memory in the allocation bookkeeping: an allocation is missing from the totals"};
    note_swallowed(site);
  }
}

void note_device_allocation(const MemoryOp& op, uint64_t ticks) noexcept {
  try {
    Ledger& l = ledger();
    std::lock_guard lock(l.mutex);
    if (op.type == MemoryOpType::Alloc && l.live.count(op.address) != 0) return;  // a hook booked it
    if (op.type == MemoryOpType::Free && l.live.count(op.address) == 0) return;   // ... and its free
    book(l, op, ticks, 0, 0);
  } catch (...) {
    static SwallowedSite site{"out of memory in the allocation bookkeeping: a driver allocation is missing"};
    note_swallowed(site);
  }
}

void note_pool_reserved(int32_t device, uint64_t bytes, uint64_t ticks) noexcept {
  (void)ticks;
  Ledger& l = ledger();
  std::lock_guard lock(l.mutex);
  DeviceTotals& t = l.totals[slot_of(device)];
  t.used = true;
  t.pool_reserved = int64_t(bytes);
}

MemoryCut cut_memory(bool keep) {
  if (!memory_tracking()) return {};
  Ledger& l = ledger();
  std::lock_guard lock(l.mutex);
  return take_window(l, keep);
}

void finish_memory(MemoryCut&& cut, const clock::TickConverter& converter, Trace& trace) {
  MemoryReport& report = cut.report;
  if (!report.enabled) return;
  std::unordered_map<uint64_t, int64_t> host_of_id;
  for (size_t i = 0; i < trace.host.size(); ++i) host_of_id.emplace(trace.host[i].id, int64_t(i));
  for (MemoryRecord& r : report.records) {
    r.ns = converter.to_ns(r.ns);
    if (r.allocated_ns != 0) r.allocated_ns = converter.to_ns(r.allocated_ns);
    const auto it = r.event_id != 0 ? host_of_id.find(r.event_id) : host_of_id.end();
    if (it != host_of_id.end()) r.host = it->second;
  }
  const std::vector<std::string> names = names_snapshot();
  for (size_t i = 0; i < report.live.size(); ++i) {
    LiveAllocation& a = report.live[i];
    a.ns = converter.to_ns(a.ns);
    const NameId id = i < cut.live_apis.size() ? cut.live_apis[i] : kNoName;
    a.api = id != kNoName && id < names.size() ? names[id] : std::string("?");
  }
  trace.memory = std::move(report);
}

void forget_memory_in_child() noexcept {
  Ledger& l = ledger();
  new (&l.mutex) std::mutex;  // a parent thread may have held it at the fork
  l.live = {};
  l.totals = {};
  l.window_start = {};
  l.records = {};
  l.unknown_frees = l.null_frees = l.dropped = 0;
}

void reset_memory_for_tests() noexcept {
  Ledger& l = ledger();
  std::lock_guard lock(l.mutex);
  l.live.clear();
  l.totals = {};
  l.window_start.clear();
  l.records.clear();
  l.unknown_frees = l.null_frees = l.dropped = 0;
}

}  // namespace profagent::collector
