#include "collector/cupti_memory.h"

namespace profagent::collector {
namespace {

uint64_t agent_ns(uint64_t cupti_ns, int64_t offset_ns) {
  return cupti_ns == 0 ? 0 : uint64_t(int64_t(cupti_ns) - offset_ns);
}

bool kind_of(const CUpti_ActivityMemory4& r, MemoryKind* kind) {
  if (r.memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID) return *kind = MemoryKind::Pool, true;
  switch (r.memoryKind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return *kind = MemoryKind::Device, true;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return *kind = MemoryKind::Managed, true;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return *kind = MemoryKind::Pinned, true;
    default: return false;
  }
}

}  // namespace

bool memory_event_of(const CUpti_ActivityMemory4& r, int64_t offset_ns, DeviceMemoryEvent* out) noexcept {
  const bool allocation = r.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  const bool release = r.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  if ((!allocation && !release) || !kind_of(r, &out->kind)) return false;
  out->release = release;
  out->device = is_host_memory(out->kind) ? kHostDevice : int32_t(r.deviceId);
  out->address = r.address;
  out->bytes = r.bytes;
  out->ns = agent_ns(r.timestamp, offset_ns);
  out->correlation = r.correlationId;
  const bool local_pool = r.memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  out->pool_address = local_pool ? r.memoryPoolConfig.address : 0;
  out->pool_size = local_pool ? r.memoryPoolConfig.pool.size : 0;
  return true;
}

bool pool_reservation_of(const CUpti_ActivityMemoryPool3& r, int64_t offset_ns, PoolReservation* out) noexcept {
  switch (r.memoryPoolOperationType) {
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED:
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED: out->reserved = r.size; break;
    case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED: out->reserved = 0; break;
    default: return false;
  }
  out->pool = r.address;
  out->device = int32_t(r.deviceId);
  out->ns = agent_ns(r.timestamp, offset_ns);
  return true;
}

}  // namespace profagent::collector
