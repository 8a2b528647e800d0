// The simulated libcuda.so.1: the driver-level launch entry that libraries such as cuBLAS use
// without passing through the runtime's exported launch symbols. Its calls are reported with
// domain Driver; the kernels it enqueues carry the driver call's correlation id. The runtime
// never calls these exports, so its own launches never show up as driver calls.
#include <cuda.h>
#include <cupti_driver_cbid.h>

#include <cstring>

#include "driver_common.h"
#include "injection.h"
#include "api_scope.h"
#include "config.h"
#include "device.h"
#include "kernels.h"
#include "memory.h"
#include "ops.h"
#include "timeline.h"

using namespace devsim;
using namespace devsim::drv;

namespace {

// One primary context per device; CUcontext points at its slot.
struct Context {
  int device;
};
Context g_contexts[kMaxDevices] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, {10}, {11}, {12}, {13}, {14}, {15}};

CUcontext context_handle(int device) { return reinterpret_cast<CUcontext>(&g_contexts[device]); }

int device_of_context(CUcontext ctx) {
  auto* c = reinterpret_cast<Context*>(ctx);
  if (c < g_contexts || c >= g_contexts + kMaxDevices) return -1;
  return valid_device(c->device) ? c->device : -1;
}

// Same layout as cuLaunchKernel_params in generated_cuda_meta.h (the callback's
// functionParams); that header needs cuda.h's deprecated v1 types, so it is not included.
struct LaunchKernelParams {
  CUfunction f;
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  CUstream stream;
  void** kernel_params;
  void** extra;
};

}  // namespace


namespace {

CUresult launch_impl(ApiScope& scope, CUfunction f, Dim3 grid, Dim3 block, unsigned shared, CUstream stream,
                     bool ptsz, uint8_t launch_type) {
  const KernelInfo* k = kernel_from_handle(f);
  if (!k) return finish(scope, CUDA_ERROR_INVALID_HANDLE);
  Stream* s = stream_from_handle(stream, ptsz);
  if (!s) return finish(scope, CUDA_ERROR_INVALID_HANDLE);
  LaunchParams l{k, grid, block, shared, launch_type};
  return finish(scope, launch_kernel(s, l, scope.correlation_id()));
}

uint8_t launch_type_of(const CUlaunchConfig* config) {
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && config->attrs[i].value.cooperative) {
      return CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
    }
  }
  return CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
}

CUresult launch_ex_impl(ApiScope& scope, const CUlaunchConfig* c, CUfunction f, bool ptsz) {
  if (!c) return finish(scope, CUDA_ERROR_INVALID_VALUE);
  return launch_impl(scope, f, Dim3{c->gridDimX, c->gridDimY, c->gridDimZ},
                     Dim3{c->blockDimX, c->blockDimY, c->blockDimZ}, c->sharedMemBytes, c->hStream, ptsz,
                     launch_type_of(c));
}

const char* kernel_name(CUfunction f) {
  const KernelInfo* k = kernel_from_handle(f);
  return k ? k->name : nullptr;
}

CUresult sync_impl(ApiScope& scope, CUstream stream, bool ptsz) {
  Stream* s = stream_from_handle(stream, ptsz);
  if (!s) return finish(scope, CUDA_ERROR_INVALID_HANDLE);
  uint64_t start = now_ns();
  Status st = stream_synchronize(s);
  if (Tracer* t = tracer(); t && scope.reported() && st == Status::Ok) {
    t->on_sync(SyncRecord{CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, scope.correlation_id(),
                          context_id(s->device), s->id, CUPTI_SYNCHRONIZATION_INVALID_VALUE, start, now_ns()});
  }
  return finish(scope, st);
}

}  // namespace

extern "C" {

// Declared by cuda.h only in per-thread-default-stream builds; the real library exports them.
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, CUstream, void**, void**);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig*, CUfunction, void**, void**);
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream);

CUresult CUDAAPI cuInit(unsigned int flags) {
  run_tool_injection_once();  // before the call is reported: the tool may subscribe to it
  DEVSIM_CU_CALL(cuInit, Other, nullptr);
  DEVSIM_CU_RETURN(flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

CUresult CUDAAPI cuDriverGetVersion(int* version) {
  DEVSIM_CU_CALL(cuDriverGetVersion, Light, nullptr);
  if (!version) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  *version = CUDA_VERSION;
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  DEVSIM_CU_CALL(cuDeviceGetCount, Light, nullptr);
  if (!count) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  *count = device_count();
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  DEVSIM_CU_CALL(cuDeviceGet, Light, nullptr);
  if (!device) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!valid_device(ordinal)) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_DEVICE);
  *device = ordinal;
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice device) {
  DEVSIM_CU_CALL(cuDeviceGetName, Light, nullptr);
  if (!name || len <= 0) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!valid_device(device)) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_DEVICE);
  std::strncpy(name, device_name(), size_t(len) - 1);
  name[len - 1] = '\0';
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  DEVSIM_CU_CALL(cuDeviceTotalMem_v2, Light, nullptr);
  if (!bytes) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!valid_device(device)) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_DEVICE);
  *bytes = config().memory_bytes;
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attr, CUdevice device) {
  DEVSIM_CU_CALL(cuDeviceGetAttribute, Query, nullptr);
  if (!value) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!valid_device(device)) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_DEVICE);
  switch (attr) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = config().sm_count; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = Arch::major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = Arch::minor; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = Arch::max_threads_per_block; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = Arch::warp_size; break;
    default: *value = 0; break;
  }
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) {
  DEVSIM_CU_CALL(cuDevicePrimaryCtxRetain, Other, nullptr);
  if (!ctx) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!valid_device(device)) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_DEVICE);
  *ctx = context_handle(device);
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  DEVSIM_CU_CALL(cuDevicePrimaryCtxRelease_v2, Other, nullptr);
  DEVSIM_CU_RETURN(valid_device(device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE);
}

// The runtime makes the current device's primary context current, so this follows it.
CUresult CUDAAPI cuCtxGetCurrent(CUcontext* ctx) {
  DEVSIM_CU_CALL(cuCtxGetCurrent, Light, nullptr);
  if (!ctx) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  *ctx = context_handle(current_device());
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  DEVSIM_CU_CALL(cuCtxSetCurrent, Light, nullptr);
  int device = device_of_context(ctx);
  if (ctx && device < 0) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_CONTEXT);
  if (ctx) set_current_device(device);
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  DEVSIM_CU_CALL(cuCtxGetDevice, Light, nullptr);
  if (!device) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  *device = current_device();
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

// CUDA 13's cuCtxGetDevice_v2 and cuCtxSynchronize_v2 name their context (NULL: the current
// one); cuGetProcAddress hands them out for versions from 13000, the older ABI below that.
CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  DEVSIM_CU_CALL(cuCtxGetDevice_v2, Light, nullptr);
  if (!device) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  const int of_context = ctx ? device_of_context(ctx) : current_device();
  if (of_context < 0) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_CONTEXT);
  *device = of_context;
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

namespace {

CUresult context_synchronize(ApiScope& scope, int device) {
  uint64_t start = now_ns();
  device_synchronize(device);
  if (Tracer* t = tracer(); t && scope.reported()) {
    t->on_sync(SyncRecord{CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, scope.correlation_id(),
                          context_id(device), CUPTI_SYNCHRONIZATION_INVALID_VALUE,
                          CUPTI_SYNCHRONIZATION_INVALID_VALUE, start, now_ns()});
  }
  return finish(scope, CUDA_SUCCESS);
}

}  // namespace

CUresult CUDAAPI cuCtxSynchronize() {
  DEVSIM_CU_CALL(cuCtxSynchronize, Other, nullptr);
  return context_synchronize(scope_, current_device());
}

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) {
  DEVSIM_CU_CALL(cuCtxSynchronize_v2, Other, nullptr);
  const int device = ctx ? device_of_context(ctx) : current_device();
  if (device < 0) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_CONTEXT);
  return context_synchronize(scope_, device);
}

// A module loaded with cuModuleLoad* finds the kernels of its image (driver_module.cpp). Any
// other handle finds any kernel registered in the process by its mangled name (what a library
// that embeds its kernels, registered by the runtime, would find in its own module).
CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule module, const char* name) {
  DEVSIM_CU_CALL(cuModuleGetFunction, Light, name);
  if (!f || !name) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  KernelInfo* k = nullptr;
  if (is_loaded_module(module)) {
    k = kernel_in_module(module, name);
  } else if (is_unloaded_module(module)) {
    DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_HANDLE);
  } else {
    k = find_kernel_by_name(name);
  }
  if (!k) DEVSIM_CU_RETURN(CUDA_ERROR_NOT_FOUND);
  *f = reinterpret_cast<CUfunction>(k);
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuFuncGetName(const char** name, CUfunction f) {
  DEVSIM_CU_CALL(cuFuncGetName, Light, nullptr);
  if (!name) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  *name = kernel_name(f);
  DEVSIM_CU_RETURN(*name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

CUresult CUDAAPI cuFuncGetAttribute(int* value, CUfunction_attribute attr, CUfunction f) {
  DEVSIM_CU_CALL(cuFuncGetAttribute, Light, nullptr);
  const KernelInfo* k = kernel_from_handle(f);
  if (!value) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  if (!k) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_HANDLE);
  switch (attr) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = k->registers; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = k->static_shared; break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = k->max_threads; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = k->max_dynamic_shared; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = k->local_bytes; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *value = k->const_bytes; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = Arch::major * 10 + Arch::minor; break;
    default: *value = 0; break;
  }
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared, CUstream stream, void** args, void** extra) {
  LaunchKernelParams params{f, gx, gy, gz, bx, by, bz, shared, stream, args, extra};
  DEVSIM_CU_CALL_P(cuLaunchKernel, Launch, kernel_name(f), &params);
  return launch_impl(scope_, f, Dim3{gx, gy, gz}, Dim3{bx, by, bz}, shared, stream, false,
                     CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR);
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned shared, CUstream stream, void**, void**) {
  DEVSIM_CU_CALL(cuLaunchKernel_ptsz, Launch, kernel_name(f));
  return launch_impl(scope_, f, Dim3{gx, gy, gz}, Dim3{bx, by, bz}, shared, stream, true,
                     CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void**, void**) {
  DEVSIM_CU_CALL(cuLaunchKernelEx, Launch, kernel_name(f));
  return launch_ex_impl(scope_, config, f, false);
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void**, void**) {
  DEVSIM_CU_CALL(cuLaunchKernelEx_ptsz, Launch, kernel_name(f));
  return launch_ex_impl(scope_, config, f, true);
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
  DEVSIM_CU_CALL(cuStreamSynchronize, Other, nullptr);
  return sync_impl(scope_, stream, false);
}

CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream stream) {
  DEVSIM_CU_CALL(cuStreamSynchronize_ptsz, Other, nullptr);
  return sync_impl(scope_, stream, true);
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** out) {
  DEVSIM_CU_CALL(cuGetErrorName, None, nullptr);
  if (!out) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  switch (error) {
    case CUDA_SUCCESS: *out = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *out = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *out = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_INVALID_HANDLE: *out = "CUDA_ERROR_INVALID_HANDLE"; break;
    case CUDA_ERROR_NOT_FOUND: *out = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_NOT_READY: *out = "CUDA_ERROR_NOT_READY"; break;
    default: *out = "CUDA_ERROR_UNKNOWN"; break;
  }
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** out) {
  DEVSIM_CU_CALL(cuGetErrorString, None, nullptr);
  if (!out) DEVSIM_CU_RETURN(CUDA_ERROR_INVALID_VALUE);
  *out = error == CUDA_SUCCESS ? "no error" : error == CUDA_ERROR_INVALID_VALUE ? "invalid argument"
       : error == CUDA_ERROR_INVALID_HANDLE ? "invalid resource handle" : "unknown error";
  DEVSIM_CU_RETURN(CUDA_SUCCESS);
}

}  // extern "C"
