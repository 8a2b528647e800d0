#include "memory_report.h"

#include "api_scope.h"
#include "device.h"

namespace devsim {

MemoryRecord memory_record(CUpti_ActivityMemoryOperationType operation, MemKind kind, uintptr_t address,
                           uint64_t bytes, int device, uint32_t correlation_id) {
  MemoryRecord r{};
  r.operation = operation;
  r.memory_kind = kind == MemKind::Device    ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE
                  : kind == MemKind::Managed ? CUPTI_ACTIVITY_MEMORY_KIND_MANAGED
                  : kind == MemKind::Pinned  ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED
                                             : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  r.address = address;
  r.bytes = bytes;
  r.timestamp_ns = now_ns();
  r.correlation_id = correlation_id;
  r.device_id = static_cast<uint32_t>(device);
  r.context_id = context_id(device);
  r.stream_id = CUPTI_INVALID_STREAM_ID;
  r.pool_type = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
  return r;
}

void report_memory(const MemoryRecord& record) {
  if (Tracer* t = tracer()) t->on_memory(record);
}

void report_memory_pool(const MemoryPoolRecord& record) {
  if (Tracer* t = tracer()) t->on_memory_pool(record);
}

}  // namespace devsim
