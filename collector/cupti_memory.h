// CUPTI's allocation records (CUPTI_ACTIVITY_KIND_MEMORY2: CUpti_ActivityMemory4, and
// CUPTI_ACTIVITY_KIND_MEMORY_POOL: CUpti_ActivityMemoryPool3) as the allocation ledger books
// them (collector/memory_ledger.h): what libraries allocate at the driver level (cuMemAlloc,
// cuMemCreate/cuMemMap, pools) reaches the ledger only this way. Enabled with
// PROFAGENT_PROFILE_MEMORY.
#pragma once

#include <cupti_activity.h>

#include <cstdint>

#include "collector/event.h"

namespace profagent::collector {

struct DeviceMemoryEvent {
  bool release = false;        // RELEASE, else ALLOCATION
  MemoryKind kind = MemoryKind::Device;
  int32_t device = 0;          // kHostDevice for pinned host memory
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t ns = 0;             // agent clock
  uint32_t correlation = 0;    // the API call's CUPTI correlation id
  // A local pool's allocation: the pool and what it holds from the device after the record
  // (pool_address 0 otherwise). Pools grow on allocation without a MEMORY_POOL record.
  uint64_t pool_address = 0;
  uint64_t pool_size = 0;
};

// False for records the ledger has no use for (unknown operation or memory kind).
bool memory_event_of(const CUpti_ActivityMemory4& record, int64_t offset_ns, DeviceMemoryEvent* out) noexcept;

struct PoolReservation {
  uint64_t pool = 0;           // the pool's address
  int32_t device = 0;
  uint64_t reserved = 0;       // what the pool holds from the device after the record
  uint64_t ns = 0;
};
// Pool creation, destruction or trim: the pool's size after it. False for other records.
bool pool_reservation_of(const CUpti_ActivityMemoryPool3& record, int64_t offset_ns, PoolReservation* out) noexcept;

}  // namespace profagent::collector
