// Peer access between devices and copies between them (core/peer.h, ops.h peer_copy).
#include "cudart_common.h"
#include "ops.h"
#include "peer.h"

using namespace devsim;

namespace {

cudaError_t peer_copy_impl(ApiScope& scope, void* dst, int dst_device, const void* src, int src_device,
                           size_t count, cudaStream_t stream, bool async) {
  if (!valid_device(dst_device) || !valid_device(src_device)) return rt::finish(scope, cudaErrorInvalidDevice);
  Stream* s = rt::resolve_stream(stream, false);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  CopyParams c;
  c.dst = dst, c.src = src, c.width = count, c.dpitch = count, c.spitch = count, c.async = async;
  return rt::finish(scope, peer_copy(s, c, src_device, dst_device, scope.correlation_id()));
}

}  // namespace

extern "C" {

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags) {
  DEVSIM_RT_CALL(cudaDeviceEnablePeerAccess, v4000, Other);
  if (flags != 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);  // reserved, must be 0
  if (!peer_access_possible(current_device(), peer)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  bool changed = set_peer_access(current_device(), peer, true);
  DEVSIM_RT_RETURN(changed ? cudaSuccess : cudaErrorPeerAccessAlreadyEnabled);
}

cudaError_t cudaDeviceDisablePeerAccess(int peer) {
  DEVSIM_RT_CALL(cudaDeviceDisablePeerAccess, v4000, Other);
  if (!peer_access_possible(current_device(), peer)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  bool changed = set_peer_access(current_device(), peer, false);
  DEVSIM_RT_RETURN(changed ? cudaSuccess : cudaErrorPeerAccessNotEnabled);
}

// Ordered on the current device's legacy stream; the synchronous form returns when the bytes
// have arrived.
cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, size_t count) {
  DEVSIM_RT_CALL(cudaMemcpyPeer, v4000, MemcpyAsync);
  return peer_copy_impl(scope_, dst, dst_device, src, src_device, count, nullptr, false);
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t count,
                                cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaMemcpyPeerAsync, v4000, MemcpyAsync);
  return peer_copy_impl(scope_, dst, dst_device, src, src_device, count, stream, true);
}

}  // extern "C"
