// The allocation ledger (memory_ledger.h): what the hooks book, window cuts and the finish.
// The device's own records are booked in memory_device_records.cpp.
#include "collector/memory_ledger.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "collector/memory_ledger_state.h"
#include "collector/names.h"
#include "collector/thread_buffer.h"

namespace profagent::collector {

std::atomic<bool> g_memory_tracking{false};

namespace ledger {

Ledger& state() {
  static Ledger* instance = new Ledger;  // leaked: hooks may run during static destruction
  return *instance;
}

DeviceTotals& totals_of(Ledger& l, int32_t device) {
  const size_t slot = device < 0 ? 0 : size_t(std::min(device, kMaxDevices - 1)) + 1;
  return l.totals[slot];
}

namespace {

// Under the lock: a record of this operation for the window, if it happened in one. Device
// records come later than their time, often after recording stopped: they come only from times
// the device activity was on (it follows recording), so they are always kept.
void keep_record(Ledger& l, MemoryRecord&& record, const Source& source) {
  if (!source.in_window) return;
  if (l.records.size() >= l.capacity) {
    ++l.dropped;
    return;
  }
  if (l.records.size() == l.records.capacity()) {  // grow by doubling, never past the bound
    l.records.reserve(std::min(std::max<size_t>(2 * l.records.capacity(), 1024), l.capacity));
  }
  l.records.push_back(record);
}

MemoryRecord record_of(uint64_t address, int32_t device, MemoryKind kind, const Source& source) {
  MemoryRecord r;
  r.ns = source.ticks;
  r.address = address;
  r.event_id = source.event_id;
  r.tid = source.tid;
  r.device = device;
  r.kind = kind;
  r.from_device = source.from_device;
  r.correlation = source.correlation;
  return r;
}

void with_totals(MemoryRecord& r, const DeviceTotals& t) {
  r.total_allocated = t.allocated;
  r.total_reserved = t.reserved();
}

}  // namespace

Live make_live(Ledger& l, const MemoryOp& op, const Source& source) {
  Live entry;
  entry.bytes = op.bytes;
  entry.ticks = source.ticks;
  entry.order_ns = source.order_ns;
  entry.event_id = source.event_id;
  entry.serial = l.next_serial++;
  entry.tid = source.tid;
  entry.device = op.device;
  entry.kind = op.kind;
  entry.api = op.api;
  entry.from_device = source.from_device;
  return entry;
}

void count_allocation(Ledger& l, uint64_t address, const Live& made, const Source& source) {
  DeviceTotals& t = totals_of(l, made.device);
  t.used = true;
  t.allocated += int64_t(made.bytes);
  if (made.kind == MemoryKind::Pool) t.pool_allocated += int64_t(made.bytes);
  MemoryRecord r = record_of(address, made.device, made.kind, source);
  r.bytes = int64_t(made.bytes);
  r.allocation = made.serial;
  with_totals(r, t);
  keep_record(l, std::move(r), source);
}

void count_free(Ledger& l, uint64_t address, const Live& freed, const Source& source) {
  DeviceTotals& t = totals_of(l, freed.device);
  t.allocated -= int64_t(freed.bytes);
  if (freed.kind == MemoryKind::Pool) t.pool_allocated -= int64_t(freed.bytes);
  MemoryRecord r = record_of(address, freed.device, freed.kind, source);
  r.bytes = -int64_t(freed.bytes);
  r.allocation = freed.serial;
  r.allocated_ns = freed.ticks;
  r.allocated_by_device = freed.from_device;
  with_totals(r, t);
  keep_record(l, std::move(r), source);
}

}  // namespace ledger

namespace {

using namespace ledger;

// The OS thread id, from the thread's event buffer when it has one. A thread that never
// recorded asks the kernel only while recording: outside windows the syscall was most of the
// bookkeeping's cost (~175 ns of ~250 ns per call), and only a leak list would show it (as 0).
uint32_t current_tid() noexcept {
  if (EventCursor* cursor = tls_cursor) return static_cast<ThreadBuffer*>(cursor)->tid;
  return recording() ? uint32_t(syscall(SYS_gettid)) : 0;
}

// A hooked call, booked now. Its start on the device records' clock (op.call_ns; the latest
// cut for a call made while nothing recorded) orders it against them.
Source hook_source(const Ledger& l, const MemoryOp& op, uint64_t ticks, uint64_t event_id, uint32_t tid) {
  Source source;
  source.ticks = ticks;
  source.order_ns = op.call_ns != 0 ? op.call_ns : l.cut_ns;
  source.event_id = event_id;
  source.tid = tid;
  source.in_window = recording();
  return source;
}

void book_alloc(Ledger& l, const MemoryOp& op, const Source& source) {
  // A zero-byte allocation returns no memory (a null pointer): nothing to book, nothing to free.
  if (op.address == 0) return;
  if (leave_to_device_record(l, op, source)) return;
  const Live made = make_live(l, op, source);
  count_allocation(l, op.address, made, source);
  const auto [it, inserted] = l.live.try_emplace(op.address, made);
  if (!inserted) {  // the address was handed out again: its earlier allocation was freed unseen
    displace(l, op.address, it->second, source);
    it->second = made;
  }
}

void book_free(Ledger& l, const MemoryOp& op, const Source& source) {
  if (op.address == 0) {
    ++l.null_frees;
    return;
  }
  if (leave_to_device_record(l, op, source)) return;
  const auto it = l.live.find(op.address);
  if (it == l.live.end()) {
    if (l.device_records && op.kind != MemoryKind::Registered) free_unknown_later(l, op.address, source);
    else ++l.unknown_frees;
    return;
  }
  const Live freed = it->second;
  l.live.erase(it);
  count_free(l, op.address, freed, source);
}

// A failed call changes no total; its record carries the totals of that moment (what someone
// debugging an out-of-memory needs) and its error.
void book_failure(Ledger& l, const MemoryOp& op, const Source& source) {
  MemoryRecord r = record_of(op.address, op.device, op.kind, source);
  r.bytes = int64_t(op.bytes);
  r.failed = true;
  r.error = op.error;
  r.refused = op.type == MemoryOpType::Refused;
  with_totals(r, totals_of(l, op.device));
  keep_record(l, std::move(r), source);
}

void book_op(Ledger& l, const MemoryOp& op, const Source& source) {
  switch (op.type) {
    case MemoryOpType::Alloc: return book_alloc(l, op, source);
    case MemoryOpType::Free: return book_free(l, op, source);
    case MemoryOpType::FailedAlloc:
    case MemoryOpType::Refused: return book_failure(l, op, source);
    case MemoryOpType::FailedFree:
      if (l.live.count(op.address) == 0) ++l.unknown_frees;  // why it failed, most likely
      return;
  }
}

void book(Ledger& l, const MemoryOp& op, uint64_t ticks, uint64_t event_id, uint32_t tid) {
  book_op(l, op, hook_source(l, op, ticks, event_id, tid));
  call_booked(l, op);
}

std::vector<MemoryTotals> totals_now(const Ledger& l) {
  std::vector<MemoryTotals> out;
  for (size_t slot = 0; slot < l.totals.size(); ++slot) {
    const DeviceTotals& t = l.totals[slot];
    if (t.used) out.push_back({int32_t(slot) - 1, t.allocated, t.reserved()});
  }
  return out;
}

void largest_live(const Ledger& l, MemoryCut& cut) {
  std::vector<std::pair<uint64_t, const Live*>> all;
  all.reserve(l.live.size());
  for (const auto& [address, entry] : l.live) all.emplace_back(address, &entry);
  const size_t listed = std::min(all.size(), kMaxLiveListed);
  std::partial_sort(all.begin(), all.begin() + listed, all.end(), [](const auto& a, const auto& b) {
    return a.second->bytes != b.second->bytes ? a.second->bytes > b.second->bytes : a.second->ticks < b.second->ticks;
  });
  cut.report.live.reserve(listed);
  for (size_t i = 0; i < listed; ++i) {
    const Live& e = *all[i].second;
    cut.report.live.push_back({all[i].first, e.bytes, e.ticks, e.event_id, e.tid, e.device, e.kind, {}, {}});
    cut.live_sources.push_back({e.api, e.serial, e.from_device});  // named at finish_memory (not under this lock)
  }
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
  l.cut_ns = clock::monotonic_ns();
  ++l.cuts;
  report.unknown_frees = std::exchange(l.unknown_frees, 0);
  report.null_frees = std::exchange(l.null_frees, 0);
  report.dropped_records = std::exchange(l.dropped, 0);
  report.record_capacity = l.capacity;
  report.bookkeeping_bytes = bookkeeping_bytes(l);
  report.records = std::move(l.records);
  l.records = {};
  cut.cut = l.cuts;
  if (!keep) return {};
  report.live_count = l.live.size();
  for (const auto& [address, entry] : l.live) report.live_bytes += entry.bytes;
  largest_live(l, cut);
  return cut;
}

// Device-booked records came later than the calls around them: in time order, the totals are
// those of the window's start plus every record up to each one. (The booked totals stay when
// records were dropped: a replay would miss the dropped ones.)
void replay_totals(MemoryReport& report) {
  std::stable_sort(report.records.begin(), report.records.end(),
                   [](const MemoryRecord& a, const MemoryRecord& b) { return a.ns < b.ns; });
  if (report.dropped_records != 0) return;
  std::unordered_map<int32_t, std::pair<int64_t, int64_t>> totals;  // device -> allocated, pool excess
  for (const MemoryTotals& s : report.start) totals[s.device] = {s.allocated, s.reserved - s.allocated};
  for (MemoryRecord& r : report.records) {
    auto& [allocated, excess] = totals[r.device];
    if (!r.failed) allocated += r.bytes;
    if (!r.from_device) excess = std::max<int64_t>(r.total_reserved - r.total_allocated, 0);
    r.total_allocated = allocated;
    r.total_reserved = allocated + excess;
  }
}

}  // namespace

void configure_memory_records(size_t max_records) noexcept {
  Ledger& l = state();
  std::lock_guard lock(l.mutex);
  l.capacity = max_records;
}

void note_memory(const MemoryOp& op, uint64_t event_id) noexcept {
  Ledger& l = state();
  try {
    const uint32_t tid = current_tid();
    std::lock_guard lock(l.mutex);
    book(l, op, now(), event_id, tid);  // ticks under the lock: records are in booking order
  } catch (...) {
    std::lock_guard lock(l.mutex);
    call_ended(l, op);
    static SwallowedSite site{"out of memory in the allocation bookkeeping: an allocation is missing from the totals"};
    note_swallowed(site);
  }
}

MemoryCut cut_memory(bool keep) {
  if (!memory_tracking()) return {};
  Ledger& l = state();
  std::lock_guard lock(l.mutex);
  return take_window(l, keep);
}

void finish_memory(MemoryCut&& cut, const clock::TickConverter& converter, Trace& trace) {
  MemoryReport& report = cut.report;
  if (!report.enabled) return;
  std::unordered_map<uint64_t, int64_t> host_of_id;
  std::unordered_map<uint32_t, int64_t> host_of_correlation;  // driver calls the CUPTI callback saw
  for (size_t i = 0; i < trace.host.size(); ++i) {
    host_of_id.emplace(trace.host[i].id, int64_t(i));
    if (trace.host[i].correlation != 0) host_of_correlation.emplace(trace.host[i].correlation, int64_t(i));
  }
  bool any_from_device = false;
  for (MemoryRecord& r : report.records) {
    any_from_device |= r.from_device;
    if (r.allocated_ns != 0 && !r.allocated_by_device) r.allocated_ns = converter.to_ns(r.allocated_ns);
    if (!r.from_device) r.ns = converter.to_ns(r.ns);
    const auto call = r.from_device ? host_of_correlation.find(r.correlation) : host_of_correlation.end();
    if (call != host_of_correlation.end() && r.correlation != 0) r.host = call->second;
    const auto it = r.event_id != 0 ? host_of_id.find(r.event_id) : host_of_id.end();
    if (it != host_of_id.end()) r.host = it->second;
  }
  if (any_from_device) replay_totals(report);
  const std::vector<std::string> names = names_snapshot();
  for (size_t i = 0; i < report.live.size() && i < cut.live_sources.size(); ++i) {
    LiveAllocation& a = report.live[i];
    const MemoryCut::LiveSource& source = cut.live_sources[i];
    if (!source.in_ns) a.ns = converter.to_ns(a.ns);
    // No hooked call made it: a driver-level allocation only the device's record showed.
    a.api = source.api == kNoName ? std::string("driver") : source.api < names.size() ? names[source.api] : std::string("?");
  }
  trace.memory = std::move(report);
}

void memory_records_since(MemoryCallCursor& cursor, std::vector<MemoryRecord>& records) {
  if (!memory_tracking()) return;
  Ledger& l = state();
  std::lock_guard lock(l.mutex);
  if (cursor.cuts != l.cuts) cursor = {l.cuts, 0};
  if (cursor.next < l.records.size()) records.insert(records.end(), l.records.begin() + std::ptrdiff_t(cursor.next), l.records.end());
  cursor.next = l.records.size();
}

void forget_memory_in_child() noexcept {
  Ledger& l = state();
  new (&l.mutex) std::mutex;  // a parent thread may have held it at the fork
  l.live = {};
  l.totals = {};
  l.window_start = {};
  l.records = {};
  l.unknown_frees = l.null_frees = l.dropped = 0;
  clear_device_record_state(l);
}

void reset_memory_for_tests() noexcept {
  Ledger& l = state();
  std::lock_guard lock(l.mutex);
  l.live.clear();
  l.totals = {};
  l.window_start.clear();
  l.records.clear();
  l.unknown_frees = l.null_frees = l.dropped = 0;
  l.cut_ns = 0;
  l.cuts = 0;
  clear_device_record_state(l);
}

}  // namespace profagent::collector
