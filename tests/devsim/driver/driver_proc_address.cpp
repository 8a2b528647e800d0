// cuGetProcAddress (the v2 signature cuda.h maps cuGetProcAddress to): how runtimes and
// libraries find driver entry points without linking libcuda. Only the entry points this
// library implements are found; per-thread-stream lookups get the _ptsz variants.
#include <cuda.h>
#include <cupti_driver_cbid.h>

#include <cstring>

#include "api_scope.h"

extern "C" {
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, CUstream, void**, void**);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig*, CUfunction, void**, void**);
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream);
}

namespace {

struct Entry {
  const char* name;
  void* legacy;
  void* per_thread;  // nullptr: same as legacy
};

#define DEVSIM_ENTRY(fn) {#fn, reinterpret_cast<void*>(&fn), nullptr}
#define DEVSIM_ENTRY_PTSZ(fn) {#fn, reinterpret_cast<void*>(&fn), reinterpret_cast<void*>(&fn##_ptsz)}

const Entry kEntries[] = {
    DEVSIM_ENTRY(cuInit),
    DEVSIM_ENTRY(cuDriverGetVersion),
    DEVSIM_ENTRY(cuDeviceGet),
    DEVSIM_ENTRY(cuDeviceGetCount),
    DEVSIM_ENTRY(cuDeviceGetName),
    DEVSIM_ENTRY(cuDeviceGetAttribute),
    {"cuDeviceTotalMem", reinterpret_cast<void*>(&cuDeviceTotalMem_v2), nullptr},
    DEVSIM_ENTRY(cuDevicePrimaryCtxRetain),
    {"cuDevicePrimaryCtxRelease", reinterpret_cast<void*>(&cuDevicePrimaryCtxRelease_v2), nullptr},
    DEVSIM_ENTRY(cuCtxGetCurrent),
    DEVSIM_ENTRY(cuCtxSetCurrent),
    DEVSIM_ENTRY(cuCtxGetDevice),
    DEVSIM_ENTRY(cuCtxSynchronize),
    DEVSIM_ENTRY(cuModuleGetFunction),
    DEVSIM_ENTRY(cuFuncGetName),
    DEVSIM_ENTRY(cuFuncGetAttribute),
    DEVSIM_ENTRY_PTSZ(cuLaunchKernel),
    DEVSIM_ENTRY_PTSZ(cuLaunchKernelEx),
    DEVSIM_ENTRY_PTSZ(cuStreamSynchronize),
    DEVSIM_ENTRY(cuGetErrorName),
    DEVSIM_ENTRY(cuGetErrorString),
};

}  // namespace

extern "C" CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int, cuuint64_t flags,
                                                CUdriverProcAddressQueryResult* status) {
  devsim::ApiScope scope(devsim::ApiDomain::Driver, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
                         "cuGetProcAddress_v2", devsim::HostCost::Light);
  if (!symbol || !pfn) return static_cast<CUresult>(scope.finish(CUDA_ERROR_INVALID_VALUE));
  *pfn = nullptr;
  for (const Entry& e : kEntries) {
    if (std::strcmp(e.name, symbol) != 0) continue;
    bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    *pfn = per_thread && e.per_thread ? e.per_thread : e.legacy;
  }
  if (status) *status = *pfn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return static_cast<CUresult>(scope.finish(*pfn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND));
}
