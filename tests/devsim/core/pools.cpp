#include "pools.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "device.h"
#include "memory.h"
#include "memory_report.h"

namespace devsim {

struct Block {
  size_t size = 0;             // what the pool reserved for it (256-byte multiple)
  bool in_use = false;
  const Stream* freed_on = nullptr;
  OpRef free_point;            // the stream position of its cudaFreeAsync; null: free completed
};

struct Pool {
  int device = 0;
  bool is_default = false;
  bool live = true;
  uint64_t release_threshold = 0;  // the real runtime's default: release everything at a sync
  bool follow_event_dependencies = true;
  bool allow_opportunistic = true;
  bool allow_internal_dependencies = true;
  uint64_t reserved = 0, reserved_high = 0, used = 0, used_high = 0;
  std::map<uintptr_t, Block> blocks;
  int access[kMaxDevices] = {};
};

namespace {

struct Pools {
  std::mutex mutex;  // before the registry's lock; no tracer call or device wait under it
  std::vector<Pool*> all;                        // every pool ever created (leaked: handles stay valid)
  Pool* defaults[kMaxDevices] = {};
  Pool* current[kMaxDevices] = {};
  std::unordered_map<uintptr_t, Pool*> owner;   // block base -> pool
};

Pools& pools() {
  static Pools* p = new Pools;  // leaked: outlives static destructors
  return *p;
}

size_t round_up(size_t size) { return (size == 0 ? 1 : size + 255) & ~size_t{255}; }

uint64_t address_of(const Pool* pool) { return reinterpret_cast<uintptr_t>(pool); }

Pool* new_pool_locked(Pools& ps, int device, bool is_default) {
  auto* pool = new Pool;
  pool->device = device;
  pool->is_default = is_default;
  pool->access[device] = kPoolAccessReadWrite;
  ps.all.push_back(pool);
  return pool;
}

Pool* default_pool_locked(Pools& ps, int device) {
  if (ps.defaults[device] == nullptr) ps.defaults[device] = new_pool_locked(ps, device, true);
  return ps.defaults[device];
}

bool live_locked(const Pools& ps, const Pool* pool) {
  return pool != nullptr && std::find(ps.all.begin(), ps.all.end(), pool) != ps.all.end() && pool->live;
}

bool free_completed(const Block& b) { return !b.free_point || b.free_point->done.load(); }

// A free block an allocation on s may take: freed on s (stream order), or its free is done.
bool reusable(const Pool& pool, const Block& b, const Stream* s) {
  if (b.in_use) return false;
  return b.freed_on == s || (pool.allow_opportunistic && free_completed(b));
}

std::map<uintptr_t, Block>::iterator best_fit_locked(Pool& pool, size_t size, const Stream* s) {
  auto best = pool.blocks.end();
  for (auto it = pool.blocks.begin(); it != pool.blocks.end(); ++it) {
    const Block& b = it->second;
    if (b.size < size || !reusable(pool, b, s)) continue;
    if (best == pool.blocks.end() || b.size < best->second.size) best = it;
  }
  return best;
}

void take_locked(Pool& pool, Block& b) {
  b.in_use = true;
  b.freed_on = nullptr;
  b.free_point.reset();
  pool.used += b.size;
  pool.used_high = std::max(pool.used_high, pool.used);
}

// Gives completed free blocks back to the device until at most `keep` bytes stay reserved.
void release_down_to_locked(Pools& ps, Pool& pool, uint64_t keep) {
  for (auto it = pool.blocks.begin(); it != pool.blocks.end() && pool.reserved > keep;) {
    if (it->second.in_use || !free_completed(it->second)) {
      ++it;
      continue;
    }
    pool.reserved -= it->second.size;
    ps.owner.erase(it->first);
    release(reinterpret_cast<void*>(it->first), MemKind::Device);
    it = pool.blocks.erase(it);
  }
}

Status reserve_block_locked(Pools& ps, Pool& pool, size_t size, void** out) {
  Status st = allocate(MemKind::Device, pool.device, size, out);
  if (st == Status::OutOfMemory) {  // the real runtime gives back what it can before failing
    release_down_to_locked(ps, pool, 0);
    st = allocate(MemKind::Device, pool.device, size, out);
  }
  if (st != Status::Ok) return st;
  auto base = reinterpret_cast<uintptr_t>(*out);
  pool.blocks[base].size = size;
  ps.owner[base] = &pool;
  pool.reserved += size;
  pool.reserved_high = std::max(pool.reserved_high, pool.reserved);
  return Status::Ok;
}

void fill_pool_fields(const Pool& pool, MemoryRecord& r) {
  r.pool_type = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  r.pool_address = address_of(&pool);
  r.pool_release_threshold = pool.release_threshold;
  r.pool_size = pool.reserved;
  r.pool_utilized_size = pool.used;
}

MemoryPoolRecord pool_record(const Pool& pool, CUpti_ActivityMemoryPoolOperationType op, uint32_t cid) {
  MemoryPoolRecord r{};
  r.operation = op;
  r.pool_type = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  r.address = address_of(&pool);
  r.release_threshold = pool.release_threshold;
  r.size = pool.reserved;
  r.utilized_size = pool.used;
  r.timestamp_ns = now_ns();
  r.correlation_id = cid;
  r.device_id = static_cast<uint32_t>(pool.device);
  return r;
}

// The pool and block of a pointer cudaMallocAsync returned, or nulls.
Block* find_block_locked(Pools& ps, const void* ptr, Pool** pool) {
  auto owner = ps.owner.find(reinterpret_cast<uintptr_t>(ptr));
  if (owner == ps.owner.end()) return nullptr;
  *pool = owner->second;
  return &(*pool)->blocks.at(owner->first);
}

MemoryRecord release_record_locked(const Pool& pool, const Block& b, const void* ptr, uint32_t cid) {
  MemoryRecord r = memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE, MemKind::Device,
                                 reinterpret_cast<uintptr_t>(ptr), b.size, pool.device, cid);
  fill_pool_fields(pool, r);
  return r;
}

}  // namespace

Pool* default_pool(int device) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mutex);
  return default_pool_locked(ps, device);
}

Pool* current_pool(int device) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mutex);
  return ps.current[device] ? ps.current[device] : default_pool_locked(ps, device);
}

Status set_current_pool(int device, Pool* pool) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mutex);
  if (!live_locked(ps, pool)) return Status::InvalidHandle;
  if (pool->device != device) return Status::InvalidDevice;
  ps.current[device] = pool;
  return Status::Ok;
}

bool pool_live(const Pool* pool) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mutex);
  return live_locked(ps, pool);
}

int pool_device(const Pool* pool) { return pool->device; }

Status create_pool(int device, uint32_t correlation_id, Pool** out) {
  if (out == nullptr) return Status::InvalidValue;
  Pools& ps = pools();
  MemoryPoolRecord record;
  {
    std::lock_guard lock(ps.mutex);
    *out = new_pool_locked(ps, device, false);
    record = pool_record(**out, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED, correlation_id);
  }
  report_memory_pool(record);
  return Status::Ok;
}

Status destroy_pool(Pool* pool, uint32_t correlation_id) {
  Pools& ps = pools();
  MemoryPoolRecord record;
  {
    std::lock_guard lock(ps.mutex);
    if (!live_locked(ps, pool)) return Status::InvalidHandle;
    if (pool->is_default) return Status::InvalidValue;
    pool->live = false;
    pool->release_threshold = 0;  // blocks still in use go back to the device when freed
    if (ps.current[pool->device] == pool) ps.current[pool->device] = nullptr;
    release_down_to_locked(ps, *pool, 0);
    record = pool_record(*pool, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED, correlation_id);
  }
  report_memory_pool(record);
  return Status::Ok;
}

Status pool_allocate(Pool* pool, size_t size, Stream* s, uint32_t correlation_id, void** out) {
  if (out == nullptr) return Status::InvalidValue;
  Pools& ps = pools();
  MemoryRecord record;
  {
    std::lock_guard lock(ps.mutex);
    if (!live_locked(ps, pool)) return Status::InvalidHandle;
    const size_t rounded = round_up(size);
    auto fit = best_fit_locked(*pool, rounded, s);
    if (fit == pool->blocks.end()) {
      Status st = reserve_block_locked(ps, *pool, rounded, out);
      if (st != Status::Ok) return st;
      fit = pool->blocks.find(reinterpret_cast<uintptr_t>(*out));
    }
    take_locked(*pool, fit->second);
    *out = reinterpret_cast<void*>(fit->first);
    record = memory_record(CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION, MemKind::Device, fit->first,
                           size, pool->device, correlation_id);
    fill_pool_fields(*pool, record);
  }
  record.stream_id = s->id;
  record.is_async = 1;
  report_memory(record);
  return Status::Ok;
}

Status pool_free_async(void* ptr, Stream* s, uint32_t correlation_id) {
  Pools& ps = pools();
  MemoryRecord record;
  OpRef free_point = make_op(OpType::Marker, s, correlation_id);
  {
    std::lock_guard lock(ps.mutex);
    Pool* pool = nullptr;
    Block* b = find_block_locked(ps, ptr, &pool);
    if (b == nullptr || !b->in_use) return Status::InvalidValue;
    b->in_use = false;
    b->freed_on = s;
    b->free_point = free_point;
    pool->used -= b->size;
    record = release_record_locked(*pool, *b, ptr, correlation_id);
  }
  Status st = enqueue(s, free_point);
  record.stream_id = s->id;
  record.is_async = 1;
  report_memory(record);
  return st;
}

Status pool_free_now(void* ptr, uint32_t correlation_id) {
  Pools& ps = pools();
  MemoryRecord record;
  {
    std::lock_guard lock(ps.mutex);
    Pool* pool = nullptr;
    Block* b = find_block_locked(ps, ptr, &pool);
    if (b == nullptr || !b->in_use) return Status::InvalidValue;
    b->in_use = false;
    pool->used -= b->size;
    record = release_record_locked(*pool, *b, ptr, correlation_id);
    if (!pool->live) release_down_to_locked(ps, *pool, 0);
  }
  report_memory(record);
  return Status::Ok;
}

bool is_pool_block(const void* ptr) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mutex);
  return ps.owner.count(reinterpret_cast<uintptr_t>(ptr)) != 0;
}

Status trim_pool(Pool* pool, size_t min_bytes_to_keep, uint32_t correlation_id) {
  Pools& ps = pools();
  MemoryPoolRecord record;
  {
    std::lock_guard lock(ps.mutex);
    if (!live_locked(ps, pool)) return Status::InvalidHandle;
    release_down_to_locked(ps, *pool, min_bytes_to_keep);
    record = pool_record(*pool, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED, correlation_id);
    record.min_bytes_to_keep = min_bytes_to_keep;
  }
  report_memory_pool(record);
  return Status::Ok;
}

void release_pools_over_threshold(int device) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mutex);
  for (Pool* pool : ps.all) {
    if (pool->device == device) release_down_to_locked(ps, *pool, pool->release_threshold);
  }
}

Status pool_get_attribute(const Pool* pool, PoolAttr attr, uint64_t* value) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mutex);
  if (!live_locked(ps, pool)) return Status::InvalidHandle;
  if (value == nullptr) return Status::InvalidValue;
  switch (attr) {
    case PoolAttr::ReuseFollowEventDependencies: *value = pool->follow_event_dependencies; break;
    case PoolAttr::ReuseAllowOpportunistic: *value = pool->allow_opportunistic; break;
    case PoolAttr::ReuseAllowInternalDependencies: *value = pool->allow_internal_dependencies; break;
    case PoolAttr::ReleaseThreshold: *value = pool->release_threshold; break;
    case PoolAttr::ReservedMemCurrent: *value = pool->reserved; break;
    case PoolAttr::ReservedMemHigh: *value = pool->reserved_high; break;
    case PoolAttr::UsedMemCurrent: *value = pool->used; break;
    case PoolAttr::UsedMemHigh: *value = pool->used_high; break;
  }
  return Status::Ok;
}

Status pool_set_attribute(Pool* pool, PoolAttr attr, uint64_t value) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mutex);
  if (!live_locked(ps, pool)) return Status::InvalidHandle;
  switch (attr) {
    case PoolAttr::ReuseFollowEventDependencies: pool->follow_event_dependencies = value != 0; break;
    case PoolAttr::ReuseAllowOpportunistic: pool->allow_opportunistic = value != 0; break;
    case PoolAttr::ReuseAllowInternalDependencies: pool->allow_internal_dependencies = value != 0; break;
    case PoolAttr::ReleaseThreshold: pool->release_threshold = value; break;
    case PoolAttr::ReservedMemHigh:  // writing 0 resets a high watermark to the current value
      if (value != 0) return Status::InvalidValue;
      pool->reserved_high = pool->reserved;
      break;
    case PoolAttr::UsedMemHigh:
      if (value != 0) return Status::InvalidValue;
      pool->used_high = pool->used;
      break;
    default: return Status::InvalidValue;  // the current counters are read-only
  }
  return Status::Ok;
}

Status pool_set_access(Pool* pool, int device, int flags) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mutex);
  if (!live_locked(ps, pool)) return Status::InvalidHandle;
  if (!valid_device(device)) return Status::InvalidDevice;
  if (flags != kPoolAccessNone && flags != 1 && flags != kPoolAccessReadWrite) return Status::InvalidValue;
  // The owning device always keeps read-write access; CUDA refuses to take it away.
  if (device == pool->device && flags != kPoolAccessReadWrite) return Status::InvalidDevice;
  pool->access[device] = flags;
  return Status::Ok;
}

Status pool_get_access(const Pool* pool, int device, int* flags) {
  Pools& ps = pools();
  std::lock_guard lock(ps.mutex);
  if (!live_locked(ps, pool)) return Status::InvalidHandle;
  if (!valid_device(device)) return Status::InvalidDevice;
  if (flags == nullptr) return Status::InvalidValue;
  *flags = pool->access[device];
  return Status::Ok;
}

}  // namespace devsim
