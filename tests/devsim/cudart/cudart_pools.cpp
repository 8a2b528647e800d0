// Stream-ordered allocation and memory pools (core/pools.h): cudaMallocAsync, cudaFreeAsync,
// cudaMallocFromPoolAsync (and their _ptsz twins), pool creation, attributes, access, trimming
// and the device's current pool, under both their CUDA 11.2 and CUDA 13 names.
#include "cudart_common.h"
#include "graph.h"
#include "pools.h"

using namespace devsim;

namespace {

Pool* pool_of(cudaMemPool_t handle) { return reinterpret_cast<Pool*>(handle); }
cudaMemPool_t handle_of(Pool* pool) { return reinterpret_cast<cudaMemPool_t>(pool); }

cudaError_t malloc_from_pool(ApiScope& scope, void** ptr, size_t size, Pool* pool, cudaStream_t stream, bool ptsz) {
  if (!ptr) return rt::finish(scope, cudaErrorInvalidValue);
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  if (size == 0) {
    *ptr = nullptr;
    return rt::finish(scope, cudaSuccess);
  }
  Status st = pool_allocate(pool, size, s, scope.correlation_id(), ptr);
  return rt::finish(scope, st == Status::InvalidHandle ? cudaErrorInvalidValue : rt::to_cuda(st));
}

cudaError_t free_async(ApiScope& scope, void* ptr, cudaStream_t stream, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  if (!ptr) return rt::finish(scope, cudaSuccess);
  if (Status st; free_graph_memory_async(ptr, s, scope.correlation_id(), &st)) {
    return rt::finish(scope, rt::to_cuda(st));
  }
  return rt::finish(scope, pool_free_async(ptr, s, scope.correlation_id()));
}

// A pinned device location, the only kind of pool devsim models; otherwise the error to return.
cudaError_t device_location(const cudaMemLocation* location, cudaMemAllocationType type, int* device) {
  if (!location) return cudaErrorInvalidValue;
  if (location->type != cudaMemLocationTypeDevice || type != cudaMemAllocationTypePinned) {
    return cudaErrorNotSupported;
  }
  if (!valid_device(location->id)) return cudaErrorInvalidDevice;
  *device = location->id;
  return cudaSuccess;
}

bool to_pool_attr(cudaMemPoolAttr attr, PoolAttr* out) {
  switch (attr) {
    case cudaMemPoolReuseFollowEventDependencies: *out = PoolAttr::ReuseFollowEventDependencies; return true;
    case cudaMemPoolReuseAllowOpportunistic: *out = PoolAttr::ReuseAllowOpportunistic; return true;
    case cudaMemPoolReuseAllowInternalDependencies: *out = PoolAttr::ReuseAllowInternalDependencies; return true;
    case cudaMemPoolAttrReleaseThreshold: *out = PoolAttr::ReleaseThreshold; return true;
    case cudaMemPoolAttrReservedMemCurrent: *out = PoolAttr::ReservedMemCurrent; return true;
    case cudaMemPoolAttrReservedMemHigh: *out = PoolAttr::ReservedMemHigh; return true;
    case cudaMemPoolAttrUsedMemCurrent: *out = PoolAttr::UsedMemCurrent; return true;
    case cudaMemPoolAttrUsedMemHigh: *out = PoolAttr::UsedMemHigh; return true;
    default: return false;
  }
}

// The reuse policies are ints; the threshold and the counters are cuuint64_t.
bool is_int_attr(PoolAttr a) { return a <= PoolAttr::ReuseAllowInternalDependencies; }

cudaError_t pool_status(Status st) { return st == Status::InvalidHandle ? cudaErrorInvalidValue : rt::to_cuda(st); }

}  // namespace

extern "C" {

cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMallocAsync, v11020, Alloc);
  return malloc_from_pool(scope_, ptr, size, current_pool(current_device()), stream, false);
}

cudaError_t cudaMallocAsync_ptsz(void** ptr, size_t size, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMallocAsync_ptsz, v11020, Alloc);
  return malloc_from_pool(scope_, ptr, size, current_pool(current_device()), stream, true);
}

cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMallocFromPoolAsync, v11020, Alloc);
  return malloc_from_pool(scope_, ptr, size, pool_of(pool), stream, false);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMallocFromPoolAsync_ptsz, v11020, Alloc);
  return malloc_from_pool(scope_, ptr, size, pool_of(pool), stream, true);
}

cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaFreeAsync, v11020, MemcpyAsync);
  return free_async(scope_, ptr, stream, false);
}

cudaError_t cudaFreeAsync_ptsz(void* ptr, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaFreeAsync_ptsz, v11020, MemcpyAsync);
  return free_async(scope_, ptr, stream, true);
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
  DEVSIM_RT_CALL(cudaMemPoolCreate, v11020, Alloc);
  if (!pool || !props) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  int device = 0;
  if (cudaError_t err = device_location(&props->location, props->allocType, &device)) DEVSIM_RT_RETURN(err);
  Pool* created = nullptr;
  Status st = create_pool(device, scope_.correlation_id(), &created);
  *pool = handle_of(created);
  DEVSIM_RT_RETURN(st);
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
  DEVSIM_RT_CALL(cudaMemPoolDestroy, v11020, Alloc);
  DEVSIM_RT_RETURN(pool_status(destroy_pool(pool_of(pool), scope_.correlation_id())));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t min_bytes_to_keep) {
  DEVSIM_RT_CALL(cudaMemPoolTrimTo, v11020, Other);
  DEVSIM_RT_RETURN(pool_status(trim_pool(pool_of(pool), min_bytes_to_keep, scope_.correlation_id())));
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  DEVSIM_RT_CALL(cudaMemPoolSetAttribute, v11020, Light);
  PoolAttr a;
  if (!value || !to_pool_attr(attr, &a)) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  uint64_t v = is_int_attr(a) ? uint64_t(*static_cast<int*>(value)) : *static_cast<uint64_t*>(value);
  DEVSIM_RT_RETURN(pool_status(pool_set_attribute(pool_of(pool), a, v)));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
  DEVSIM_RT_CALL(cudaMemPoolGetAttribute, v11020, Light);
  PoolAttr a;
  if (!value || !to_pool_attr(attr, &a)) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  uint64_t v = 0;
  Status st = pool_get_attribute(pool_of(pool), a, &v);
  if (st == Status::Ok && is_int_attr(a)) *static_cast<int*>(value) = int(v);
  if (st == Status::Ok && !is_int_attr(a)) *static_cast<uint64_t*>(value) = v;
  DEVSIM_RT_RETURN(pool_status(st));
}

cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc* descs, size_t count) {
  DEVSIM_RT_CALL(cudaMemPoolSetAccess, v11020, Other);
  if (!descs && count > 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  for (size_t i = 0; i < count; ++i) {
    if (descs[i].location.type != cudaMemLocationTypeDevice) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
    Status st = pool_set_access(pool_of(pool), descs[i].location.id, int(descs[i].flags));
    if (st != Status::Ok) DEVSIM_RT_RETURN(pool_status(st));
  }
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaMemPoolGetAccess(cudaMemAccessFlags* flags, cudaMemPool_t pool, cudaMemLocation* location) {
  DEVSIM_RT_CALL(cudaMemPoolGetAccess, v11020, Light);
  if (!flags || !location || location->type != cudaMemLocationTypeDevice) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  int f = 0;
  Status st = pool_get_access(pool_of(pool), location->id, &f);
  if (st == Status::Ok) *flags = static_cast<cudaMemAccessFlags>(f);
  DEVSIM_RT_RETURN(pool_status(st));
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  DEVSIM_RT_CALL(cudaDeviceGetDefaultMemPool, v11020, Light);
  if (!pool) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!valid_device(device)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  *pool = handle_of(default_pool(device));
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
  DEVSIM_RT_CALL(cudaDeviceGetMemPool, v11020, Light);
  if (!pool) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!valid_device(device)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  *pool = handle_of(current_pool(device));
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
  DEVSIM_RT_CALL(cudaDeviceSetMemPool, v11020, Light);
  if (!valid_device(device)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  DEVSIM_RT_RETURN(pool_status(set_current_pool(device, pool_of(pool))));
}

cudaError_t cudaMemGetDefaultMemPool(cudaMemPool_t* pool, cudaMemLocation* location, cudaMemAllocationType type) {
  DEVSIM_RT_CALL(cudaMemGetDefaultMemPool, v13000, Light);
  int device = 0;
  if (!pool) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (cudaError_t err = device_location(location, type, &device)) DEVSIM_RT_RETURN(err);
  *pool = handle_of(default_pool(device));
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaMemGetMemPool(cudaMemPool_t* pool, cudaMemLocation* location, cudaMemAllocationType type) {
  DEVSIM_RT_CALL(cudaMemGetMemPool, v13000, Light);
  int device = 0;
  if (!pool) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (cudaError_t err = device_location(location, type, &device)) DEVSIM_RT_RETURN(err);
  *pool = handle_of(current_pool(device));
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaMemSetMemPool(cudaMemLocation* location, cudaMemAllocationType type, cudaMemPool_t pool) {
  DEVSIM_RT_CALL(cudaMemSetMemPool, v13000, Light);
  int device = 0;
  if (cudaError_t err = device_location(location, type, &device)) DEVSIM_RT_RETURN(err);
  DEVSIM_RT_RETURN(pool_status(set_current_pool(device, pool_of(pool))));
}

}  // extern "C"
