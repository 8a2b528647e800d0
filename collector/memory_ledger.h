// The allocation ledger (PROFAGENT_PROFILE_MEMORY): every allocation and free the allocation
// hooks report (collector/api.h note_memory()), booked whether or not a window records, so the
// totals per device are right at every point of every window — also when the memory was
// allocated during idle steps. A free the ledger does not know (memory allocated before the
// agent loaded, a double free) changes no total: it is counted, never made negative.
//
// While the session records, each booked call also leaves a record (with the totals right
// after it) for the current window. Those records are bounded: at most `record_capacity` per
// window (set from PROFAGENT_BUFFER_MB); beyond it records are counted as dropped while the
// totals stay exact. The live-allocation map grows with the program's live allocations only
// (about 100 bytes each).
//
// Totals: "allocated" = bytes of live allocations of the device; "reserved" = what the device
// has given out for them: live allocations outside pools, plus what the device's pools hold
// (the larger of their live allocations and their reserved size as the device last reported it,
// note_pool_reserved()). Host memory (device -1) reserves what it allocates.
//
// Lock: one leaf mutex, never held across a CUDA, CUPTI or loader call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collector/api.h"
#include "collector/clock.h"
#include "collector/cupti_memory.h"
#include "collector/trace.h"

namespace profagent::collector {

// Bounds the records one window keeps (0: none kept, only totals). Before start; tests may call it again.
void configure_memory_records(size_t max_records) noexcept;

// The device's allocation records (CUPTI MEMORY2 / MEMORY_POOL, collector/cupti_memory.h).
// While they are on, every allocation and free a hook books while recording expects its echo
// among them: that echo is dropped (counted once). Any other record — a library's cuMemAlloc,
// cuMemCreate/cuMemMap, a pool allocation at the driver level, a graph's allocation node — is
// booked here, at its own time. Records arrive later than the calls around them, so each is
// placed by time: an echo is the record at the call's address whose time lies within the call
// (with `shared_clock`, CUPTI stamps records with the agent's clock; without it, by address
// alone), and an allocation or free at an address that a later allocation holds by now belongs
// to that address's earlier life (memory_ledger_state.h).
void set_device_memory_records(bool on, bool shared_clock = true) noexcept;
void note_device_memory(const DeviceMemoryEvent& event) noexcept;
// True when many hooked calls wait for their records: the poller then flushes CUPTI's buffers
// (their records come only when a buffer is full or flushed).
bool device_memory_records_wanted() noexcept;
void note_pool_reservation(const PoolReservation& pool) noexcept;

// The window's memory part at a cut: records up to now (raw ticks in MemoryRecord::ns until
// converted), totals at the previous cut and now, live allocations. Everything after the cut
// belongs to the next window. `keep` false (a discarded warmup window) returns an empty report.
struct MemoryCut {
  // Where a report.live entry came from: its allocating function (kNoName: none seen), the
  // ledger's number of the allocation, and whether its time is ns already (a device record's).
  struct LiveSource {
    NameId api = kNoName;
    uint64_t serial = 0;
    bool in_ns = false;
  };
  MemoryReport report;
  std::vector<LiveSource> live_sources;  // one per report.live entry
  uint32_t cut = 0;                      // cuts up to and including this one
};
MemoryCut cut_memory(bool keep);

// At the join, after the window's device records were drained: device-booked records up to
// `end_ns` (they came after the cut) join the window, its end totals and live list. What the
// records could not settle by then is settled here: an allocation whose address was handed out
// again before `end_ns` was freed unseen by then (a free record at that time), and a free up to
// `end_ns` whose allocation never came was a free of unknown memory.
void absorb_device_memory(MemoryCut& cut, uint64_t start_ns, uint64_t end_ns) noexcept;

// Converts a cut's ticks to ns, links each record to its call in `trace.host` and moves the
// report into `trace.memory`.
void finish_memory(MemoryCut&& cut, const clock::TickConverter& converter, Trace& trace);

// A streamed window's memory records booked since `cursor` (copies, ns still in ticks): the
// window's records come whole with its tail, but their calls may be written in earlier
// segments, so the segments' fold joins each record with its call there too (its table's
// memory columns, and where the call was: agent/streamed_table.h). A call is booked before
// its host event is committed, so the records of every call a segment took are read by the
// time that segment is folded. A cut (a new window) starts the count again.
struct MemoryCallCursor {
  uint32_t cuts = 0;
  size_t next = 0;
};
void memory_records_since(MemoryCallCursor& cursor, std::vector<MemoryRecord>& records);

// Forked child: the parent's live allocations are the parent's.
void forget_memory_in_child() noexcept;

// Tests: forget everything booked.
void reset_memory_for_tests() noexcept;

}  // namespace profagent::collector
