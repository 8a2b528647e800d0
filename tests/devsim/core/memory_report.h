// MEMORY2 and MEMORY_POOL reports to the tracer, built where memory is allocated and freed.
#pragma once

#include <cstdint>

#include "devsim.h"

namespace devsim {

// A record of a synchronous (not stream-ordered) operation on `device`; the caller fills the
// stream and pool fields of stream-ordered and pool operations.
MemoryRecord memory_record(CUpti_ActivityMemoryOperationType operation, MemKind kind, uintptr_t address,
                           uint64_t bytes, int device, uint32_t correlation_id);
// Both are no-ops without a tracer. Call them with no model lock held.
void report_memory(const MemoryRecord& record);
void report_memory_pool(const MemoryPoolRecord& record);

}  // namespace devsim
