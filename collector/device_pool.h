// Device records waiting for the window that issued them (internal to the collector).
//
// A window is cut at a step boundary, but the device may still be running what the window
// queued: its records come from CUPTI later, possibly after the next window was cut. So records
// are not handed to whichever window is cut next. They wait in this pool, and each window's
// join claims exactly the records whose launch it holds:
//   - linked records (CUPTI correlation -> the external id a hook or a range pushed) go to the
//     window holding that host event, and to no other window;
//   - unlinked DRIVER records (a library's cuLaunchKernel outside any range) go to the window
//     whose time span holds the call, and their work follows them by correlation id;
//   - other unlinked work was issued by a call no window recorded (one of an idle step, or one
//     that began while recording was being switched on), or its link has not been read yet:
//     it goes to no window while it may still be linked, and is dropped once old (below). Only
//     where the device backend cannot name every issuing call (no CUPTI callbacks and no
//     DRIVER records) does it go by time instead, to the first window joined after it started.
// Every record and link carries the number of cuts made when it arrived, and when. Joins run in
// cut order, and a call usually belongs to the window after the last cut before it returned,
// so what arrived several cuts before the window being joined is normally unclaimable: a warmup
// step's work, or work whose window already counted it as late. It is dropped once it is both
// kForgetCuts cuts and min_age_ns old: a thread held up inside one launch call (preempted while
// boundaries go by on other threads) commits its call into a later window than its record's
// arrival suggests, and the age bound keeps its record for it.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collector/correlation_map.h"
#include "collector/device_backend.h"
#include "collector/event.h"
#include "collector/flat_map.h"
#include "collector/host_id_map.h"

namespace profagent::collector {

struct DevicePool {
  struct Arrival {
    uint32_t after_cut = 0;
    uint64_t ns = 0;
  };
  struct Link {
    uint64_t external_id = 0;
    uint32_t arrived_after_cut = 0;
    uint64_t arrived_ns = 0;
  };
  static constexpr uint32_t kForgetCuts = 4;
  // Parallel arrays: records[i] arrived as arrivals[i]. The records stay one plain vector so
  // that a drained batch can become the pool, and the pool a window's claim, without copying
  // each record (~160 B) twice at the exit flush.
  std::vector<DeviceRecord> records;
  std::vector<Arrival> arrivals;
  CorrelationMap<Link> links;  // CUPTI correlation -> external id (every recorded call's)
  uint64_t dropped = 0;                      // the device library's drops, for the next window

  void absorb(DeviceBatch&& batch, uint32_t cuts, uint64_t now_ns);
  // After the join of cut `cut` (see above). Returns how many records were dropped.
  uint64_t forget_before(uint32_t cut, uint64_t now_ns, uint64_t min_age_ns);
};

// What one window's join claims from the pool, poll after poll.
class WindowClaim {
 public:
  // `kinds`: the window's host events that device work may link to (id -> kind); `expected`:
  // those of them that queued device work (expects_device_work); `expected_callback_calls`: the
  // CUPTI correlations of callback-recorded calls that queued device work; [start_ns, end_ns]:
  // the window on the agent clock; `cut`: the number of the cut that ended it.
  WindowClaim(HostIdMap<EventKind> kinds, HostIdSet expected,
              FlatSet<uint32_t> expected_callback_calls, uint64_t start_ns, uint64_t end_ns, uint32_t cut);

  // Moves the window's records out of `pool` (called under the session mutex).
  void claim(DevicePool& pool);

  // Device-work calls of the window (launches, copies, sets) still without a record.
  uint64_t missing() const {
    return waiting_hosts_.size() + waiting_callback_calls_.size() + waiting_driver_calls_.size();
  }

  std::vector<DeviceRecord> records;
  FlatMap<uint32_t, uint64_t> links;  // of the claimed records (correlation -> external id)
  uint64_t dropped_earlier = 0;  // unlinked records from before the window (warmup, idle)
  // The backend names the call behind every record (DeviceBackend::issuers_known): work
  // without a link or a driver call is then never claimed by its time.
  bool issuers_known = false;

 private:
  enum class Owner : uint8_t { Mine, Later, Earlier };
  // What the pool's link of a record says, looked up once per record per poll: its external id
  // (nullptr: no link) and that id's kind in this window (nullptr: not one of its events).
  struct LinkFound {
    const uint64_t* external_id = nullptr;
    const EventKind* kind = nullptr;
  };
  Owner owner_of(const DeviceRecord& record, const DevicePool::Arrival& arrival, const LinkFound& link);
  // The bookkeeping of claiming `record` (what the window still waits for); the caller moves it.
  // `link`: the claim's own link of the record (as `links` holds it).
  void note_taken(const DeviceRecord& record, const LinkFound& link);
  LinkFound pool_link(const DeviceRecord& record, const DevicePool& pool) const;
  // Adds a claimed record's pool link to `links`; returns the link `links` holds for it.
  LinkFound keep_link(const DeviceRecord& record, const LinkFound& in_pool);
  void hand_over(DevicePool& pool, const std::vector<Owner>& owners, size_t mine);

  HostIdMap<EventKind> kinds_;
  uint64_t start_ns_;
  uint64_t end_ns_;
  uint32_t cut_;
  HostIdSet waiting_hosts_;  // host ids expecting device work
  FlatSet<uint32_t> waiting_callback_calls_;  // CUPTI correlations still without work
  FlatSet<uint32_t> waiting_driver_calls_;   // correlations of driver launches
  FlatSet<uint32_t> driver_calls_;           // claimed driver calls without a link (by correlation)
  FlatSet<uint32_t> work_seen_;              // correlations with claimed work linked to a scope
};

// Whether a host event is a call that queues device work CUPTI reports (so its window waits
// for that record): a launch, graph launch (of a graph with a kernel, copy or set node), copy
// or set that succeeded, was not captured into a graph, and (copies, sets) moves at least one
// byte.
bool expects_device_work(const HostEvent& event);

}  // namespace profagent::collector
