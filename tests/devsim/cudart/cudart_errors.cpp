// Error names and strings (generated from driver_types.h), last-error and sticky-error state.
#include <atomic>
#include <cstring>

#include "cudart_common.h"

namespace devsim::rt {
namespace {

struct ErrorRow {
  int code;
  const char* name;
  const char* doc;
};

const ErrorRow kErrors[] = {
#include "cuda_error_table.inc"
};

// The short strings real cudaGetErrorString returns for the errors programs print most.
const char* short_string(int code) {
  switch (code) {
    case 0: return "no error";
    case 1: return "invalid argument";
    case 2: return "out of memory";
    case 3: return "initialization error";
    case 9: return "invalid configuration argument";
    case 17: return "invalid device pointer";
    case 21: return "invalid copy direction for memcpy";
    case 98: return "invalid device function";
    case 100: return "no CUDA-capable device is detected";
    case 101: return "invalid device ordinal";
    case 400: return "invalid resource handle";
    case 600: return "device not ready";
    case 700: return "an illegal memory access was encountered";
    case 719: return "unspecified launch failure";
    case 999: return "unknown error";
    default: return nullptr;
  }
}

const ErrorRow* find_row(int code) {
  for (const ErrorRow& row : kErrors) {
    if (row.code == code) return &row;
  }
  return nullptr;
}

// Errors after which a real context is unusable until cudaDeviceReset.
bool is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress: case cudaErrorLaunchTimeout: case cudaErrorAssert:
    case cudaErrorHardwareStackError: case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress: case cudaErrorInvalidAddressSpace: case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure: case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

__thread int t_last_error = 0;
std::atomic<int> g_sticky{0};

}  // namespace

cudaError_t to_cuda(Status s) {
  switch (s) {
    case Status::Ok: return cudaSuccess;
    case Status::NotReady: return cudaErrorNotReady;
    case Status::InvalidValue: return cudaErrorInvalidValue;
    case Status::InvalidDevice: return cudaErrorInvalidDevice;
    case Status::InvalidHandle: return cudaErrorInvalidResourceHandle;
    case Status::InvalidDevicePointer: return cudaErrorInvalidDevicePointer;
    case Status::InvalidConfiguration: return cudaErrorInvalidConfiguration;
    case Status::InvalidDeviceFunction: return cudaErrorInvalidDeviceFunction;
    case Status::InvalidMemcpyDirection: return cudaErrorInvalidMemcpyDirection;
    case Status::OutOfMemory: return cudaErrorMemoryAllocation;
    case Status::StreamCaptureUnsupported: return cudaErrorStreamCaptureUnsupported;
    case Status::StreamCaptureInvalidated: return cudaErrorStreamCaptureInvalidated;
    case Status::IllegalState: return cudaErrorIllegalState;
    case Status::LaunchOutOfResources: return cudaErrorLaunchOutOfResources;
    case Status::StreamCaptureIsolation: return cudaErrorStreamCaptureIsolation;
    case Status::OperatingSystem: return cudaErrorOperatingSystem;
    case Status::GraphExecUpdateFailure: return cudaErrorGraphExecUpdateFailure;
    case Status::StreamCaptureUnjoined: return cudaErrorStreamCaptureUnjoined;
  }
  return cudaErrorUnknown;
}

// cudaErrorNotReady is a status, not an error: real CUDA does not record it.
cudaError_t note_error(cudaError_t err) {
  if (err == cudaSuccess || err == cudaErrorNotReady) return err;
  t_last_error = err;
  if (is_sticky(err)) {
    int none = 0;
    g_sticky.compare_exchange_strong(none, err);
  }
  return err;
}

cudaError_t sticky_error() { return static_cast<cudaError_t>(g_sticky.load(std::memory_order_relaxed)); }

void clear_errors() {
  g_sticky.store(0);
  t_last_error = 0;
}

}  // namespace devsim::rt

using namespace devsim;

extern "C" {

// A sticky error stays: cudaGetLastError returns it again and again.
cudaError_t cudaGetLastError() {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
                 "cudaGetLastError", HostCost::Light);
  cudaError_t err = static_cast<cudaError_t>(rt::t_last_error);
  rt::t_last_error = rt::sticky_error();
  if (err == cudaSuccess) err = rt::sticky_error();
  scope.finish(err);
  return err;
}

cudaError_t cudaPeekAtLastError() {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
                 "cudaPeekAtLastError", HostCost::Light);
  auto err = static_cast<cudaError_t>(rt::t_last_error ? rt::t_last_error : rt::sticky_error());
  scope.finish(err);
  return err;
}

const char* cudaGetErrorName(cudaError_t error) {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorName_v6050,
                 "cudaGetErrorName", HostCost::None);
  const rt::ErrorRow* row = rt::find_row(error);
  return row ? row->name : "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID_cudaGetErrorString_v3020,
                 "cudaGetErrorString", HostCost::None);
  if (const char* s = rt::short_string(error)) return s;
  const rt::ErrorRow* row = rt::find_row(error);
  return row ? row->doc : "unrecognized error code";
}

}  // extern "C"
