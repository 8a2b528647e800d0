// Unified (managed) memory: the advice a program gave a cudaMallocManaged allocation, where it
// last prefetched it and which stream it is attached to, and the prefetch as a timed transfer.
//
// Advice and prefetch locations are kept per allocation, not per page: advice given for part
// of an allocation applies to all of it, and a range query answers for the allocation that
// contains the range's start.
#pragma once

#include <cstddef>
#include <cstdint>

#include "devsim.h"
#include "timeline.h"

namespace devsim {

// cudaMemLocationType numbering: 0 none, 1 a device (id = ordinal), 2 the host.
struct MemLocation {
  int type = 0;
  int id = 0;
};

enum class Advice : uint8_t { SetReadMostly = 1, UnsetReadMostly, SetPreferredLocation, UnsetPreferredLocation,
                              SetAccessedBy, UnsetAccessedBy };

struct ManagedState {
  bool read_mostly = false;
  MemLocation preferred;        // type 0 when unset
  MemLocation last_prefetch;    // type 0 before the first prefetch
  uint32_t accessed_by = 0;     // bit per device
  bool accessed_by_host = false;
  unsigned attach_flags = 1;    // cudaMemAttachGlobal
};

// InvalidValue unless [ptr, ptr + count) lies inside one managed allocation (count 0: the
// whole allocation).
Status check_managed_range(const void* ptr, size_t count);
Status advise(const void* ptr, size_t count, Advice advice, MemLocation location);
ManagedState managed_state(const void* ptr);
// A transfer of the range to `location` on stream s: bytes at the host-to-device (or
// device-to-host) bandwidth on that copy engine, or the copy floor when the data is already
// there. It carries no activity record (devsim writes no unified-memory counter records).
Status prefetch(const void* ptr, size_t count, MemLocation location, Stream* s, uint32_t correlation_id);
// cudaStreamAttachMemAsync: stream-ordered, so a marker on s; the flags are kept.
// Drops what was kept about an allocation that is being freed.
void forget_managed(const void* base);
Status attach(const void* ptr, size_t length, unsigned flags, Stream* s, uint32_t correlation_id);

}  // namespace devsim
