// The allocation ledger's device half (memory_ledger.h): the device's own allocation records,
// which arrive after the calls around them (at the next drain of CUPTI's buffers, usually the
// window's join), booked at their own times.
//
// An address is reused as soon as it is freed, by whichever API: cudaMalloc/cudaFree and a
// library's cuMemAlloc/cuMemFree take turns at it, and either may free the other's memory. Only
// the device's records see all of them, in the order they happened. So while they are on and a
// window records, a hooked allocation or free books nothing itself: it is left pending
// (memory_ledger_state.h, PendingCall) for its own record — the one at its address and
// operation whose time lies within the call — and that record books it, in time order with the
// records of everything no hook sees, under the call's event, function and thread. Records are
// booked in time order per drain (cupti_records.cpp sorts them); across drains, and across
// records of different buffers, time may still run back:
//   - an allocation record older than the allocation its address holds now is an earlier life
//     of that address: counted, kept aside (displaced) until its free record comes;
//   - a free record older than the allocation its address holds now frees the displaced one;
//   - a free record of an address nothing holds waits (an orphan) for an allocation record that
//     may still come — a graph's allocation node is reported when the graph runs, from another
//     buffer than the free outside the graph.
// What the records leave unsettled by a window's join is settled there (absorb_device_memory).
#include <algorithm>
#include <limits>

#include "collector/clock.h"
#include "collector/memory_ledger.h"
#include "collector/memory_ledger_state.h"

namespace profagent::collector {
namespace {

using namespace ledger;

std::atomic<bool> g_device_records{false};

inline constexpr size_t kMaxPending = size_t(1) << 16;  // displaced allocations, orphan frees (each)
// Hooked calls waiting for their records (about 150 bytes each). Records come when CUPTI's
// buffers are read: past kFlushPendingCalls the agent's poller flushes them every 100 ms, so
// the bound is reached only when records stop coming; calls past it are booked at once.
inline constexpr size_t kMaxPendingCalls = size_t(1) << 20;
inline constexpr size_t kFlushPendingCalls = size_t(1) << 14;
// With CUPTI on the agent's clock a record's time lies within its call, hundreds of ns from its
// ends (the external id push before, the bookkeeping after); this covers the error of a clock
// domain mapped through anchors (devsim's: tens of ns), and no neighbour's record (another
// allocation at the same address needs a free between: microseconds).
inline constexpr uint64_t kSharedClockSlackNs = 100;

uint64_t call_key(uint64_t address, bool release) { return address << 1 | (release ? 1 : 0); }

bool within(const PendingCall& call, uint64_t ns, uint64_t slack) {
  if (call.op.call_ns == 0) return true;  // the call's time is unknown: by address
  return ns + slack >= call.op.call_ns && ns <= call.end_ns + slack;
}

// The pending call this record is (the first one whose time holds the record's), taken out.
// Calls are in the order they started: none after one that started later than the record can
// hold it.
bool take_pending(Ledger& l, uint64_t address, bool release, uint64_t ns, PendingCall* out) {
  const auto it = l.pending.find(call_key(address, release));
  if (it == l.pending.end()) return false;
  PendingQueue& queue = it->second;
  for (size_t i = queue.head; i < queue.calls.size(); ++i) {
    const PendingCall& call = queue.calls[i];
    if (call.op.call_ns > ns + l.match_slack_ns) break;
    if (!within(call, ns, l.match_slack_ns)) continue;
    *out = call;
    if (i == queue.head) ++queue.head;
    else queue.calls.erase(queue.calls.begin() + long(i));  // a call before it has no record yet
    --l.pending_count;
    if (queue.empty()) {
      l.pending.erase(it);
    } else if (queue.head > 64 && 2 * queue.head > queue.calls.size()) {  // give the taken ones back
      queue.calls.erase(queue.calls.begin(), queue.calls.begin() + long(queue.head));
      queue.head = 0;
    }
    return true;
  }
  return false;
}

Source device_source(uint64_t ns, uint32_t correlation) {
  Source source;
  source.ticks = source.order_ns = ns;
  source.correlation = correlation;
  source.from_device = true;
  return source;
}

// The orphan free (at or after the allocation) that ends this allocation, taken out.
bool settle_orphan(Ledger& l, uint64_t address, const Live& made) {
  auto [first, last] = l.orphans.equal_range(address);
  auto found = last;
  for (auto it = first; it != last; ++it) {
    const bool after = it->second.source.order_ns >= made.order_ns;
    if (after && (found == last || it->second.source.order_ns < found->second.source.order_ns)) found = it;
  }
  if (found == last) return false;
  count_free(l, address, made, found->second.source);
  l.orphans.erase(found);
  return true;
}

// The displaced allocation this free ends: the latest one made before it.
bool free_displaced(Ledger& l, uint64_t address, const Source& source) {
  auto [first, last] = l.displaced.equal_range(address);
  auto found = last;
  for (auto it = first; it != last; ++it) {
    const bool before = it->second.entry.order_ns <= source.order_ns;
    if (before && (found == last || it->second.entry.order_ns > found->second.entry.order_ns)) found = it;
  }
  if (found == last) return false;
  count_free(l, address, found->second.entry, source);
  l.displaced.erase(found);
  return true;
}

void add_orphan(Ledger& l, uint64_t address, const Source& source) {
  if (l.orphans.size() >= kMaxPending) return void(++l.unknown_frees);
  l.orphans.emplace(address, Orphan{source});
}

void book_device_alloc(Ledger& l, const MemoryOp& op, const Source& source) {
  const Live made = make_live(l, op, source);
  count_allocation(l, op.address, made, source);
  if (settle_orphan(l, op.address, made)) return;  // its free was read first
  const auto [it, inserted] = l.live.try_emplace(op.address, made);
  if (inserted) return;
  if (it->second.order_ns > made.order_ns) {  // the address's present allocation came later
    if (l.displaced.size() >= kMaxPending) return count_free(l, op.address, made, device_source(it->second.order_ns, 0));
    l.displaced.emplace(op.address, Displaced{made, it->second.order_ns});
    return;
  }
  displace(l, op.address, it->second, source);
  it->second = made;
}

void book_device_free(Ledger& l, uint64_t address, const Source& source) {
  const auto it = l.live.find(address);
  if (it != l.live.end() && it->second.order_ns <= source.order_ns) {
    const Live freed = it->second;
    l.live.erase(it);
    return count_free(l, address, freed, source);
  }
  if (!free_displaced(l, address, source)) add_orphan(l, address, source);
}

// A record no hooked call made: a library's cuMemAlloc, a graph's allocation node.
void book_device_record(Ledger& l, const DeviceMemoryEvent& e) {
  const Source source = device_source(e.ns, e.correlation);
  if (e.release) return book_device_free(l, e.address, source);
  MemoryOp op;
  op.kind = e.kind;
  op.device = e.device;
  op.address = e.address;
  op.bytes = e.bytes;
  book_device_alloc(l, op, source);
}

// Records held for calls in flight that no call still in flight can claim (every one started
// after them): booked as the device's, in order.
void release_unclaimed(Ledger& l) {
  if (l.unclaimed.empty()) return;
  const uint64_t first_in_flight = l.in_flight.empty() ? UINT64_MAX : *l.in_flight.begin();
  std::vector<DeviceMemoryEvent> held = std::move(l.unclaimed);
  l.unclaimed = {};
  for (const DeviceMemoryEvent& e : held) {
    if (e.ns + l.match_slack_ns < first_in_flight) book_device_record(l, e);
    else l.unclaimed.push_back(e);
  }
}

// The record a call booked now claims among those held for calls in flight, taken out.
bool claim_unclaimed(Ledger& l, const PendingCall& call, DeviceMemoryEvent* out) {
  const bool release = call.op.type == MemoryOpType::Free;
  for (auto it = l.unclaimed.begin(); it != l.unclaimed.end(); ++it) {
    if (it->address != call.op.address || it->release != release || !within(call, it->ns, l.match_slack_ns)) continue;
    *out = *it;
    l.unclaimed.erase(it);
    return true;
  }
  return false;
}

// A hooked call, at its record's time (or its own, from the join when the record never came).
void book_call(Ledger& l, const PendingCall& call, Source source) {
  source.event_id = call.event_id, source.tid = call.tid;
  if (call.op.type == MemoryOpType::Free) return book_device_free(l, call.op.address, source);
  book_device_alloc(l, call.op, source);
}

// Calls made before the cut whose records never came (CUPTI dropped them, or its activity was
// not on yet): booked from the calls, in their order.
void book_unreported_calls(Ledger& l, uint32_t cut, uint64_t end_ns) {
  std::vector<PendingCall> unreported;
  for (auto it = l.pending.begin(); it != l.pending.end();) {
    std::vector<PendingCall>& calls = it->second.calls;
    calls.erase(calls.begin(), calls.begin() + long(it->second.head));
    it->second.head = 0;
    const auto later = std::stable_partition(calls.begin(), calls.end(), [cut](const PendingCall& c) { return c.cut < cut; });
    unreported.insert(unreported.end(), calls.begin(), later);
    calls.erase(calls.begin(), later);
    it = calls.empty() ? l.pending.erase(it) : std::next(it);
  }
  l.pending_count -= std::min(l.pending_count, unreported.size());
  std::stable_sort(unreported.begin(), unreported.end(),
                   [](const PendingCall& a, const PendingCall& b) { return a.op.call_ns < b.op.call_ns; });
  for (const PendingCall& call : unreported) {
    book_call(l, call, device_source(call.op.call_ns != 0 ? call.op.call_ns : end_ns, 0));
  }
}

void add_to_totals(std::vector<MemoryTotals>& totals, int32_t device, int64_t bytes) {
  for (MemoryTotals& t : totals) {
    if (t.device == device) return void((t.allocated += bytes, t.reserved += bytes));
  }
  totals.push_back({device, bytes, bytes});
}

// A device record moved into the window before the cut: the live list at the window's end
// follows it (a leak the library made, or a listed allocation it freed), by allocation number.
void follow_live(MemoryCut& cut, const Ledger& l, const MemoryRecord& r) {
  MemoryReport& m = cut.report;
  if (r.failed) return;
  if (r.bytes < 0) {
    const auto listed = std::find_if(cut.live_sources.begin(), cut.live_sources.end(),
                                     [&r](const MemoryCut::LiveSource& s) { return s.serial == r.allocation; });
    if (listed != cut.live_sources.end()) {
      m.live.erase(m.live.begin() + long(listed - cut.live_sources.begin()));
      cut.live_sources.erase(listed);
    }
    m.live_count -= m.live_count > 0 ? 1 : 0;
    m.live_bytes -= std::min<uint64_t>(m.live_bytes, uint64_t(-r.bytes));
    return;
  }
  ++m.live_count, m.live_bytes += uint64_t(r.bytes);
  const auto now = l.live.find(r.address);
  if (now != l.live.end() && now->second.serial == r.allocation && m.live.size() < kMaxLiveListed) {
    m.live.push_back({r.address, uint64_t(r.bytes), r.ns, r.event_id, r.tid, r.device, r.kind, {}, {}});
    cut.live_sources.push_back({now->second.api, r.allocation, true});
  }
}

// Allocations whose address was handed out again by `end_ns` were freed by then, unseen.
void settle_displaced(Ledger& l, uint64_t end_ns) {
  for (auto it = l.displaced.begin(); it != l.displaced.end();) {
    if (it->second.at_ns > end_ns) {
      ++it;
      continue;
    }
    count_free(l, it->first, it->second.entry, device_source(it->second.at_ns, 0));
    it = l.displaced.erase(it);
  }
}

// Frees up to `end_ns` whose allocation never came were frees of unknown memory.
uint64_t settle_orphans(Ledger& l, uint64_t end_ns) {
  uint64_t unknown = 0;
  for (auto it = l.orphans.begin(); it != l.orphans.end();) {
    if (it->second.source.order_ns > end_ns) {
      ++it;
      continue;
    }
    ++unknown;
    it = l.orphans.erase(it);
  }
  return unknown;
}

// Records booked after the cut that belong to the window (device time up to its end) move into
// it; those before its start (a discarded warmup's) only move its totals.
void move_into_window(Ledger& l, MemoryCut& cut, uint64_t start_ns, uint64_t end_ns) {
  auto later = std::stable_partition(l.records.begin(), l.records.end(),
                                     [end_ns](const MemoryRecord& r) { return !(r.from_device && r.ns <= end_ns); });
  MemoryReport& report = cut.report;
  for (auto it = later; it != l.records.end(); ++it) {
    add_to_totals(report.end, it->device, it->bytes);
    add_to_totals(l.window_start, it->device, it->bytes);  // the next window starts after it
    follow_live(cut, l, *it);
    if (it->ns < start_ns) add_to_totals(report.start, it->device, it->bytes);
    else if (report.records.size() < report.record_capacity) report.records.push_back(*it);
    else ++report.dropped_records;
  }
  l.records.erase(later, l.records.end());
}

}  // namespace

namespace ledger {

void displace(Ledger& l, uint64_t address, const Live& entry, const Source& by) {
  Source freed_by = by;  // a free nobody was seen making
  freed_by.event_id = 0, freed_by.tid = 0, freed_by.correlation = 0;
  if (!l.device_records || l.displaced.size() >= kMaxPending) return count_free(l, address, entry, freed_by);
  l.displaced.emplace(address, Displaced{entry, by.order_ns});
}

bool leave_to_device_record(Ledger& l, const MemoryOp& op, const Source& source) {
  // cudaHostRegister memory is not reported by the device; a call outside windows has no record.
  if (!l.device_records || source.event_id == 0 || op.kind == MemoryKind::Registered) return false;
  if (l.pending_count >= kMaxPendingCalls) return false;  // records not coming: booked by the hook
  PendingCall call;
  call.op = op;
  call.end_ns = op.call_ns != 0 ? clock::monotonic_ns() : 0;
  call.ticks = source.ticks;
  call.event_id = source.event_id;
  call.tid = source.tid;
  call.cut = l.cuts;
  DeviceMemoryEvent record;
  if (claim_unclaimed(l, call, &record)) {  // read before the call was booked
    book_call(l, call, device_source(record.ns, record.correlation));
    return true;
  }
  l.pending[call_key(op.address, op.type == MemoryOpType::Free)].calls.push_back(call);
  ++l.pending_count;
  return true;
}

void call_ended(Ledger& l, const MemoryOp& op) noexcept {
  if (op.call_ns == 0) return;
  const auto it = l.in_flight.find(op.call_ns);
  if (it != l.in_flight.end()) l.in_flight.erase(it);
}

void call_booked(Ledger& l, const MemoryOp& op) {
  call_ended(l, op);
  release_unclaimed(l);
}

void free_unknown_later(Ledger& l, uint64_t address, const Source& source) {
  Source idle = source;
  idle.order_ns = clock::monotonic_ns();
  add_orphan(l, address, idle);
}

void clear_device_record_state(Ledger& l) {
  l.in_flight.clear();
  l.unclaimed.clear();
  l.pending.clear();
  l.pending_count = 0;
  l.displaced.clear();
  l.orphans.clear();
  l.pools.clear();
}

}  // namespace ledger

bool device_memory_records_wanted() noexcept {
  Ledger& l = state();
  std::lock_guard lock(l.mutex);
  return l.pending_count >= kFlushPendingCalls;
}

uint64_t memory_call_starts() noexcept {
  if (!g_device_records.load(std::memory_order_relaxed)) return 0;
  try {
    Ledger& l = state();
    std::lock_guard lock(l.mutex);
    const uint64_t start = clock::monotonic_ns();  // under the lock: in_flight is in start order
    l.in_flight.insert(start);
    return start;
  } catch (...) {
    return 0;  // out of memory: the call is matched by address alone
  }
}

void set_device_memory_records(bool on, bool shared_clock) noexcept {
  Ledger& l = state();
  std::lock_guard lock(l.mutex);
  l.device_records = on;
  // Without the agent's clock in CUPTI, records are matched to calls by address alone.
  l.match_slack_ns = shared_clock ? kSharedClockSlackNs : std::numeric_limits<uint64_t>::max() / 4;
  g_device_records.store(on && shared_clock, std::memory_order_relaxed);
}

void note_device_memory(const DeviceMemoryEvent& e) noexcept {
  try {
    Ledger& l = state();
    std::lock_guard lock(l.mutex);
    PendingCall call;
    if (take_pending(l, e.address, e.release, e.ns, &call)) return book_call(l, call, device_source(e.ns, e.correlation));
    // A call that started before this record is still in flight: the record may be its own.
    if (!l.in_flight.empty() && *l.in_flight.begin() <= e.ns + l.match_slack_ns) return l.unclaimed.push_back(e);
    book_device_record(l, e);
  } catch (...) {
    static SwallowedSite site{"out of memory in the allocation bookkeeping: a driver-level allocation is missing"};
    note_swallowed(site);
  }
}

void note_pool_reservation(const PoolReservation& pool) noexcept {
  try {
    Ledger& l = state();
    std::lock_guard lock(l.mutex);
    DeviceTotals& t = totals_of(l, pool.device);
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

void absorb_device_memory(MemoryCut& cut, uint64_t start_ns, uint64_t end_ns) noexcept {
  if (!cut.report.enabled) return;
  try {
    Ledger& l = state();
    std::lock_guard lock(l.mutex);
    // A call in flight since before the window began never reached its booking (cancelled
    // inside the runtime): it holds no record back any more.
    l.in_flight.erase(l.in_flight.begin(), l.in_flight.lower_bound(start_ns));
    release_unclaimed(l);
    book_unreported_calls(l, cut.cut, end_ns);
    settle_displaced(l, end_ns);
    cut.report.unknown_frees += settle_orphans(l, end_ns);
    move_into_window(l, cut, start_ns, end_ns);
  } catch (...) {
    static SwallowedSite site{"out of memory moving driver-level allocations into their window"};
    note_swallowed(site);
  }
}

}  // namespace profagent::collector
