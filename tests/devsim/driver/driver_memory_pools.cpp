// Stream-ordered allocation, pools and pinned host memory through the driver API, for
// libraries that allocate with cuMemAllocAsync (core/pools.h) or cuMemAllocHost.
#include "driver_common.h"
#include "device.h"
#include "memory.h"
#include "pools.h"
#include "timeline.h"

using namespace devsim;

namespace {

Pool* pool_of(CUmemoryPool handle) { return reinterpret_cast<Pool*>(handle); }

CUresult pool_result(Status st) { return st == Status::InvalidHandle ? CUDA_ERROR_INVALID_VALUE : drv::to_cu(st); }

CUresult alloc_async(ApiScope& scope, CUdeviceptr* ptr, size_t bytes, Pool* pool, CUstream stream, bool ptsz) {
  if (!ptr || bytes == 0) return drv::finish(scope, CUDA_ERROR_INVALID_VALUE);
  Stream* s = stream_from_handle(stream, ptsz);
  if (!s) return drv::finish(scope, CUDA_ERROR_INVALID_HANDLE);
  void* p = nullptr;
  Status st = pool_allocate(pool, bytes, s, scope.correlation_id(), &p);
  *ptr = reinterpret_cast<CUdeviceptr>(p);
  return drv::finish(scope, pool_result(st));
}

CUresult free_async(ApiScope& scope, CUdeviceptr ptr, CUstream stream, bool ptsz) {
  Stream* s = stream_from_handle(stream, ptsz);
  if (!s) return drv::finish(scope, CUDA_ERROR_INVALID_HANDLE);
  return drv::finish(scope, pool_free_async(reinterpret_cast<void*>(ptr), s, scope.correlation_id()));
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* ptr, size_t bytes, CUstream stream) {
  DEVSIM_CU_CALL(cuMemAllocAsync, Alloc, nullptr);
  return alloc_async(scope_, ptr, bytes, current_pool(current_device()), stream, false);
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr* ptr, size_t bytes, CUstream stream) {
  DEVSIM_CU_CALL(cuMemAllocAsync_ptsz, Alloc, nullptr);
  return alloc_async(scope_, ptr, bytes, current_pool(current_device()), stream, true);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr* ptr, size_t bytes, CUmemoryPool pool, CUstream stream) {
  DEVSIM_CU_CALL(cuMemAllocFromPoolAsync, Alloc, nullptr);
  return alloc_async(scope_, ptr, bytes, pool_of(pool), stream, false);
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  DEVSIM_CU_CALL(cuMemFreeAsync, MemcpyAsync, nullptr);
  return free_async(scope_, ptr, stream, false);
}

CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr ptr, CUstream stream) {
  DEVSIM_CU_CALL(cuMemFreeAsync_ptsz, MemcpyAsync, nullptr);
  return free_async(scope_, ptr, stream, true);
}

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
  DEVSIM_CU_CALL(cuMemPoolCreate, Alloc, nullptr);
  if (!pool || !props) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED || props->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    DEVSIM_CU_RETURN(CUDA_ERROR_NOT_SUPPORTED);
  }
  if (!valid_device(props->location.id)) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_DEVICE);
  Pool* created = nullptr;
  Status st = create_pool(props->location.id, scope_.correlation_id(), &created);
  *pool = reinterpret_cast<CUmemoryPool>(created);
  DEVSIM_CU_RETURN(st);
}

CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool) {
  DEVSIM_CU_CALL(cuMemPoolDestroy, Alloc, nullptr);
  DEVSIM_CU_RETURN(pool_result(destroy_pool(pool_of(pool), scope_.correlation_id())));
}

CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t min_bytes_to_keep) {
  DEVSIM_CU_CALL(cuMemPoolTrimTo, Other, nullptr);
  DEVSIM_CU_RETURN(pool_result(trim_pool(pool_of(pool), min_bytes_to_keep, scope_.correlation_id())));
}

CUresult CUDAAPI cuMemAllocHost_v2(void** ptr, size_t bytes) {
  DEVSIM_CU_CALL(cuMemAllocHost_v2, Alloc, nullptr);
  if (!ptr || bytes == 0) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  DEVSIM_CU_RETURN(allocate_reported(MemKind::Pinned, current_device(), bytes, scope_.correlation_id(), ptr));
}

// As cudaFreeHost: queued copies may still use the pages.
CUresult CUDAAPI cuMemFreeHost(void* ptr) {
  DEVSIM_CU_CALL(cuMemFreeHost, Alloc, nullptr);
  if (ptr) synchronize_all_devices();
  DEVSIM_CU_RETURN(release_reported(ptr, MemKind::Pinned, scope_.correlation_id()));
}

}  // extern "C"
