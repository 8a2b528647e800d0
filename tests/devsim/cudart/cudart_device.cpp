// Devices: count, properties, attributes, current device, flags, reset, synchronisation,
// versions, memory info, profiler start/stop.
#include <cstring>

#include "config.h"
#include "cudart_common.h"
#include "graph.h"
#include "peer.h"
#include "pools.h"
#include "device_props.h"
#include "memory.h"

using namespace devsim;

namespace {

__thread unsigned t_device_flags = 0;

// Attributes a device-query program asks for; unmodelled valid attributes read as 0.
int attribute_value(cudaDeviceAttr attr, int device) {
  cudaDeviceProp p;
  rt::fill_properties(p, device);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: return p.maxThreadsPerBlock;
    case cudaDevAttrMaxBlockDimX: return p.maxThreadsDim[0];
    case cudaDevAttrMaxBlockDimY: return p.maxThreadsDim[1];
    case cudaDevAttrMaxBlockDimZ: return p.maxThreadsDim[2];
    case cudaDevAttrMaxGridDimX: return p.maxGridSize[0];
    case cudaDevAttrMaxGridDimY: return p.maxGridSize[1];
    case cudaDevAttrMaxGridDimZ: return p.maxGridSize[2];
    case cudaDevAttrMaxSharedMemoryPerBlock: return int(p.sharedMemPerBlock);
    case cudaDevAttrTotalConstantMemory: return int(p.totalConstMem);
    case cudaDevAttrWarpSize: return p.warpSize;
    case cudaDevAttrMaxRegistersPerBlock: return p.regsPerBlock;
    case cudaDevAttrClockRate: return Arch::clock_khz;
    case cudaDevAttrMemoryClockRate: return Arch::memory_clock_khz;
    case cudaDevAttrGlobalMemoryBusWidth: return p.memoryBusWidth;
    case cudaDevAttrL2CacheSize: return p.l2CacheSize;
    case cudaDevAttrMultiProcessorCount: return p.multiProcessorCount;
    case cudaDevAttrComputeCapabilityMajor: return p.major;
    case cudaDevAttrComputeCapabilityMinor: return p.minor;
    case cudaDevAttrConcurrentKernels: return 1;
    case cudaDevAttrAsyncEngineCount: return p.asyncEngineCount;
    case cudaDevAttrGpuOverlap: return 1;
    case cudaDevAttrUnifiedAddressing: return 1;
    case cudaDevAttrCanMapHostMemory: return 1;
    case cudaDevAttrManagedMemory: return 1;
    case cudaDevAttrMaxThreadsPerMultiProcessor: return p.maxThreadsPerMultiProcessor;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: return int(p.sharedMemPerMultiprocessor);
    case cudaDevAttrMaxRegistersPerMultiprocessor: return p.regsPerMultiprocessor;
    case cudaDevAttrMaxBlocksPerMultiprocessor: return p.maxBlocksPerMultiProcessor;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: return int(p.sharedMemPerBlockOptin);
    case cudaDevAttrStreamPrioritiesSupported: return 1;
    case cudaDevAttrCooperativeLaunch: return 1;
    case cudaDevAttrPciBusId: return p.pciBusID;
    case cudaDevAttrMemoryPoolsSupported: return 1;
    case cudaDevAttrComputeMode: return cudaComputeModeDefault;
    default: return 0;
  }
}

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  DEVSIM_RT_CALL(cudaGetDeviceCount, v3020, Light);
  if (!count) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *count = device_count();
  DEVSIM_RT_RETURN(cudaSuccess);
}

#if DEVSIM_CUDART_MAJOR != 12  // libcudart.so.12 has its own, in cudart_properties12.cpp
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  DEVSIM_RT_CALL(cudaGetDeviceProperties, v12000, Other);
  if (!prop) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!valid_device(device)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  rt::fill_properties(*prop, device);
  prop->deviceNumaId = prop->hostNumaId = -1;  // named fields of CUDA 13 only (reserved in 12.0)
  DEVSIM_RT_RETURN(cudaSuccess);
}
#endif

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  DEVSIM_RT_CALL(cudaDeviceGetAttribute, v5000, Query);
  if (!value || attr <= 0 || attr >= cudaDevAttrMax) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!valid_device(device)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  *value = attribute_value(attr, device);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaSetDevice(int device) {
  DEVSIM_RT_CALL(cudaSetDevice, v3020, Light);
  if (!valid_device(device)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  set_current_device(device);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaGetDevice(int* device) {
  DEVSIM_RT_CALL(cudaGetDevice, v3020, Light);
  if (!device) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  // NVIDIA's runtime asks the driver (a call CUPTI reports in the driver domain).
  ApiScope ask(ApiScope::InternalDriverCall{}, CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice_v2, "cuCtxGetDevice_v2");
  *device = current_device();
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaInitDevice(int device, unsigned int, unsigned int) {
  DEVSIM_RT_CALL(cudaInitDevice, v12000, Other);
  DEVSIM_RT_RETURN(valid_device(device) ? cudaSuccess : cudaErrorInvalidDevice);
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  DEVSIM_RT_CALL(cudaSetDeviceFlags, v3020, Light);
  t_device_flags = flags;
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  DEVSIM_RT_CALL(cudaGetDeviceFlags, v7000, Light);
  if (!flags) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *flags = t_device_flags | cudaDeviceMapHost;
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceSynchronize() {
  DEVSIM_RT_CALL(cudaDeviceSynchronize, v3020, Other);
  uint64_t start = now_ns();
  device_synchronize(current_device());
  if (Tracer* t = tracer(); t && scope_.reported()) {
    t->on_sync(SyncRecord{CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, scope_.correlation_id(),
                          context_id(current_device()), CUPTI_SYNCHRONIZATION_INVALID_VALUE,
                          CUPTI_SYNCHRONIZATION_INVALID_VALUE, start, now_ns()});
  }
  DEVSIM_RT_RETURN(cudaSuccess);
}

// Waits for the device, frees its memory and clears sticky errors, like a real reset.
cudaError_t cudaDeviceReset() {
  DEVSIM_RT_CALL_ANYWAY(cudaDeviceReset, v3020, Alloc);
  device_synchronize(current_device());
  forget_device_pools(current_device());
  forget_graph_memory(current_device());
  release_device(current_device());
  reset_peer_access(current_device());
  rt::clear_errors();
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  DEVSIM_RT_CALL(cudaMemGetInfo, v3020, Other);
  if (!free_bytes || !total_bytes) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *total_bytes = config().memory_bytes;
  *free_bytes = *total_bytes - used_bytes(current_device());
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  DEVSIM_RT_CALL(cudaDeviceGetStreamPriorityRange, v5050, Light);
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  DEVSIM_RT_CALL(cudaRuntimeGetVersion, v3020, Light);
  if (!version) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *version = DEVSIM_CUDART_VERSION;
  DEVSIM_RT_RETURN(cudaSuccess);
}

// One driver serves both runtimes, as a CUDA 13 driver runs CUDA 12 programs.
cudaError_t cudaDriverGetVersion(int* version) {
  DEVSIM_RT_CALL(cudaDriverGetVersion, v3020, Light);
  if (!version) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaProfilerStart() {
  DEVSIM_RT_CALL(cudaProfilerStart, v4000, Light);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaProfilerStop() {
  DEVSIM_RT_CALL(cudaProfilerStop, v4000, Light);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceSetLimit(cudaLimit, size_t) {
  DEVSIM_RT_CALL(cudaDeviceSetLimit, v3020, Light);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
  DEVSIM_RT_CALL(cudaDeviceGetLimit, v3020, Light);
  if (!value) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *value = limit == cudaLimitStackSize ? 1024 : limit == cudaLimitMallocHeapSize ? (8u << 20) : 0;
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaDeviceCanAccessPeer(int* can, int device, int peer) {
  DEVSIM_RT_CALL(cudaDeviceCanAccessPeer, v4000, Light);
  if (!can) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!valid_device(device) || !valid_device(peer)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  *can = device != peer;
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp*) {
  DEVSIM_RT_CALL(cudaChooseDevice, v3020, Light);
  if (!device) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *device = 0;
  DEVSIM_RT_RETURN(cudaSuccess);
}

}  // extern "C"
