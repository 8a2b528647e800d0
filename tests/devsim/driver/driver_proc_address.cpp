// cuGetProcAddress: how runtimes and libraries find driver entry points without linking
// libcuda — NVIDIA's own runtime (libcudart_static.a, and libcudart.so) first asks for
// "cuGetProcAddress" itself at versions 11030 and 12000, then for every entry point it uses,
// each at the CUDA version whose ABI it was built against.
//
// As cuda.h documents it: the symbol is a base name ("cuMemAlloc", not "cuMemAlloc_v2"); the
// answer is the function of the newest ABI whose version is at most the one asked for (ABIs
// and their versions: the PFN_<name>_v<N> typedefs of cudaTypedefs.h, read at build time into
// driver_proc_versions.inc); with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the _ptsz/_ptds
// variant where one exists at that version. A version below the symbol's first ABI gives
// CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, an unknown symbol (or an ABI devsim does not
// implement) CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND — both with CUDA_SUCCESS and a NULL
// function, as documented; a version above the driver's is CUDA_ERROR_INVALID_VALUE.
//
// devsim's implementations are listed with the version of the ABI each implements, checked by
// the compiler against that version's PFN typedef: a function that does not have the ABI of
// the version it is listed under does not compile.
#define __CUDA_API_VERSION_INTERNAL 1  // the typedefs and declarations of the older ABIs
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cupti_driver_cbid.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "api_scope.h"

extern "C" {
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, CUstream, void**, void**);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig*, CUfunction, void**, void**);
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream);
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr*, size_t, CUstream);
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);
}

namespace {

// One ABI version of an entry point in NVIDIA's driver (generated from cudaTypedefs.h).
struct Abi {
  const char* name;
  int version;
  bool per_thread;  // the _ptsz/_ptds variant
};
constexpr Abi kNvidiaAbis[] = {
#include "driver_proc_versions.inc"
};

// One of devsim's functions, under the ABI it implements.
struct Implementation {
  const char* name;
  int version;
  bool per_thread;
  void* function;
};

template <typename Pfn>
void* with_abi(Pfn function) {  // the argument converts to Pfn only if the types are identical
  return reinterpret_cast<void*>(function);
}

#define DEVSIM_PROC(name, version, function) {#name, version, false, with_abi<PFN_##name##_v##version>(&function)}
#define DEVSIM_PROC_PT(name, version, suffix, function) \
  {#name, version, true, with_abi<PFN_##name##_v##version##_##suffix>(&function)}

const Implementation kImplementations[] = {
    DEVSIM_PROC(cuGetProcAddress, 11030, cuGetProcAddress),  // the CUDA 11.3 ABI, without the status
    DEVSIM_PROC(cuGetProcAddress, 12000, cuGetProcAddress_v2),
    DEVSIM_PROC(cuInit, 2000, cuInit),
    DEVSIM_PROC(cuDriverGetVersion, 2020, cuDriverGetVersion),
    DEVSIM_PROC(cuDeviceGet, 2000, cuDeviceGet),
    DEVSIM_PROC(cuDeviceGetCount, 2000, cuDeviceGetCount),
    DEVSIM_PROC(cuDeviceGetName, 2000, cuDeviceGetName),
    DEVSIM_PROC(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute),
    DEVSIM_PROC(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2),
    DEVSIM_PROC(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain),
    DEVSIM_PROC(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease_v2),  // the same ABI twice
    DEVSIM_PROC(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2),
    DEVSIM_PROC(cuCtxGetCurrent, 4000, cuCtxGetCurrent),
    DEVSIM_PROC(cuCtxSetCurrent, 4000, cuCtxSetCurrent),
    DEVSIM_PROC(cuCtxGetDevice, 2000, cuCtxGetDevice),
    DEVSIM_PROC(cuCtxGetDevice, 13000, cuCtxGetDevice_v2),
    DEVSIM_PROC(cuCtxSynchronize, 2000, cuCtxSynchronize),
    DEVSIM_PROC(cuCtxSynchronize, 13000, cuCtxSynchronize_v2),
    DEVSIM_PROC(cuModuleLoadData, 2000, cuModuleLoadData),
    DEVSIM_PROC(cuModuleLoadDataEx, 2010, cuModuleLoadDataEx),
    DEVSIM_PROC(cuModuleLoadFatBinary, 2000, cuModuleLoadFatBinary),
    DEVSIM_PROC(cuModuleUnload, 2000, cuModuleUnload),
    DEVSIM_PROC(cuModuleGetFunction, 2000, cuModuleGetFunction),
    DEVSIM_PROC(cuFuncGetName, 12030, cuFuncGetName),
    DEVSIM_PROC(cuFuncGetAttribute, 2020, cuFuncGetAttribute),
    DEVSIM_PROC(cuLaunchKernel, 4000, cuLaunchKernel),
    DEVSIM_PROC_PT(cuLaunchKernel, 7000, ptsz, cuLaunchKernel_ptsz),
    DEVSIM_PROC(cuLaunchKernelEx, 11060, cuLaunchKernelEx),
    DEVSIM_PROC_PT(cuLaunchKernelEx, 11060, ptsz, cuLaunchKernelEx_ptsz),
    DEVSIM_PROC(cuStreamCreate, 2000, cuStreamCreate),
    DEVSIM_PROC(cuStreamDestroy, 4000, cuStreamDestroy_v2),
    DEVSIM_PROC(cuStreamSynchronize, 2000, cuStreamSynchronize),
    DEVSIM_PROC_PT(cuStreamSynchronize, 7000, ptsz, cuStreamSynchronize_ptsz),
    DEVSIM_PROC(cuStreamWaitEvent, 3020, cuStreamWaitEvent),
    DEVSIM_PROC(cuEventCreate, 2000, cuEventCreate),
    DEVSIM_PROC(cuEventDestroy, 4000, cuEventDestroy_v2),
    DEVSIM_PROC(cuEventRecord, 2000, cuEventRecord),
    DEVSIM_PROC(cuEventSynchronize, 2000, cuEventSynchronize),
    DEVSIM_PROC(cuEventElapsedTime, 2000, cuEventElapsedTime_v2),  // the same ABI twice
    DEVSIM_PROC(cuEventElapsedTime, 12080, cuEventElapsedTime_v2),
    DEVSIM_PROC(cuMemAlloc, 3020, cuMemAlloc_v2),
    DEVSIM_PROC(cuMemFree, 3020, cuMemFree_v2),
    DEVSIM_PROC(cuMemAllocHost, 3020, cuMemAllocHost_v2),
    DEVSIM_PROC(cuMemFreeHost, 2000, cuMemFreeHost),
    DEVSIM_PROC(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2),
    DEVSIM_PROC(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2),
    DEVSIM_PROC(cuMemcpyHtoDAsync, 3020, cuMemcpyHtoDAsync_v2),
    DEVSIM_PROC(cuMemcpyDtoHAsync, 3020, cuMemcpyDtoHAsync_v2),
    DEVSIM_PROC(cuMemsetD8, 3020, cuMemsetD8_v2),
    DEVSIM_PROC(cuMemsetD32, 3020, cuMemsetD32_v2),
    DEVSIM_PROC(cuMemsetD8Async, 3020, cuMemsetD8Async),
    DEVSIM_PROC(cuMemsetD32Async, 3020, cuMemsetD32Async),
    DEVSIM_PROC(cuMemAllocAsync, 11020, cuMemAllocAsync),
    DEVSIM_PROC_PT(cuMemAllocAsync, 11020, ptsz, cuMemAllocAsync_ptsz),
    DEVSIM_PROC(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync),
    DEVSIM_PROC(cuMemFreeAsync, 11020, cuMemFreeAsync),
    DEVSIM_PROC_PT(cuMemFreeAsync, 11020, ptsz, cuMemFreeAsync_ptsz),
    DEVSIM_PROC(cuMemPoolCreate, 11020, cuMemPoolCreate),
    DEVSIM_PROC(cuMemPoolDestroy, 11020, cuMemPoolDestroy),
    DEVSIM_PROC(cuMemPoolTrimTo, 11020, cuMemPoolTrimTo),
    DEVSIM_PROC(cuGetErrorName, 6000, cuGetErrorName),
    DEVSIM_PROC(cuGetErrorString, 6000, cuGetErrorString),
};

struct Found {
  void* function = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
};

// The newest ABI of `symbol` (of the per-thread kind or not) at most `version`; nullptr if none.
const Abi* newest_abi(const Abi* first, const Abi* last, int version, bool per_thread) {
  const Abi* best = nullptr;
  for (const Abi* abi = first; abi != last; ++abi) {
    if (abi->per_thread == per_thread && abi->version <= version && (!best || abi->version > best->version)) best = abi;
  }
  return best;
}

void* implementation(const Abi& abi) {
  for (const Implementation& i : kImplementations) {
    if (i.version == abi.version && i.per_thread == abi.per_thread && std::strcmp(i.name, abi.name) == 0) {
      return i.function;
    }
  }
  return nullptr;
}

Found find(const char* symbol, int version, bool per_thread) {
  const auto [first, last] = std::equal_range(
      std::begin(kNvidiaAbis), std::end(kNvidiaAbis), Abi{symbol, 0, false},
      [](const Abi& a, const Abi& b) { return std::strcmp(a.name, b.name) < 0; });
  if (first == last) return {};
  const Abi* legacy = newest_abi(first, last, version, false);
  if (legacy == nullptr) return {nullptr, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT};
  const Abi* threaded = per_thread ? newest_abi(first, last, version, true) : nullptr;
  void* function = implementation(threaded != nullptr ? *threaded : *legacy);
  return {function, function != nullptr ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND};
}

CUresult lookup(devsim::ApiScope& scope, const char* symbol, void** pfn, int version, cuuint64_t flags,
                CUdriverProcAddressQueryResult* status) {
  constexpr cuuint64_t kKnownFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  if (!symbol || !pfn || (flags & ~kKnownFlags) != 0 || flags == kKnownFlags || version > CUDA_VERSION) {
    return static_cast<CUresult>(scope.finish(CUDA_ERROR_INVALID_VALUE));
  }
  const Found found = find(symbol, version, (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
  *pfn = found.function;
  if (status) *status = found.status;
  return static_cast<CUresult>(scope.finish(CUDA_SUCCESS));
}

}  // namespace

// Exported under both names, as NVIDIA's libcuda.so.1 does.
extern "C" CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  devsim::ApiScope scope(devsim::ApiDomain::Driver, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress, "cuGetProcAddress",
                         devsim::HostCost::Light);
  return lookup(scope, symbol, pfn, version, flags, nullptr);
}

extern "C" CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                                CUdriverProcAddressQueryResult* status) {
  devsim::ApiScope scope(devsim::ApiDomain::Driver, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
                         "cuGetProcAddress_v2", devsim::HostCost::Light);
  return lookup(scope, symbol, pfn, version, flags, status);
}
