// Shared plumbing of the simulated libcudart.so.13 (and .12): the per-call macro, error
// bookkeeping and handle translation. Compiled with __CUDA_API_VERSION_INTERNAL so the real
// header declares both the legacy-stream entry points and their _ptsz/_ptds twins with their
// real signatures.
#pragma once

#include <cuda_runtime_api.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <generated_cuda_runtime_api_meta.h>

#include "api_scope.h"
#include "device.h"
#include "devsim.h"
#include "timeline.h"

// The same sources build libcudart.so.13 and, with DEVSIM_CUDART_MAJOR=12, libcudart.so.12;
// the few entry points whose ABI differs between the two majors are chosen by this.
#ifndef DEVSIM_CUDART_MAJOR
#define DEVSIM_CUDART_MAJOR 13
#endif
#if DEVSIM_CUDART_MAJOR == 12
#define DEVSIM_CUDART_VERSION 12080  // what cudaRuntimeGetVersion of a CUDA 12.8 runtime says
#else
#define DEVSIM_CUDART_VERSION CUDART_VERSION
#endif

namespace devsim::rt {

cudaError_t to_cuda(Status s);
// Last-error bookkeeping: records err for cudaGetLastError (and as sticky when it is one of the
// errors that corrupt a real context), returns it.
cudaError_t note_error(cudaError_t err);
// The sticky error of the process, or cudaSuccess; every call but the error getters returns it.
cudaError_t sticky_error();
void clear_errors();  // cudaDeviceReset

// Ends a call: records the error and the reported result.
inline cudaError_t finish(ApiScope& scope, cudaError_t err) {
  scope.finish(static_cast<int>(err));
  return note_error(err);
}
inline cudaError_t finish(ApiScope& scope, Status st) { return finish(scope, to_cuda(st)); }

// cudaStream_t -> model stream. per_thread_default: the caller is a _ptsz/_ptds entry point,
// so stream 0 means this thread's default stream. Returns nullptr for a bad handle.
Stream* resolve_stream(cudaStream_t stream, bool per_thread_default);
cudaStream_t stream_handle(Stream* s);

}  // namespace devsim::rt

// Opens the call's ApiScope (tracer report, host cost, fault injection) and returns early for
// an injected fault or a sticky error. `name` and `version` spell the CUPTI callback id.
#define DEVSIM_RT_CALL(name, version, cost)                                                  \
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_##name##_##version, #name, cost)

// The same for an exported name that differs from the one in its CUPTI callback id
// (cudaGetDeviceProperties_v2 of CUDA 12 is callback id 440, cudaGetDeviceProperties_v12000).
#define DEVSIM_RT_CALL_NAMED(cbid, exported_name, cost)                                      \
  ::devsim::ApiScope scope_(::devsim::ApiDomain::Runtime, cbid, exported_name,               \
                            ::devsim::HostCost::cost);                                       \
  if (int injected_ = scope_.injected_error())                                               \
    return ::devsim::rt::finish(scope_, static_cast<cudaError_t>(injected_));                \
  if (cudaError_t sticky_ = ::devsim::rt::sticky_error())                                    \
    return ::devsim::rt::finish(scope_, sticky_)

// The same with a callback id computed at run time and a parameter struct for subscribers.
#define DEVSIM_RT_CALL_NAMED_P(cbid, exported_name, cost, params)                            \
  ::devsim::ApiScope scope_(::devsim::ApiDomain::Runtime, cbid, exported_name,               \
                            ::devsim::HostCost::cost, nullptr, (params));                    \
  if (int injected_ = scope_.injected_error())                                               \
    return ::devsim::rt::finish(scope_, static_cast<cudaError_t>(injected_));                \
  if (cudaError_t sticky_ = ::devsim::rt::sticky_error())                                    \
    return ::devsim::rt::finish(scope_, sticky_)

// The same without the sticky check (error getters, cudaDeviceReset).
#define DEVSIM_RT_CALL_ANYWAY(name, version, cost)                                           \
  ::devsim::ApiScope scope_(::devsim::ApiDomain::Runtime,                                    \
                            CUPTI_RUNTIME_TRACE_CBID_##name##_##version, #name,              \
                            ::devsim::HostCost::cost);                                       \
  if (int injected_ = scope_.injected_error())                                               \
    return ::devsim::rt::finish(scope_, static_cast<cudaError_t>(injected_))

#define DEVSIM_RT_RETURN(value) return ::devsim::rt::finish(scope_, (value))

// The same, for calls that name a kernel (reported as the call's symbol name) and/or hand
// their parameter struct (generated_cuda_runtime_api_meta.h) to callback subscribers.
#define DEVSIM_RT_CALL_SYM(name, version, cost, symbol) DEVSIM_RT_CALL_P(name, version, cost, symbol, nullptr)
#define DEVSIM_RT_CALL_P(name, version, cost, symbol, params)                                \
  ::devsim::ApiScope scope_(::devsim::ApiDomain::Runtime,                                    \
                            CUPTI_RUNTIME_TRACE_CBID_##name##_##version, #name,              \
                            ::devsim::HostCost::cost, (symbol), (params));                   \
  if (int injected_ = scope_.injected_error())                                               \
    return ::devsim::rt::finish(scope_, static_cast<cudaError_t>(injected_));                \
  if (cudaError_t sticky_ = ::devsim::rt::sticky_error())                                    \
    return ::devsim::rt::finish(scope_, sticky_)
