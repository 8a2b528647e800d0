#include "collector/device_pool.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>

namespace profagent::collector {
namespace {

// Room for `needed` records, growing geometrically: reserve(size() + n) on every batch moved the
// whole pool each time. (No huge-page hint here: measured, it cost more system time than the
// faults it saved for 500 k launches, where the host-side buffers gain from it.)
template <typename T>
void grow(std::vector<T>& v, std::size_t needed) {
  if (v.capacity() < needed) v.reserve(std::max(needed, 2 * v.capacity()));
}

// A driver call that queues device work (its record carries the call's own correlation id).
bool queues_work(const DeviceRecord& call) {
  const std::string_view name = call.name;
  return name.rfind("cuLaunch", 0) == 0 || name.rfind("cuMemcpy", 0) == 0 || name.rfind("cuMemset", 0) == 0;
}

}  // namespace

bool expects_device_work(const HostEvent& event) {
  if (event.flags & (kFlagFailed | kFlagCaptured)) return false;
  switch (EventKind(event.kind)) {
    case EventKind::Launch: return true;
    case EventKind::GraphLaunch: return !(event.flags & kFlagGraphWithoutWork);
    case EventKind::Memcpy:
    case EventKind::Memset:  // the byte count (event.h: where a callback-recorded call keeps it)
      return (event.flags & kFlagCallback ? event.arg1 : event.arg0) != 0;
    default: return false;
  }
}

void DevicePool::absorb(DeviceBatch&& batch, uint32_t cuts, uint64_t now_ns) {
  for (const ExternalLink& link : batch.links) links.assign(link.correlation, {link.external_id, cuts, now_ns});
  if (records.empty()) {
    records = std::move(batch.records);  // the batch's vector becomes the pool's: no copy
  } else {
    grow(records, records.size() + batch.records.size());
    records.insert(records.end(), std::make_move_iterator(batch.records.begin()),
                   std::make_move_iterator(batch.records.end()));
  }
  grow(arrivals, records.size());
  arrivals.resize(records.size(), Arrival{cuts, now_ns});
  dropped += batch.dropped;
}

uint64_t DevicePool::forget_before(uint32_t cut, uint64_t now_ns, uint64_t min_age_ns) {
  if (cut <= kForgetCuts) return 0;
  const uint32_t oldest_kept = cut - kForgetCuts;
  auto old = [&](uint32_t after_cut, uint64_t arrived_ns) {
    return after_cut < oldest_kept && now_ns - arrived_ns >= min_age_ns;
  };
  uint64_t forgotten = 0;
  size_t kept = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    if (old(arrivals[i].after_cut, arrivals[i].ns)) {
      ++forgotten;
      continue;
    }
    if (kept != i) {
      records[kept] = std::move(records[i]);
      arrivals[kept] = arrivals[i];
    }
    ++kept;
  }
  records.resize(kept);
  arrivals.resize(kept);
  for (auto link = links.begin(); link != links.end();) {
    link = old(link->second.arrived_after_cut, link->second.arrived_ns) ? links.erase(link) : std::next(link);
  }
  links.drop_empty_pages();
  return forgotten;
}

WindowClaim::WindowClaim(HostIdMap<EventKind> kinds, HostIdSet expected,
                         FlatSet<uint32_t> expected_callback_calls, uint64_t start_ns, uint64_t end_ns, uint32_t cut)
    : kinds_(std::move(kinds)),
      start_ns_(start_ns),
      end_ns_(end_ns),
      cut_(cut),
      waiting_hosts_(std::move(expected)),
      waiting_callback_calls_(std::move(expected_callback_calls)) {}

WindowClaim::Owner WindowClaim::owner_of(const DeviceRecord& r, const DevicePool::Arrival& arrival,
                                         const LinkFound& link) {
  if (link.external_id != nullptr) return link.kind != nullptr ? Owner::Mine : Owner::Later;
  if (r.kind != DeviceKind::DriverApi && driver_calls_.count(r.correlation)) return Owner::Mine;
  // Work whose call is unknown: not this window's (a link or driver call may still come).
  if (issuers_known && r.kind != DeviceKind::DriverApi) return r.start_ns < start_ns_ ? Owner::Earlier : Owner::Later;
  // Unlinked: by time. A driver call's start is host time; other work's is device time, which
  // is after its launch, so work started before this window was launched before it too.
  if (r.start_ns < start_ns_) return Owner::Earlier;
  if (r.start_ns <= end_ns_) return Owner::Mine;
  const bool launched_before_cut = r.kind != DeviceKind::DriverApi && arrival.after_cut < cut_;
  return launched_before_cut ? Owner::Mine : Owner::Later;
}

void WindowClaim::note_taken(const DeviceRecord& record, const LinkFound& link) {
  // A record and the other records of its correlation share its link: a linked driver call's
  // work is owned by that link (owner_of never asks driver_calls_ for it), and only work linked
  // to a scope can be a scoped driver call's (work_seen_). Kept out of those sets, the usual
  // linked records cost no insert there.
  const bool in_scope = link.kind != nullptr && is_scope(*link.kind);
  if (record.kind == DeviceKind::DriverApi) {
    if (link.external_id == nullptr) driver_calls_.insert(record.correlation);
    if (in_scope && queues_work(record) && !work_seen_.count(record.correlation)) {
      waiting_driver_calls_.insert(record.correlation);
    }
  } else if (about(record.kind).work) {
    if (in_scope) work_seen_.insert(record.correlation);
    waiting_callback_calls_.erase(record.correlation);
    waiting_driver_calls_.erase(record.correlation);
    if (link.external_id != nullptr) waiting_hosts_.erase(*link.external_id);
  }
}

// The record's link in the pool, then (once it is claimed) in `links`: the same but where a
// correlation came twice (the first link claimed stays, as it always did).
WindowClaim::LinkFound WindowClaim::pool_link(const DeviceRecord& record, const DevicePool& pool) const {
  auto link = pool.links.find(record.correlation);
  if (link == pool.links.end()) return {};
  return {&link->second.external_id, kinds_.find(link->second.external_id)};
}

WindowClaim::LinkFound WindowClaim::keep_link(const DeviceRecord& record, const LinkFound& in_pool) {
  if (in_pool.external_id == nullptr) return {};
  auto [kept, inserted] = links.emplace(record.correlation, *in_pool.external_id);
  if (inserted || kept->second == *in_pool.external_id) return {&kept->second, in_pool.kind};
  return {&kept->second, kinds_.find(kept->second)};
}

void WindowClaim::claim(DevicePool& pool) {
  const size_t n = pool.records.size();
  if (n == 0) return;
  // The tables sized once for all of them, each for the records that can land in it: a driver
  // call's id goes to one, a work record's to the other. Keys land all over a table, so every
  // page of it is touched (a page fault each): a table sized for every record would fault in
  // twice the memory.
  const size_t drivers = size_t(std::count_if(pool.records.begin(), pool.records.end(),
                                              [](const DeviceRecord& r) { return r.kind == DeviceKind::DriverApi; }));
  links.reserve(links.size() + n);
  driver_calls_.reserve(driver_calls_.size() + drivers);
  work_seen_.reserve(work_seen_.size() + (n - drivers));
  // Who owns each record, driver calls first: the unlinked work they issued follows them.
  std::vector<Owner> owners(n, Owner::Later);
  size_t mine = 0;
  for (const bool drivers : {true, false}) {
    for (size_t i = 0; i < n; ++i) {
      const DeviceRecord& record = pool.records[i];
      if ((record.kind == DeviceKind::DriverApi) != drivers) continue;
      const LinkFound in_pool = pool_link(record, pool);
      owners[i] = owner_of(record, pool.arrivals[i], in_pool);
      if (owners[i] == Owner::Earlier) ++dropped_earlier;
      if (owners[i] != Owner::Mine) continue;
      note_taken(record, keep_link(record, in_pool));
      ++mine;
    }
  }
  hand_over(pool, owners, mine);
}

// Moves the claimed records into `records` in arrival order and keeps the later windows' in the
// pool; records from before this window are dropped. When the claim is empty and its records
// outnumber the later ones, the pool's vector itself becomes the claim's and the few later
// records move to a new one (the usual exit flush: one window claims everything at once, no
// record copied). Otherwise the claimed records move one by one and the rest stay where they
// are. Nothing downstream reads the order of driver calls against work (the join relates them
// by correlation id, and each kind keeps its arrival order): the CUPTI buffers interleave them,
// and putting the driver calls first made the exit flush copy every record (160 bytes each)
// into fresh memory.
void WindowClaim::hand_over(DevicePool& pool, const std::vector<Owner>& owners, size_t mine) {
  const size_t n = pool.records.size();
  const size_t later = size_t(std::count(owners.begin(), owners.end(), Owner::Later));
  if (mine > 0 && records.empty() && later <= mine) {
    std::vector<DeviceRecord> later_records;
    std::vector<DevicePool::Arrival> later_arrivals;
    later_records.reserve(later);
    later_arrivals.reserve(later);
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      if (owners[i] == Owner::Later) {
        later_records.push_back(std::move(pool.records[i]));
        later_arrivals.push_back(pool.arrivals[i]);
      }
      if (owners[i] != Owner::Mine) continue;
      if (kept != i) pool.records[kept] = std::move(pool.records[i]);
      ++kept;
    }
    pool.records.resize(kept);
    records = std::move(pool.records);
    pool.records = std::move(later_records);
    pool.arrivals = std::move(later_arrivals);
    return;
  }
  grow(records, records.size() + mine);
  for (size_t i = 0; i < n; ++i) {
    if (owners[i] == Owner::Mine) records.push_back(std::move(pool.records[i]));
  }
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (owners[i] != Owner::Later) continue;
    if (kept != i) {
      pool.records[kept] = std::move(pool.records[i]);
      pool.arrivals[kept] = pool.arrivals[i];
    }
    ++kept;
  }
  pool.records.resize(kept);
  pool.arrivals.resize(kept);
}

}  // namespace profagent::collector
