// Streams, events and host functions of the runtime API, with their _ptsz twins.
#include "cudart_common.h"
#include "graph.h"
#include "ops.h"

using namespace devsim;

namespace devsim::rt {

Stream* resolve_stream(cudaStream_t stream, bool per_thread_default) {
  return stream_from_handle(stream, per_thread_default);
}

cudaStream_t stream_handle(Stream* s) {
  return s->legacy ? nullptr : reinterpret_cast<cudaStream_t>(s);
}

}  // namespace devsim::rt

namespace {

// `record_id`: the event record waited for, read before the wait (another thread may record
// the event again meanwhile).
void report_sync(ApiScope& scope, CUpti_ActivitySynchronizationType type, Stream* s, Event* e,
                 uint64_t start, uint64_t record_id = CUPTI_SYNCHRONIZATION_INVALID_VALUE) {
  Tracer* t = tracer();
  if (!t || !scope.reported()) return;
  uint32_t device = s ? s->device : e ? e->device : current_device();
  t->on_sync(SyncRecord{type, scope.correlation_id(), context_id(device),
                        s ? s->id : CUPTI_SYNCHRONIZATION_INVALID_VALUE,
                        e ? e->id : CUPTI_SYNCHRONIZATION_INVALID_VALUE, start, now_ns(), record_id});
}

cudaError_t stream_sync_impl(ApiScope& scope, cudaStream_t stream, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  uint64_t start = now_ns();
  Status st = stream_synchronize(s);
  if (st == Status::Ok) report_sync(scope, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, s, nullptr, start);
  return rt::finish(scope, st);
}

cudaError_t stream_query_impl(ApiScope& scope, cudaStream_t stream, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  return rt::finish(scope, stream_query(s));
}

cudaError_t event_record_impl(ApiScope& scope, cudaEvent_t event, cudaStream_t stream, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  return rt::finish(scope, record_event(reinterpret_cast<Event*>(event), s, scope.correlation_id()));
}

cudaError_t wait_event_impl(ApiScope& scope, cudaStream_t stream, cudaEvent_t event, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  auto* e = reinterpret_cast<Event*>(event);
  uint64_t start = now_ns();
  const uint64_t record_id = event_record_id(e);
  Status st = stream_wait_event(s, e, scope.correlation_id());
  // Inside a capture the wait becomes an edge of the graph, not a wait on the device: real
  // CUPTI reports no synchronization for it.
  uint64_t capture_id = 0;
  const bool captured = capture_status(s, &capture_id) != 0;
  if (st == Status::Ok && !captured) {
    report_sync(scope, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, s, e, start, record_id);
  }
  return rt::finish(scope, st);
}

cudaError_t host_func_impl(ApiScope& scope, cudaStream_t stream, HostFn fn, StreamCallbackFn cb,
                           void* user, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  return rt::finish(scope, host_function(s, fn, cb, stream, user, scope.correlation_id()));
}

// Stream getters: flags, priority and the CUPTI stream id.
cudaError_t get_flags_impl(ApiScope& scope, cudaStream_t stream, unsigned* flags, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s || !flags) return rt::finish(scope, s ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle);
  *flags = s->flags;
  return rt::finish(scope, cudaSuccess);
}

cudaError_t get_priority_impl(ApiScope& scope, cudaStream_t stream, int* priority, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s || !priority) return rt::finish(scope, s ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle);
  *priority = s->priority;
  return rt::finish(scope, cudaSuccess);
}

cudaError_t get_id_impl(ApiScope& scope, cudaStream_t stream, unsigned long long* id, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s || !id) return rt::finish(scope, s ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle);
  *id = s->id;
  return rt::finish(scope, cudaSuccess);
}

}  // namespace

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  DEVSIM_RT_CALL(cudaStreamCreate, v3020, Other);
  if (!stream) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *stream = reinterpret_cast<cudaStream_t>(create_stream(current_device(), 0, 0));
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  DEVSIM_RT_CALL(cudaStreamCreateWithFlags, v5000, Other);
  if (!stream || flags > cudaStreamNonBlocking) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *stream = reinterpret_cast<cudaStream_t>(create_stream(current_device(), flags, 0));
  DEVSIM_RT_RETURN(cudaSuccess);
}

// Priorities are clamped to the advertised range [-5, 0] like the real runtime does.
cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
  DEVSIM_RT_CALL(cudaStreamCreateWithPriority, v5050, Other);
  if (!stream || flags > cudaStreamNonBlocking) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  priority = priority < -5 ? -5 : priority > 0 ? 0 : priority;
  *stream = reinterpret_cast<cudaStream_t>(create_stream(current_device(), flags, priority));
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaStreamDestroy, v5050, Other);
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
    DEVSIM_RT_RETURN(cudaErrorInvalidResourceHandle);
  }
  DEVSIM_RT_RETURN(destroy_stream(reinterpret_cast<Stream*>(stream)));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  cudaStreamSynchronize_v3020_params params{stream};
  DEVSIM_RT_CALL_P(cudaStreamSynchronize, v3020, Other, nullptr, &params);
  return stream_sync_impl(scope_, stream, false);
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaStreamSynchronize_ptsz, v7000, Other);
  return stream_sync_impl(scope_, stream, true);
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaStreamQuery, v3020, Query);
  return stream_query_impl(scope_, stream, false);
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaStreamQuery_ptsz, v7000, Query);
  return stream_query_impl(scope_, stream, true);
}

cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags) {
  DEVSIM_RT_CALL(cudaStreamGetFlags, v5050, Light);
  return get_flags_impl(scope_, stream, flags, false);
}

cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t stream, unsigned int* flags) {
  DEVSIM_RT_CALL(cudaStreamGetFlags_ptsz, v7000, Light);
  return get_flags_impl(scope_, stream, flags, true);
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  DEVSIM_RT_CALL(cudaStreamGetPriority, v5050, Light);
  return get_priority_impl(scope_, stream, priority, false);
}

cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t stream, int* priority) {
  DEVSIM_RT_CALL(cudaStreamGetPriority_ptsz, v7000, Light);
  return get_priority_impl(scope_, stream, priority, true);
}

cudaError_t cudaStreamGetId(cudaStream_t stream, unsigned long long* id) {
  DEVSIM_RT_CALL(cudaStreamGetId, v12000, Light);
  return get_id_impl(scope_, stream, id, false);
}

cudaError_t cudaStreamGetId_ptsz(cudaStream_t stream, unsigned long long* id) {
  DEVSIM_RT_CALL(cudaStreamGetId_ptsz, v12000, Light);
  return get_id_impl(scope_, stream, id, true);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  DEVSIM_RT_CALL(cudaStreamWaitEvent, v3020, Other);
  return wait_event_impl(scope_, stream, event, false);
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  DEVSIM_RT_CALL(cudaStreamWaitEvent_ptsz, v7000, Other);
  return wait_event_impl(scope_, stream, event, true);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user) {
  DEVSIM_RT_CALL(cudaLaunchHostFunc, v10000, Launch);
  return host_func_impl(scope_, stream, fn, nullptr, user, false);
}

cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void* user) {
  DEVSIM_RT_CALL(cudaLaunchHostFunc_ptsz, v10000, Launch);
  return host_func_impl(scope_, stream, fn, nullptr, user, true);
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t cb, void* user, unsigned int flags) {
  DEVSIM_RT_CALL(cudaStreamAddCallback, v5000, Launch);
  if (flags != 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  return host_func_impl(scope_, stream, nullptr, reinterpret_cast<StreamCallbackFn>(cb), user, false);
}

cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t cb, void* user, unsigned int flags) {
  DEVSIM_RT_CALL(cudaStreamAddCallback_ptsz, v7000, Launch);
  if (flags != 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  return host_func_impl(scope_, stream, nullptr, reinterpret_cast<StreamCallbackFn>(cb), user, true);
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  DEVSIM_RT_CALL(cudaEventCreate, v3020, Other);
  if (!event) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *event = reinterpret_cast<cudaEvent_t>(create_event(current_device(), 0));
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  DEVSIM_RT_CALL(cudaEventCreateWithFlags, v3020, Other);
  if (!event || flags > 0xf) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *event = reinterpret_cast<cudaEvent_t>(create_event(current_device(), flags));
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  DEVSIM_RT_CALL(cudaEventDestroy, v3020, Other);
  DEVSIM_RT_RETURN(destroy_event(reinterpret_cast<Event*>(event)));
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaEventRecord, v3020, EventRecord);
  return event_record_impl(scope_, event, stream, false);
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaEventRecord_ptsz, v7000, EventRecord);
  return event_record_impl(scope_, event, stream, true);
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int) {
  DEVSIM_RT_CALL(cudaEventRecordWithFlags, v11010, EventRecord);
  return event_record_impl(scope_, event, stream, false);
}

cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream, unsigned int) {
  DEVSIM_RT_CALL(cudaEventRecordWithFlags_ptsz, v11010, EventRecord);
  return event_record_impl(scope_, event, stream, true);
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  DEVSIM_RT_CALL(cudaEventQuery, v3020, Query);
  DEVSIM_RT_RETURN(query_event(reinterpret_cast<Event*>(event)));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  DEVSIM_RT_CALL(cudaEventSynchronize, v3020, Other);
  auto* e = reinterpret_cast<Event*>(event);
  uint64_t start = now_ns();
  const uint64_t record_id = event_record_id(e);
  Status st = synchronize_event(e);
  if (st == Status::Ok) {
    report_sync(scope_, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, nullptr, e, start, record_id);
  }
  DEVSIM_RT_RETURN(st);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
#if DEVSIM_CUDART_MAJOR == 12  // id 139: a CUDA 12 program's call; 486 (v12080) is CUDA 13's
  DEVSIM_RT_CALL(cudaEventElapsedTime, v3020, Query);
#else
  DEVSIM_RT_CALL(cudaEventElapsedTime, v12080, Query);
#endif
  DEVSIM_RT_RETURN(elapsed_ms(reinterpret_cast<Event*>(start), reinterpret_cast<Event*>(end), ms));
}

}  // extern "C"
