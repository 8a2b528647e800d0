// Shared plumbing of the simulated libcuda.so.1: the per-call macro and error mapping.
#pragma once

#include <cuda.h>
#include <cupti_driver_cbid.h>

#include "api_scope.h"
#include "devsim.h"

namespace devsim::drv {

inline CUresult to_cu(Status s) {
  switch (s) {
    case Status::Ok: return CUDA_SUCCESS;
    case Status::NotReady: return CUDA_ERROR_NOT_READY;
    case Status::InvalidValue: return CUDA_ERROR_INVALID_VALUE;
    case Status::InvalidDevice: return CUDA_ERROR_INVALID_DEVICE;
    case Status::InvalidHandle: return CUDA_ERROR_INVALID_HANDLE;
    case Status::InvalidDevicePointer: return CUDA_ERROR_INVALID_VALUE;
    case Status::InvalidConfiguration: return CUDA_ERROR_INVALID_VALUE;
    case Status::InvalidDeviceFunction: return CUDA_ERROR_INVALID_HANDLE;
    case Status::InvalidMemcpyDirection: return CUDA_ERROR_INVALID_VALUE;
    case Status::OutOfMemory: return CUDA_ERROR_OUT_OF_MEMORY;
    case Status::StreamCaptureUnsupported: return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    case Status::StreamCaptureInvalidated: return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    case Status::IllegalState: return CUDA_ERROR_ILLEGAL_STATE;
    case Status::LaunchOutOfResources: return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
    case Status::StreamCaptureIsolation: return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    case Status::OperatingSystem: return CUDA_ERROR_OPERATING_SYSTEM;
    case Status::GraphExecUpdateFailure: return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    case Status::StreamCaptureUnjoined: return CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
  }
  return CUDA_ERROR_UNKNOWN;
}


inline CUresult finish(ApiScope& scope, CUresult r) {
  scope.finish(r);
  return r;
}
inline CUresult finish(ApiScope& scope, Status s) { return finish(scope, to_cu(s)); }


// Modules loaded from an image (driver_module.cpp).
bool is_loaded_module(CUmodule module);
bool is_unloaded_module(CUmodule module);
KernelInfo* kernel_in_module(CUmodule module, const char* name);  // nullptr: not in it

}  // namespace devsim::drv

// Opens the call's ApiScope (tracer report, host cost, fault injection) and returns early for
// an injected fault. `name` spells the CUPTI driver callback id.
#define DEVSIM_CU_CALL(name, cost, symbol) DEVSIM_CU_CALL_P(name, cost, symbol, nullptr)
#define DEVSIM_CU_CALL_P(name, cost, symbol, params)                                         \
  ::devsim::ApiScope scope_(::devsim::ApiDomain::Driver, CUPTI_DRIVER_TRACE_CBID_##name, #name, ::devsim::HostCost::cost,   \
                  (symbol), (params));                                                        \
  if (int injected_ = scope_.injected_error()) return ::devsim::drv::finish(scope_, static_cast<CUresult>(injected_))
#define DEVSIM_CU_RETURN(value) return ::devsim::drv::finish(scope_, (value))
