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
// cuMemCreate/cuMemMap, a pool allocation at the driver level — is booked here, at its own time.
void set_device_memory_records(bool on) noexcept;
void note_device_memory(const DeviceMemoryEvent& event) noexcept;
void note_pool_reservation(const PoolReservation& pool) noexcept;

// The window's memory part at a cut: records up to now (raw ticks in MemoryRecord::ns until
// converted), totals at the previous cut and now, live allocations. Everything after the cut
// belongs to the next window. `keep` false (a discarded warmup window) returns an empty report.
struct MemoryCut {
  MemoryReport report;
  std::vector<NameId> live_apis;  // the allocating function of each report.live entry
};
MemoryCut cut_memory(bool keep);

// At the join, after the window's device records were drained: device-booked records up to
// `end_ns` (they came after the cut) join the window, its end totals and live list.
void absorb_device_memory(MemoryCut& cut, uint64_t end_ns) noexcept;

// Converts a cut's ticks to ns, links each record to its call in `trace.host` and moves the
// report into `trace.memory`.
void finish_memory(MemoryCut&& cut, const clock::TickConverter& converter, Trace& trace);

// Forked child: the parent's live allocations are the parent's.
void forget_memory_in_child() noexcept;

// Tests: forget everything booked.
void reset_memory_for_tests() noexcept;

}  // namespace profagent::collector
