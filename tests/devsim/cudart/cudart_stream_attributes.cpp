// Stream attributes (stored per stream and read back; the model's scheduling does not act on
// them), cudaStreamGetDevice, and the per-thread stream-capture mode.
#include <map>
#include <mutex>

#include "cudart_common.h"

using namespace devsim;

namespace {

// The attribute ids CUDA documents as valid for streams.
bool is_stream_attribute(cudaStreamAttrID attr) {
  switch (attr) {
    case cudaStreamAttributeAccessPolicyWindow: case cudaStreamAttributeSynchronizationPolicy:
    case cudaStreamAttributePriority: case cudaStreamAttributeMemSyncDomainMap:
    case cudaStreamAttributeMemSyncDomain:
      return true;
    default:
      return false;
  }
}

// Values set per stream. Model streams are never freed (destroyed ones keep their few bytes),
// so a Stream* is never reused for another stream. The lock guards only this table.
std::mutex g_attributes_mutex;
std::map<const Stream*, std::map<int, cudaStreamAttrValue>>& attributes() {
  static auto* table = new std::map<const Stream*, std::map<int, cudaStreamAttrValue>>;
  return *table;
}

// What a stream reports before anything was set: the priority it was created with, the
// automatic synchronisation policy, zeros for the rest.
cudaStreamAttrValue default_value(const Stream* s, cudaStreamAttrID attr) {
  cudaStreamAttrValue value{};
  if (attr == cudaStreamAttributePriority) value.priority = s->priority;
  if (attr == cudaStreamAttributeSynchronizationPolicy) value.syncPolicy = cudaSyncPolicyAuto;
  return value;
}

cudaError_t get_attribute_impl(ApiScope& scope, cudaStream_t stream, cudaStreamAttrID attr,
                               cudaStreamAttrValue* value, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  if (!value || !is_stream_attribute(attr)) return rt::finish(scope, cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(g_attributes_mutex);
  const auto& set = attributes()[s];
  auto it = set.find(attr);
  *value = it != set.end() ? it->second : default_value(s, attr);
  return rt::finish(scope, cudaSuccess);
}

cudaError_t set_attribute_impl(ApiScope& scope, cudaStream_t stream, cudaStreamAttrID attr,
                               const cudaStreamAttrValue* value, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  if (!value || !is_stream_attribute(attr)) return rt::finish(scope, cudaErrorInvalidValue);
  std::lock_guard<std::mutex> lock(g_attributes_mutex);
  attributes()[s][attr] = *value;
  return rt::finish(scope, cudaSuccess);
}

cudaError_t copy_attributes_impl(ApiScope& scope, cudaStream_t dst, cudaStream_t src, bool ptsz) {
  Stream* to = rt::resolve_stream(dst, ptsz);
  Stream* from = rt::resolve_stream(src, ptsz);
  if (!to || !from) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  std::lock_guard<std::mutex> lock(g_attributes_mutex);
  attributes()[to] = attributes()[from];
  return rt::finish(scope, cudaSuccess);
}

cudaError_t get_device_impl(ApiScope& scope, cudaStream_t stream, int* device, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  if (!device) return rt::finish(scope, cudaErrorInvalidValue);
  *device = s->device;
  return rt::finish(scope, cudaSuccess);
}

// cudaStreamCaptureModeGlobal (0) until the thread exchanges it. Kept and handed back; the
// model does not refuse the calls a mode would make unsafe during a capture.
__thread int t_capture_mode = cudaStreamCaptureModeGlobal;

}  // namespace

extern "C" {

cudaError_t cudaStreamGetAttribute(cudaStream_t stream, cudaStreamAttrID attr, cudaStreamAttrValue* value) {
  DEVSIM_RT_CALL(cudaStreamGetAttribute, v11000, Light);
  return get_attribute_impl(scope_, stream, attr, value, false);
}

cudaError_t cudaStreamGetAttribute_ptsz(cudaStream_t stream, cudaStreamAttrID attr, cudaStreamAttrValue* value) {
  DEVSIM_RT_CALL(cudaStreamGetAttribute_ptsz, v11000, Light);
  return get_attribute_impl(scope_, stream, attr, value, true);
}

cudaError_t cudaStreamSetAttribute(cudaStream_t stream, cudaStreamAttrID attr, const cudaStreamAttrValue* value) {
  DEVSIM_RT_CALL(cudaStreamSetAttribute, v11000, Light);
  return set_attribute_impl(scope_, stream, attr, value, false);
}

cudaError_t cudaStreamSetAttribute_ptsz(cudaStream_t stream, cudaStreamAttrID attr, const cudaStreamAttrValue* value) {
  DEVSIM_RT_CALL(cudaStreamSetAttribute_ptsz, v11000, Light);
  return set_attribute_impl(scope_, stream, attr, value, true);
}

cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src) {
  DEVSIM_RT_CALL(cudaStreamCopyAttributes, v11000, Light);
  return copy_attributes_impl(scope_, dst, src, false);
}

cudaError_t cudaStreamCopyAttributes_ptsz(cudaStream_t dst, cudaStream_t src) {
  DEVSIM_RT_CALL(cudaStreamCopyAttributes_ptsz, v11000, Light);
  return copy_attributes_impl(scope_, dst, src, true);
}

cudaError_t cudaStreamGetDevice(cudaStream_t stream, int* device) {
  DEVSIM_RT_CALL(cudaStreamGetDevice, v12080, Light);
  return get_device_impl(scope_, stream, device, false);
}

cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t stream, int* device) {
  DEVSIM_RT_CALL(cudaStreamGetDevice_ptsz, v12080, Light);
  return get_device_impl(scope_, stream, device, true);
}

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  DEVSIM_RT_CALL(cudaThreadExchangeStreamCaptureMode, v10010, Light);
  if (!mode || *mode < cudaStreamCaptureModeGlobal || *mode > cudaStreamCaptureModeRelaxed) {
    DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  }
  cudaStreamCaptureMode previous = static_cast<cudaStreamCaptureMode>(t_capture_mode);
  t_capture_mode = *mode;
  *mode = previous;
  DEVSIM_RT_RETURN(cudaSuccess);
}

}  // extern "C"
