// Memory: allocation (device, pinned host, managed), registration, copies,
// sets and device symbols, with their _ptds/_ptsz twins.
#include "cudart_common.h"
#include "kernels.h"
#include "memory.h"
#include "ops.h"
#include "graph.h"
#include "pools.h"

using namespace devsim;

namespace {

cudaError_t alloc_impl(ApiScope& scope, MemKind kind, void** ptr, size_t size) {
  if (!ptr) return rt::finish(scope, cudaErrorInvalidValue);
  if (size == 0) {
    *ptr = nullptr;
    return rt::finish(scope, cudaSuccess);
  }
  return rt::finish(scope, allocate_reported(kind, current_device(), size, scope.correlation_id(), ptr));
}

cudaError_t copy_impl(ApiScope& scope, cudaStream_t stream, bool ptsz, const CopyParams& c) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  return rt::finish(scope, copy(s, c, scope.correlation_id()));
}

CopyParams linear(void* dst, const void* src, size_t count, cudaMemcpyKind kind, bool async) {
  CopyParams c;
  c.dst = dst, c.src = src, c.width = count, c.height = 1, c.dpitch = count, c.spitch = count;
  c.declared_kind = kind;
  c.async = async;
  return c;
}

CopyParams pitched(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                   size_t height, cudaMemcpyKind kind, bool async) {
  CopyParams c = linear(dst, src, width, kind, async);
  c.height = height, c.dpitch = dpitch, c.spitch = spitch;
  return c;
}

cudaError_t set_impl(ApiScope& scope, cudaStream_t stream, bool ptsz, void* dst, size_t pitch,
                     int value, size_t width, size_t height, bool async) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  return rt::finish(scope, set(s, dst, pitch, value, width, height, async, scope.correlation_id()));
}

// Device storage of a registered __device__ variable, checked against [offset, offset+count).
char* symbol_range(const void* symbol, size_t count, size_t offset, cudaError_t* err) {
  size_t size = 0;
  auto* storage = static_cast<char*>(variable_storage(symbol, &size));
  *err = !storage ? cudaErrorInvalidSymbol : offset + count > size ? cudaErrorInvalidValue : cudaSuccess;
  return storage ? storage + offset : nullptr;
}

cudaError_t to_symbol_impl(ApiScope& scope, const void* symbol, const void* src, size_t count,
                           size_t offset, cudaMemcpyKind kind, cudaStream_t stream, bool ptsz, bool async) {
  cudaError_t err;
  char* dst = symbol_range(symbol, count, offset, &err);
  if (err != cudaSuccess) return rt::finish(scope, err);
  return copy_impl(scope, stream, ptsz, linear(dst, src, count, kind, async));
}

cudaError_t from_symbol_impl(ApiScope& scope, void* dst, const void* symbol, size_t count,
                             size_t offset, cudaMemcpyKind kind, cudaStream_t stream, bool ptsz, bool async) {
  cudaError_t err;
  char* src = symbol_range(symbol, count, offset, &err);
  if (err != cudaSuccess) return rt::finish(scope, err);
  return copy_impl(scope, stream, ptsz, linear(dst, src, count, kind, async));
}

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** ptr, size_t size) {
  cudaMalloc_v3020_params params{ptr, size};
  DEVSIM_RT_CALL_P(cudaMalloc, v3020, Alloc, nullptr, &params);
  return alloc_impl(scope_, MemKind::Device, ptr, size);
}

cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int) {
  DEVSIM_RT_CALL(cudaMallocManaged, v6000, Alloc);
  return alloc_impl(scope_, MemKind::Managed, ptr, size);
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  cudaMallocHost_v3020_params params{ptr, size};
  DEVSIM_RT_CALL_P(cudaMallocHost, v3020, Alloc, nullptr, &params);
  return alloc_impl(scope_, MemKind::Pinned, ptr, size);
}

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int) {
  DEVSIM_RT_CALL(cudaHostAlloc, v3020, Alloc);
  return alloc_impl(scope_, MemKind::Pinned, ptr, size);
}

cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  DEVSIM_RT_CALL(cudaMallocPitch, v3020, Alloc);
  if (!pitch) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *pitch = (width + 511) & ~size_t{511};
  return alloc_impl(scope_, MemKind::Device, ptr, *pitch * height);
}

cudaError_t cudaFree(void* ptr) {
  DEVSIM_RT_CALL(cudaFree, v3020, Alloc);
  // Like the real cudaFree, wait for the device before memory can be reused.
  if (ptr) device_synchronize(current_device());
  if (Status st; free_graph_memory_now(ptr, scope_.correlation_id(), &st)) DEVSIM_RT_RETURN(rt::to_cuda(st));
  if (is_pool_block(ptr)) DEVSIM_RT_RETURN(pool_free_now(ptr, scope_.correlation_id()));
  DEVSIM_RT_RETURN(release_reported(ptr, MemKind::Device, scope_.correlation_id()));
}

// Queued copies may still read or write pinned memory (an async copy returns at once), so
// like the real runtime wait for the device before the pages go.
cudaError_t cudaFreeHost(void* ptr) {
  DEVSIM_RT_CALL(cudaFreeHost, v3020, Alloc);
  if (ptr) synchronize_all_devices();
  DEVSIM_RT_RETURN(release_reported(ptr, MemKind::Pinned, scope_.correlation_id()));
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int) {
  DEVSIM_RT_CALL(cudaHostRegister, v4000, Alloc);
  Status st = register_host(ptr, size);
  DEVSIM_RT_RETURN(st == Status::IllegalState ? cudaErrorHostMemoryAlreadyRegistered : rt::to_cuda(st));
}

cudaError_t cudaHostUnregister(void* ptr) {
  DEVSIM_RT_CALL(cudaHostUnregister, v4000, Alloc);
  if (ptr) synchronize_all_devices();  // as cudaFreeHost: queued copies may still use the pages
  Status st = unregister_host(ptr);
  DEVSIM_RT_RETURN(st == Status::Ok ? cudaSuccess : cudaErrorHostMemoryNotRegistered);
}

cudaError_t cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned int) {
  DEVSIM_RT_CALL(cudaHostGetDevicePointer, v3020, Light);
  if (!device_ptr || kind_of(host_ptr) != MemKind::Pinned) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *device_ptr = host_ptr;  // unified addressing: the same address on both sides
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaHostGetFlags(unsigned int* flags, void* host_ptr) {
  DEVSIM_RT_CALL(cudaHostGetFlags, v3020, Light);
  if (!flags || kind_of(host_ptr) != MemKind::Pinned) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *flags = cudaHostAllocMapped;
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  cudaMemcpy_v3020_params params{dst, src, count, kind};
  DEVSIM_RT_CALL_P(cudaMemcpy, v3020, MemcpyAsync, nullptr, &params);
  return copy_impl(scope_, nullptr, false, linear(dst, src, count, kind, false));
}

cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaMemcpy_ptds, v7000, MemcpyAsync);
  return copy_impl(scope_, nullptr, true, linear(dst, src, count, kind, false));
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  cudaMemcpyAsync_v3020_params params{dst, src, count, kind, stream};
  DEVSIM_RT_CALL_P(cudaMemcpyAsync, v3020, MemcpyAsync, nullptr, &params);
  return copy_impl(scope_, stream, false, linear(dst, src, count, kind, true));
}

cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemcpyAsync_ptsz, v7000, MemcpyAsync);
  return copy_impl(scope_, stream, true, linear(dst, src, count, kind, true));
}

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaMemcpy2D, v3020, MemcpyAsync);
  return copy_impl(scope_, nullptr, false, pitched(dst, dpitch, src, spitch, width, height, kind, false));
}

cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaMemcpy2D_ptds, v7000, MemcpyAsync);
  return copy_impl(scope_, nullptr, true, pitched(dst, dpitch, src, spitch, width, height, kind, false));
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemcpy2DAsync, v3020, MemcpyAsync);
  return copy_impl(scope_, stream, false, pitched(dst, dpitch, src, spitch, width, height, kind, true));
}

cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                   size_t height, cudaMemcpyKind kind, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemcpy2DAsync_ptsz, v7000, MemcpyAsync);
  return copy_impl(scope_, stream, true, pitched(dst, dpitch, src, spitch, width, height, kind, true));
}

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaMemcpyToSymbol, v3020, MemcpyAsync);
  return to_symbol_impl(scope_, symbol, src, count, offset, kind, nullptr, false, false);
}

cudaError_t cudaMemcpyToSymbol_ptds(const void* symbol, const void* src, size_t count, size_t offset, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaMemcpyToSymbol_ptds, v7000, MemcpyAsync);
  return to_symbol_impl(scope_, symbol, src, count, offset, kind, nullptr, true, false);
}

cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaMemcpyFromSymbol, v3020, MemcpyAsync);
  return from_symbol_impl(scope_, dst, symbol, count, offset, kind, nullptr, false, false);
}

cudaError_t cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol, size_t count, size_t offset, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaMemcpyFromSymbol_ptds, v7000, MemcpyAsync);
  return from_symbol_impl(scope_, dst, symbol, count, offset, kind, nullptr, true, false);
}

cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                    cudaMemcpyKind kind, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemcpyToSymbolAsync, v3020, MemcpyAsync);
  return to_symbol_impl(scope_, symbol, src, count, offset, kind, stream, false, true);
}

cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void* symbol, const void* src, size_t count, size_t offset,
                                         cudaMemcpyKind kind, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemcpyToSymbolAsync_ptsz, v7000, MemcpyAsync);
  return to_symbol_impl(scope_, symbol, src, count, offset, kind, stream, true, true);
}

cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemcpyFromSymbolAsync, v3020, MemcpyAsync);
  return from_symbol_impl(scope_, dst, symbol, count, offset, kind, stream, false, true);
}

cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* symbol, size_t count, size_t offset,
                                           cudaMemcpyKind kind, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemcpyFromSymbolAsync_ptsz, v7000, MemcpyAsync);
  return from_symbol_impl(scope_, dst, symbol, count, offset, kind, stream, true, true);
}

cudaError_t cudaGetSymbolAddress(void** dev_ptr, const void* symbol) {
  DEVSIM_RT_CALL(cudaGetSymbolAddress, v3020, Light);
  if (!dev_ptr) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *dev_ptr = variable_storage(symbol, nullptr);
  DEVSIM_RT_RETURN(*dev_ptr ? cudaSuccess : cudaErrorInvalidSymbol);
}

cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  DEVSIM_RT_CALL(cudaGetSymbolSize, v3020, Light);
  if (!size) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  DEVSIM_RT_RETURN(variable_storage(symbol, size) ? cudaSuccess : cudaErrorInvalidSymbol);
}

cudaError_t cudaMemset(void* dst, int value, size_t count) {
  cudaMemset_v3020_params params{dst, value, count};
  DEVSIM_RT_CALL_P(cudaMemset, v3020, MemcpyAsync, nullptr, &params);
  return set_impl(scope_, nullptr, false, dst, count, value, count, 1, false);
}

cudaError_t cudaMemset_ptds(void* dst, int value, size_t count) {
  DEVSIM_RT_CALL(cudaMemset_ptds, v7000, MemcpyAsync);
  return set_impl(scope_, nullptr, true, dst, count, value, count, 1, false);
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t count, cudaStream_t stream) {
  cudaMemsetAsync_v3020_params params{dst, value, count, stream};
  DEVSIM_RT_CALL_P(cudaMemsetAsync, v3020, MemcpyAsync, nullptr, &params);
  return set_impl(scope_, stream, false, dst, count, value, count, 1, true);
}

cudaError_t cudaMemsetAsync_ptsz(void* dst, int value, size_t count, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemsetAsync_ptsz, v7000, MemcpyAsync);
  return set_impl(scope_, stream, true, dst, count, value, count, 1, true);
}

cudaError_t cudaMemset2D(void* dst, size_t pitch, int value, size_t width, size_t height) {
  DEVSIM_RT_CALL(cudaMemset2D, v3020, MemcpyAsync);
  return set_impl(scope_, nullptr, false, dst, pitch, value, width, height, false);
}

cudaError_t cudaMemset2D_ptds(void* dst, size_t pitch, int value, size_t width, size_t height) {
  DEVSIM_RT_CALL(cudaMemset2D_ptds, v7000, MemcpyAsync);
  return set_impl(scope_, nullptr, true, dst, pitch, value, width, height, false);
}

cudaError_t cudaMemset2DAsync(void* dst, size_t pitch, int value, size_t width, size_t height, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemset2DAsync, v3020, MemcpyAsync);
  return set_impl(scope_, stream, false, dst, pitch, value, width, height, true);
}

cudaError_t cudaMemset2DAsync_ptsz(void* dst, size_t pitch, int value, size_t width, size_t height,
                                   cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemset2DAsync_ptsz, v7000, MemcpyAsync);
  return set_impl(scope_, stream, true, dst, pitch, value, width, height, true);
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attr, const void* ptr) {
  DEVSIM_RT_CALL(cudaPointerGetAttributes, v4000, Light);
  if (!attr) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  auto a = lookup(ptr);
  MemKind k = a ? a->kind : MemKind::Pageable;
  attr->type = k == MemKind::Device ? cudaMemoryTypeDevice : k == MemKind::Managed ? cudaMemoryTypeManaged
             : k == MemKind::Pinned ? cudaMemoryTypeHost : cudaMemoryTypeUnregistered;
  attr->device = a && a->device >= 0 ? a->device : 0;
  attr->devicePointer = k == MemKind::Pageable ? nullptr : const_cast<void*>(ptr);
  attr->hostPointer = k == MemKind::Device ? nullptr : const_cast<void*>(ptr);
  DEVSIM_RT_RETURN(cudaSuccess);
}

}  // extern "C"
