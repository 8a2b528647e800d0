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
  bool from_device = false;  // booked from a device record: `ticks` are ns already
};

struct DeviceTotals {
  int64_t allocated = 0;       // all live allocations
  int64_t pool_allocated = 0;  // the part of `allocated` served by pools
  int64_t pool_reserved = 0;   // what the pools hold, as the device last reported (sum of pools)
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
  // Device allocation records: echoes still expected of hooked calls (address << 1 | release).
  bool device_records = false;
  std::unordered_map<uint64_t, uint32_t> echoes;
  std::unordered_map<uint64_t, std::pair<int32_t, int64_t>> pools;  // pool address -> device, size
};

inline constexpr size_t kMaxEchoes = size_t(1) << 16;  // echoes that never came are forgotten

uint64_t echo_key(uint64_t address, bool release) { return address << 1 | (release ? 1 : 0); }

// A hooked call the device will report too (cudaHostRegister memory it does not report).
void expect_echo(Ledger& l, uint64_t address, bool release, MemoryKind kind, uint64_t event_id) {
  if (!l.device_records || event_id == 0 || kind == MemoryKind::Registered) return;
  if (l.echoes.size() >= kMaxEchoes) l.echoes.clear();
  ++l.echoes[echo_key(address, release)];
}

bool is_echo(Ledger& l, uint64_t address, bool release) {
  const auto it = l.echoes.find(echo_key(address, release));
  if (it == l.echoes.end()) return false;
  if (--it->second == 0) l.echoes.erase(it);
  return true;
}

Ledger& ledger() {
  static Ledger* instance = new Ledger;  // leaked: hooks may run during static destruction
  return *instance;
}

size_t slot_of(int32_t device) {
  return device < 0 ? 0 : size_t(std::min(device, kMaxDevices - 1)) + 1;
}

// The OS thread id, from the thread's event buffer when it has one. A thread that never
// recorded asks the kernel only while recording: outside windows the syscall was most of the
// bookkeeping's cost (~175 ns of ~250 ns per call), and only a leak list would show it (as 0).
uint32_t current_tid() noexcept {
  if (EventCursor* cursor = tls_cursor) return static_cast<ThreadBuffer*>(cursor)->tid;
  return recording() ? uint32_t(syscall(SYS_gettid)) : 0;
}

// Under the lock: a record of this call for the window, if the session records. Device records
// come later than their time, often after recording stopped: they come only from times the
// device activity was on (it follows recording), so they are always kept.
void keep_record(Ledger& l, MemoryRecord&& record) {
  if (!recording() && !record.from_device) return;
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

void book_alloc(Ledger& l, const MemoryOp& op, uint64_t ticks, uint64_t event_id, uint32_t tid,
                bool from_device = false, uint32_t correlation = 0) {
  expect_echo(l, op.address, false, op.kind, event_id);
  Live entry{op.bytes, ticks, event_id, tid, op.device, op.kind, op.api, from_device};
  auto [it, inserted] = l.live.insert_or_assign(op.address, entry);
  (void)it;
  (void)inserted;  // an address handed out again without our seeing its free: the new one wins
  DeviceTotals& t = l.totals[slot_of(op.device)];
  t.used = true;
  t.allocated += int64_t(op.bytes);
  if (op.kind == MemoryKind::Pool) t.pool_allocated += int64_t(op.bytes);
  MemoryRecord r = record_of(op, ticks, event_id, tid);
  r.bytes = int64_t(op.bytes);
  r.from_device = from_device;
  r.correlation = correlation;
  with_totals(r, t);
  keep_record(l, std::move(r));
}

void book_free(Ledger& l, const MemoryOp& op, uint64_t ticks, uint64_t event_id, uint32_t tid,
               bool from_device = false, uint32_t correlation = 0) {
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
  expect_echo(l, op.address, true, freed.kind, event_id);
  DeviceTotals& t = l.totals[slot_of(freed.device)];
  t.allocated -= int64_t(freed.bytes);
  if (freed.kind == MemoryKind::Pool) t.pool_allocated -= int64_t(freed.bytes);
  MemoryOp as_freed = op;
  as_freed.device = freed.device;
  as_freed.kind = freed.kind;
  MemoryRecord r = record_of(as_freed, ticks, event_id, tid);
  r.bytes = -int64_t(freed.bytes);
  r.allocated_ns = freed.from_device ? 0 : freed.ticks;  // ticks; a device-booked one's is not kept
  r.from_device = from_device;
  r.correlation = correlation;
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
    apis.push_back(e.from_device ? kNoName : e.api);  // named at finish_memory (not under this lock)
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

void set_device_memory_records(bool on) noexcept {
  Ledger& l = ledger();
  std::lock_guard lock(l.mutex);
  l.device_records = on;
}

void note_device_memory(const DeviceMemoryEvent& e) noexcept {
  try {
    Ledger& l = ledger();
    std::lock_guard lock(l.mutex);
    if (is_echo(l, e.address, e.release)) return;  // a hooked call's own record: booked already
    MemoryOp op;
    op.type = e.release ? MemoryOpType::Free : MemoryOpType::Alloc;
    op.kind = e.kind;
    op.device = e.device;
    op.address = e.address;
    op.bytes = e.bytes;
    if (e.release) book_free(l, op, e.ns, 0, 0, true, e.correlation);
    else book_alloc(l, op, e.ns, 0, 0, true, e.correlation);
  } catch (...) {
    static SwallowedSite site{"out of memory in the allocation bookkeeping: a driver-level allocation is missing"};
    note_swallowed(site);
  }
}

void note_pool_reservation(const PoolReservation& pool) noexcept {
  try {
    Ledger& l = ledger();
    std::lock_guard lock(l.mutex);
    DeviceTotals& t = l.totals[slot_of(pool.device)];
    auto& [device, size] = l.pools[pool.pool];
    t.pool_reserved += int64_t(pool.reserved) - size;
    device = pool.device, size = int64_t(pool.reserved);
    t.used = true;
    if (pool.reserved == 0) l.pools.erase(pool.pool);
  } catch (...) {
    static SwallowedSite site{"out of memory in the allocation bookkeeping: a pool's size is missing"};
    note_swallowed(site);
  }
}

namespace {

void add_to_totals(std::vector<MemoryTotals>& totals, int32_t device, int64_t bytes) {
  for (MemoryTotals& t : totals) {
    if (t.device == device) return void((t.allocated += bytes, t.reserved += bytes));
  }
  totals.push_back({device, bytes, bytes});
}

// A device record moved into the window before the cut: the live list at the window's end
// follows it (a leak the library made, or a listed allocation it freed).
void follow_live(MemoryCut& cut, const Ledger& l, const MemoryRecord& r) {
  MemoryReport& m = cut.report;
  if (r.bytes < 0) {
    for (size_t i = 0; i < m.live.size(); ++i) {
      if (m.live[i].address != r.address) continue;
      m.live.erase(m.live.begin() + long(i));
      if (i < cut.live_apis.size()) cut.live_apis.erase(cut.live_apis.begin() + long(i));
      break;
    }
    m.live_count -= m.live_count > 0 ? 1 : 0;
    m.live_bytes -= std::min<uint64_t>(m.live_bytes, uint64_t(-r.bytes));
    return;
  }
  ++m.live_count, m.live_bytes += uint64_t(r.bytes);
  if (l.live.count(r.address) != 0 && m.live.size() < kMaxLiveListed) {
    m.live.push_back({r.address, uint64_t(r.bytes), r.ns, 0, 0, r.device, r.kind, {}});
    cut.live_apis.push_back(kNoName);
  }
}

}  // namespace

void absorb_device_memory(MemoryCut& cut, uint64_t end_ns) noexcept {
  if (!cut.report.enabled) return;
  try {
    Ledger& l = ledger();
    std::lock_guard lock(l.mutex);
    auto later = std::stable_partition(l.records.begin(), l.records.end(),
                                       [end_ns](const MemoryRecord& r) { return !(r.from_device && r.ns <= end_ns); });
    for (auto it = later; it != l.records.end(); ++it) {
      add_to_totals(cut.report.end, it->device, it->bytes);
      add_to_totals(l.window_start, it->device, -it->bytes);  // the next window starts after it
      follow_live(cut, l, *it);
      cut.report.records.push_back(*it);
    }
    l.records.erase(later, l.records.end());
  } catch (...) {
    static SwallowedSite site{"out of memory moving driver-level allocations into their window"};
    note_swallowed(site);
  }
}

MemoryCut cut_memory(bool keep) {
  if (!memory_tracking()) return {};
  Ledger& l = ledger();
  std::lock_guard lock(l.mutex);
  return take_window(l, keep);
}

// Device-booked records came later than the hooked calls around them: in time order, the
// totals are those of the window's start plus every record up to each one. (The hooks' own
// totals stay when records were dropped: a replay would miss the dropped ones.)
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
    if (r.allocated_ns != 0) r.allocated_ns = converter.to_ns(r.allocated_ns);
    if (!r.from_device) r.ns = converter.to_ns(r.ns);
    const auto call = r.from_device ? host_of_correlation.find(r.correlation) : host_of_correlation.end();
    if (call != host_of_correlation.end() && r.correlation != 0) r.host = call->second;
    const auto it = r.event_id != 0 ? host_of_id.find(r.event_id) : host_of_id.end();
    if (it != host_of_id.end()) r.host = it->second;
  }
  if (any_from_device) replay_totals(report);
  const std::vector<std::string> names = names_snapshot();
  for (size_t i = 0; i < report.live.size(); ++i) {
    LiveAllocation& a = report.live[i];
    const NameId id = i < cut.live_apis.size() ? cut.live_apis[i] : kNoName;
    if (id == kNoName) {
      a.api = "driver";  // booked from a device record: its time is ns already
      continue;
    }
    a.ns = converter.to_ns(a.ns);
    a.api = id < names.size() ? names[id] : std::string("?");
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
  l.echoes.clear();
  l.pools.clear();
}

void reset_memory_for_tests() noexcept {
  Ledger& l = ledger();
  std::lock_guard lock(l.mutex);
  l.live.clear();
  l.totals = {};
  l.window_start.clear();
  l.records.clear();
  l.unknown_frees = l.null_frees = l.dropped = 0;
  l.echoes.clear();
  l.pools.clear();
}

}  // namespace profagent::collector
