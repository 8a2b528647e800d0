// Device properties of libcudart.so.12 (built into that library only): the entry points whose
// ABI is CUDA 12's, not the CUDA 13 header's this file is compiled with.
//
// CUDA 12 headers `#define cudaGetDeviceProperties cudaGetDeviceProperties_v2`, so every
// program built with nvcc 12 calls the _v2 name with the CUDA 12 struct (cuda12_device_prop.h).
// The unsuffixed name is still exported by libcudart.so.12 for callers that look it up by name
// (CUPTI callback id 4, cudaGetDeviceProperties_v3020); NVIDIA does not document what layout it
// writes, so devsim writes only the part every layout since CUDA 11.0 shares, which no caller's
// buffer can be too small for. Read with the CUDA 13 struct, that prefix still gives the
// "numSms: 1" a profiler reading it wrongly reports: a CUDA 13 reader takes deviceOverlap for multiProcessorCount.
#include "cudart_common.h"

#if DEVSIM_CUDART_MAJOR == 12

#include <cstring>

#include "cuda12_device_prop.h"
#include "device_props.h"

using namespace devsim;
using devsim_cuda12::DeviceProp;

namespace {

// The common fields, then those CUDA 13 removed, with the values the attributes report.
void fill_properties12(DeviceProp& p, int device) {
  rt::fill_properties(p, device);
  p.clockRate = Arch::clock_khz;
  p.memoryClockRate = Arch::memory_clock_khz;
  p.deviceOverlap = 1;  // copies overlap kernels (asyncEngineCount > 0), as on every GPU since Fermi
  p.kernelExecTimeoutEnabled = 0;
  p.computeMode = cudaComputeModeDefault;
  p.singleToDoublePrecisionPerfRatio = 32;  // a Turing part runs FP64 at 1/32 of FP32
  p.cooperativeMultiDeviceLaunch = 1;
}

cudaError_t properties_impl(ApiScope& scope, DeviceProp* prop, int device) {
  if (!prop) return rt::finish(scope, cudaErrorInvalidValue);
  if (!valid_device(device)) return rt::finish(scope, cudaErrorInvalidDevice);
  fill_properties12(*prop, device);
  return rt::finish(scope, cudaSuccess);
}

}  // namespace

extern "C" {

// Not declared by the CUDA 13 header: exported with C linkage and CUDA 12's signature.
cudaError_t cudaGetDeviceProperties_v2(DeviceProp* prop, int device);

cudaError_t cudaGetDeviceProperties_v2(DeviceProp* prop, int device) {
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000, "cudaGetDeviceProperties_v2",
                       Other);
  return properties_impl(scope_, prop, device);
}

// The header's signature (a CUDA 13 cudaDeviceProp*), but only the CUDA 11.0 prefix of the
// CUDA 12 layout is written.
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  DEVSIM_RT_CALL(cudaGetDeviceProperties, v3020, Other);
  if (!prop) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  DeviceProp full;
  cudaError_t err = properties_impl(scope_, &full, device);
  if (err == cudaSuccess) std::memcpy(static_cast<void*>(prop), &full, devsim_cuda12::kCuda11PrefixBytes);
  return err;
}

}  // extern "C"

#endif  // DEVSIM_CUDART_MAJOR == 12
