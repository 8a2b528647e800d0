// Unified memory (core/managed.h): prefetch, advice, stream attachment and range attributes.
#include "cudart_common.h"
#include "managed.h"

using namespace devsim;

namespace {

MemLocation to_location(const cudaMemLocation& l) {
  return MemLocation{l.type == cudaMemLocationTypeDevice ? 1 : l.type == cudaMemLocationTypeHost ? 2 : 0, l.id};
}

// The legacy int form of a location: a device ordinal, cudaCpuDeviceId or cudaInvalidDeviceId.
int legacy_device(MemLocation l) { return l.type == 1 ? l.id : l.type == 2 ? cudaCpuDeviceId : cudaInvalidDeviceId; }

int location_type(MemLocation l) {
  return l.type == 1 ? cudaMemLocationTypeDevice : l.type == 2 ? cudaMemLocationTypeHost : cudaMemLocationTypeInvalid;
}

// cudaMemRangeAttributeAccessedBy: the devices with the advice, then cudaInvalidDeviceId.
void fill_accessed_by(const ManagedState& s, int* out, size_t slots) {
  size_t n = 0;
  if (s.accessed_by_host && n < slots) out[n++] = cudaCpuDeviceId;
  for (int d = 0; d < device_count() && n < slots; ++d) {
    if (s.accessed_by & (1u << d)) out[n++] = d;
  }
  while (n < slots) out[n++] = cudaInvalidDeviceId;
}

cudaError_t range_attribute(void* data, size_t size, cudaMemRangeAttribute attr, const void* ptr, size_t count) {
  if (!data || size < sizeof(int) || size % sizeof(int) != 0) return cudaErrorInvalidValue;
  if (check_managed_range(ptr, count) != Status::Ok) return cudaErrorInvalidValue;
  const ManagedState s = managed_state(ptr);
  auto* out = static_cast<int*>(data);
  if (attr == cudaMemRangeAttributeAccessedBy) {
    fill_accessed_by(s, out, size / sizeof(int));
    return cudaSuccess;
  }
  if (size != sizeof(int)) return cudaErrorInvalidValue;
  switch (attr) {
    case cudaMemRangeAttributeReadMostly: *out = s.read_mostly ? 1 : 0; break;
    case cudaMemRangeAttributePreferredLocation: *out = legacy_device(s.preferred); break;
    case cudaMemRangeAttributeLastPrefetchLocation: *out = legacy_device(s.last_prefetch); break;
    case cudaMemRangeAttributePreferredLocationType: *out = location_type(s.preferred); break;
    case cudaMemRangeAttributePreferredLocationId: *out = s.preferred.id; break;
    case cudaMemRangeAttributeLastPrefetchLocationType: *out = location_type(s.last_prefetch); break;
    case cudaMemRangeAttributeLastPrefetchLocationId: *out = s.last_prefetch.id; break;
    default: return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

[[maybe_unused]] cudaError_t prefetch_impl(ApiScope& scope, const void* ptr, size_t count, cudaMemLocation location,
                          unsigned flags, cudaStream_t stream, bool ptsz) {
  if (flags != 0) return rt::finish(scope, cudaErrorInvalidValue);
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  return rt::finish(scope, prefetch(ptr, count, to_location(location), s, scope.correlation_id()));
}

cudaError_t attach_impl(ApiScope& scope, cudaStream_t stream, void* ptr, size_t length, unsigned flags, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  return rt::finish(scope, attach(ptr, length, flags, s, scope.correlation_id()));
}

}  // namespace

extern "C" {

// CUDA 12 exported these names with an int device instead of a cudaMemLocation; the CUDA 12
// runtime built here leaves them out rather than answer a different ABI.
#if DEVSIM_CUDART_MAJOR >= 13
cudaError_t cudaMemPrefetchAsync(const void* ptr, size_t count, cudaMemLocation location, unsigned int flags,
                                 cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemPrefetchAsync, v12020, MemcpyAsync);
  return prefetch_impl(scope_, ptr, count, location, flags, stream, false);
}

cudaError_t cudaMemPrefetchAsync_ptsz(const void* ptr, size_t count, cudaMemLocation location, unsigned int flags,
                                      cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemPrefetchAsync_ptsz, v12020, MemcpyAsync);
  return prefetch_impl(scope_, ptr, count, location, flags, stream, true);
}

cudaError_t cudaMemAdvise(const void* ptr, size_t count, cudaMemoryAdvise advice, cudaMemLocation location) {
  DEVSIM_RT_CALL(cudaMemAdvise, v12020, Other);
  if (advice < cudaMemAdviseSetReadMostly || advice > cudaMemAdviseUnsetAccessedBy) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  DEVSIM_RT_RETURN(advise(ptr, count, static_cast<Advice>(advice), to_location(location)));
}
#endif

cudaError_t cudaStreamAttachMemAsync(cudaStream_t stream, void* ptr, size_t length, unsigned int flags) {
  DEVSIM_RT_CALL(cudaStreamAttachMemAsync, v6000, Other);
  return attach_impl(scope_, stream, ptr, length, flags, false);
}

cudaError_t cudaStreamAttachMemAsync_ptsz(cudaStream_t stream, void* ptr, size_t length, unsigned int flags) {
  DEVSIM_RT_CALL(cudaStreamAttachMemAsync_ptsz, v7000, Other);
  return attach_impl(scope_, stream, ptr, length, flags, true);
}

cudaError_t cudaMemRangeGetAttribute(void* data, size_t data_size, cudaMemRangeAttribute attr, const void* ptr,
                                     size_t count) {
  DEVSIM_RT_CALL(cudaMemRangeGetAttribute, v8000, Light);
  DEVSIM_RT_RETURN(range_attribute(data, data_size, attr, ptr, count));
}

cudaError_t cudaMemRangeGetAttributes(void** data, size_t* data_sizes, cudaMemRangeAttribute* attrs, size_t n,
                                      const void* ptr, size_t count) {
  DEVSIM_RT_CALL(cudaMemRangeGetAttributes, v8000, Light);
  if (n == 0 || !data || !data_sizes || !attrs) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  for (size_t i = 0; i < n; ++i) {
    if (cudaError_t err = range_attribute(data[i], data_sizes[i], attrs[i], ptr, count)) DEVSIM_RT_RETURN(err);
  }
  DEVSIM_RT_RETURN(cudaSuccess);
}

}  // extern "C"
