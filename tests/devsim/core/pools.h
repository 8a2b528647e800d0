// Stream-ordered memory pools (cudaMemPool_t): each device's default pool, pools the program
// creates, block reuse in stream order, release down to the release threshold at a
// synchronisation, trimming, and the used/reserved counters the real runtime reports.
//
// A pool holds blocks: device allocations of the registry (memory.h), so they count as used
// device memory (cudaMemGetInfo, DEVSIM_MEMORY_MB) for as long as the pool holds them, in use
// or free. A block freed with cudaFreeAsync on stream S may be handed out again at once to an
// allocation on S (stream order makes that safe), and to any stream once the free has been
// reached on the device (the real cudaMemPoolReuseAllowOpportunistic).
//
// Lock: one pool mutex, taken before the registry's leaf lock, never held while calling the
// tracer or waiting for the device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "devsim.h"
#include "timeline.h"

namespace devsim {

struct Pool;

enum class PoolAttr : uint8_t {
  ReuseFollowEventDependencies,
  ReuseAllowOpportunistic,
  ReuseAllowInternalDependencies,
  ReleaseThreshold,
  ReservedMemCurrent,
  ReservedMemHigh,
  UsedMemCurrent,
  UsedMemHigh,
};

// cudaMemAccessFlags numbering: 0 none, 1 read, 3 read-write.
constexpr int kPoolAccessNone = 0;
constexpr int kPoolAccessReadWrite = 3;

Pool* default_pool(int device);
Pool* current_pool(int device);               // cudaDeviceGetMemPool: default until set
Status set_current_pool(int device, Pool* pool);
bool pool_live(const Pool* pool);
int pool_device(const Pool* pool);

Status create_pool(int device, uint32_t correlation_id, Pool** out);
// Blocks still in use keep their memory until freed; the pool's free blocks go at once.
Status destroy_pool(Pool* pool, uint32_t correlation_id);

// cudaMallocAsync / cudaMallocFromPoolAsync on stream s.
Status pool_allocate(Pool* pool, size_t size, Stream* s, uint32_t correlation_id, void** out);
// cudaFreeAsync: the block returns to its pool when s reaches this point.
Status pool_free_async(void* ptr, Stream* s, uint32_t correlation_id);
// cudaFree of a pool block (the caller has synchronised the device first).
Status pool_free_now(void* ptr, uint32_t correlation_id);
bool is_pool_block(const void* ptr);

// cudaMemPoolTrimTo: releases free blocks whose free has completed until at most
// min_bytes_to_keep stay reserved.
Status trim_pool(Pool* pool, size_t min_bytes_to_keep, uint32_t correlation_id);
// After a host synchronisation with a device: each of its pools releases completed free
// blocks down to its release threshold, as the real runtime does.
void release_pools_over_threshold(int device);

Status pool_get_attribute(const Pool* pool, PoolAttr attr, uint64_t* value);
// Counters are read-only, except that the high watermarks may be reset by writing 0.
Status pool_set_attribute(Pool* pool, PoolAttr attr, uint64_t value);
Status pool_set_access(Pool* pool, int device, int flags);
Status pool_get_access(const Pool* pool, int device, int* flags);

}  // namespace devsim
