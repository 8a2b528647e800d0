// Kernel launches: the registration and launch path nvcc generates for <<<>>> in CUDA 13,
// the public launch entry points, function attributes and the occupancy calculator.
#include <dlfcn.h>

#include <algorithm>
#include <cstring>

#include "config.h"
#include "cudart_common.h"
#include "kernels.h"
#include "ops.h"

using namespace devsim;

namespace {

struct CallConfig {  // plain words: __thread storage cannot hold dim3 (it has constructors)
  unsigned grid[3], block[3];
  size_t shared;
  cudaStream_t stream;
};

// <<<>>> pushes a configuration that the host stub pops right away; nesting is shallow.
constexpr int kMaxConfigDepth = 16;
__thread CallConfig t_configs[kMaxConfigDepth];
__thread int t_config_depth = 0;

const char* name_of(const KernelInfo* k) { return k ? k->name : nullptr; }

Dim3 to_dim(dim3 d) { return Dim3{d.x, d.y, d.z}; }

cudaError_t launch_impl(ApiScope& scope, const KernelInfo* k, dim3 grid, dim3 block, size_t shared,
                        cudaStream_t stream, bool ptsz, uint8_t launch_type = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR) {
  if (!k) return rt::finish(scope, cudaErrorInvalidDeviceFunction);
  if (!k->fetched.exchange(true)) {
    ApiScope fetch(ApiScope::InternalDriverCall{}, CUPTI_DRIVER_TRACE_CBID_cuLibraryGetKernel, "cuLibraryGetKernel");
  }
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  LaunchParams l{k, to_dim(grid), to_dim(block), shared, launch_type};
  return rt::finish(scope, launch_kernel(s, l, scope.correlation_id()));
}

const KernelInfo* kernel_of_handle(cudaKernel_t handle) { return kernel_from_handle(handle); }

uint8_t launch_type_of(const cudaLaunchConfig_t* config) {
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const cudaLaunchAttribute& a = config->attrs[i];
    if (a.id == cudaLaunchAttributeCooperative && a.val.cooperative) {
      return CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
    }
  }
  return CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
}

cudaError_t launch_ex_impl(ApiScope& scope, const cudaLaunchConfig_t* config, const void* func, bool ptsz) {
  if (!config) return rt::finish(scope, cudaErrorInvalidValue);
  return launch_impl(scope, find_kernel(func), config->gridDim, config->blockDim, config->dynamicSmemBytes,
                     config->stream, ptsz, launch_type_of(config));
}

// Resident blocks per SM limited by threads, registers, shared memory and the block cap; none
// for a block the kernel cannot launch at all.
int blocks_per_sm(const KernelInfo& k, int block_size, size_t dynamic_shared) {
  if (block_size <= 0 || block_size > k.max_threads) return 0;
  int warps = (block_size + Arch::warp_size - 1) / Arch::warp_size;
  int by_threads = Arch::max_threads_per_sm / (warps * Arch::warp_size);
  int by_regs = Arch::regs_per_sm / (registers_per_warp(k.registers) * warps);
  size_t shared = size_t(k.static_shared) + dynamic_shared;
  int by_shared = shared ? int(Arch::shared_per_sm / shared) : Arch::max_blocks_per_sm;
  return std::max(0, std::min({Arch::max_blocks_per_sm, by_threads, by_regs, by_shared}));
}

// Asks the simulated driver's cuGetProcAddress, which knows the _ptsz variants; a missing
// libcuda.so.1 just finds nothing.
cudaError_t entry_point_impl(ApiScope& scope, const char* symbol, void** func, unsigned long long flags,
                             cudaDriverEntryPointQueryResult* status) {
  if (!symbol || !func) return rt::finish(scope, cudaErrorInvalidValue);
  using GetProc = int (*)(const char*, void**, int, unsigned long long, void*);
  static void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  static auto get_proc = driver ? reinterpret_cast<GetProc>(dlsym(driver, "cuGetProcAddress_v2")) : nullptr;
  *func = nullptr;
  unsigned long long driver_flags = (flags & cudaEnablePerThreadDefaultStream) ? 2 : 0;  // CU_GET_PROC_ADDRESS_*
  // The runtime's own version picks the ABI of the symbol returned (12080 from libcudart.so.12).
  if (get_proc) get_proc(symbol, func, DEVSIM_CUDART_VERSION, driver_flags, nullptr);
  if (status) *status = *func ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  return rt::finish(scope, *func || status ? cudaSuccess : cudaErrorSymbolNotFound);
}

}  // namespace

extern "C" {

void** __cudaRegisterFatBinary(void* fat_cubin) {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaRegisterFatBinary_v13000,
                 "__cudaRegisterFatBinary", HostCost::None);
  // The handle only has to be unique and stable; the module's device code is never run.
  auto** handle = new void*[1];
  handle[0] = fat_cubin;
  if (fat_cubin) register_module_image(handle, fat_cubin);  // registers, shared memory, ...
  note_module_registered();
  return handle;
}

void __cudaRegisterFatBinaryEnd(void**) {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaRegisterFatBinaryEnd_v13000,
                 "__cudaRegisterFatBinaryEnd", HostCost::None);
}

// Registered kernels stay valid until exit: atexit handlers of other modules may still run.
void __cudaUnregisterFatBinary(void**) {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaUnregisterFatBinary_v13000,
                 "__cudaUnregisterFatBinary", HostCost::None);
  note_module_unregistered();
}

void __cudaRegisterFunction(void** module, const char* host_fun, char*, const char* device_name, int,
                            uint3*, uint3*, dim3*, dim3*, int*) {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaRegisterFunction_v13000,
                 "__cudaRegisterFunction", HostCost::None, device_name);
  register_module_kernel(module, host_fun, device_name);
}

void __cudaRegisterVar(void**, char* host_var, char*, const char* device_name, int, size_t size, int, int) {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaRegisterVar_v13000,
                 "__cudaRegisterVar", HostCost::None, device_name);
  register_variable(host_var, device_name, size);
}

void __cudaRegisterManagedVar(void**, void** host_var_ptr, char*, const char* device_name, int, size_t size, int, int) {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaRegisterManagedVar_v13000,
                 "__cudaRegisterManagedVar", HostCost::None, device_name);
  register_variable(host_var_ptr, device_name, size);
  if (host_var_ptr) *host_var_ptr = variable_storage(host_var_ptr, nullptr);
}

char __cudaInitModule(void**) {
  ApiScope scope(ApiDomain::Runtime, CUPTI_RUNTIME_TRACE_CBID___cudaInitModule_v13000,
                 "__cudaInitModule", HostCost::None);
  return 1;
}

// nvcc's launch plumbing (push/pop of the <<<>>> configuration, the kernel handle) is not an
// API call to CUPTI: NVIDIA's runtime 13.0 gives no callback and no record for it (measured
// on an H100), so it opens no ApiScope here.
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared, CUstream_st* stream) {
  if (t_config_depth == kMaxConfigDepth) return 1;
  t_configs[t_config_depth++] = CallConfig{{grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, shared, stream};
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* shared, void* stream) {
  if (t_config_depth == 0) return cudaErrorMissingConfiguration;
  const CallConfig& c = t_configs[--t_config_depth];
  *grid = dim3(c.grid[0], c.grid[1], c.grid[2]);
  *block = dim3(c.block[0], c.block[1], c.block[2]);
  *shared = c.shared;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_fun) {
  KernelInfo* k = find_kernel(host_fun);
  if (!kernel || !k) return cudaErrorInvalidDeviceFunction;
  *kernel = reinterpret_cast<cudaKernel_t>(k);
  return cudaSuccess;
}

// What `<<<>>>` compiles to in CUDA 13. NVIDIA's runtime reports it to CUPTI as the public
// launch it implements, cudaLaunchKernel (callback id 211, not __cudaLaunchKernel's 505; measured
// on an H100), with that call's parameters.
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                               cudaStream_t stream) {
  const KernelInfo* k = kernel_of_handle(kernel);
  cudaLaunchKernel_v7000_params params{k ? k->host_stub : nullptr, grid, block, args, shared, stream};
  DEVSIM_RT_CALL_P(cudaLaunchKernel, v7000, Launch, name_of(k), &params);
  return launch_impl(scope_, k, grid, block, shared, stream, false);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                                    cudaStream_t stream) {
  const KernelInfo* k = kernel_of_handle(kernel);
  cudaLaunchKernel_ptsz_v7000_params params{k ? k->host_stub : nullptr, grid, block, args, shared, stream};
  DEVSIM_RT_CALL_P(cudaLaunchKernel_ptsz, v7000, Launch, name_of(k), &params);
  return launch_impl(scope_, k, grid, block, shared, stream, true);
}

cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream) {
  const KernelInfo* k = find_kernel(func);
  cudaLaunchKernel_v7000_params params{func, grid, block, args, shared, stream};
  DEVSIM_RT_CALL_P(cudaLaunchKernel, v7000, Launch, name_of(k), &params);
  return launch_impl(scope_, k, grid, block, shared, stream, false);
}

cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream) {
  const KernelInfo* k = find_kernel(func);
  cudaLaunchKernel_ptsz_v7000_params params{func, grid, block, args, shared, stream};
  DEVSIM_RT_CALL_P(cudaLaunchKernel_ptsz, v7000, Launch, name_of(k), &params);
  return launch_impl(scope_, k, grid, block, shared, stream, true);
}

cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void**, size_t shared,
                                        cudaStream_t stream) {
  const KernelInfo* k = find_kernel(func);
  DEVSIM_RT_CALL_SYM(cudaLaunchCooperativeKernel, v9000, Launch, name_of(k));
  return launch_impl(scope_, k, grid, block, shared, stream, false,
                     CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE);
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 grid, dim3 block, void**, size_t shared,
                                             cudaStream_t stream) {
  const KernelInfo* k = find_kernel(func);
  DEVSIM_RT_CALL_SYM(cudaLaunchCooperativeKernel_ptsz, v9000, Launch, name_of(k));
  return launch_impl(scope_, k, grid, block, shared, stream, true,
                     CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void**) {
  DEVSIM_RT_CALL_SYM(cudaLaunchKernelExC, v11060, Launch, name_of(find_kernel(func)));
  return launch_ex_impl(scope_, config, func, false);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func, void**) {
  DEVSIM_RT_CALL_SYM(cudaLaunchKernelExC_ptsz, v11060, Launch, name_of(find_kernel(func)));
  return launch_ex_impl(scope_, config, func, true);
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  DEVSIM_RT_CALL(cudaFuncGetAttributes, v3020, Light);
  const KernelInfo* k = find_kernel(func);
  if (!attr) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!k) DEVSIM_RT_RETURN(cudaErrorInvalidDeviceFunction);
  std::memset(attr, 0, sizeof *attr);
  attr->sharedSizeBytes = size_t(k->static_shared);
  attr->constSizeBytes = size_t(k->const_bytes);
  attr->localSizeBytes = size_t(k->local_bytes);
  attr->maxThreadsPerBlock = k->max_threads;
  attr->numRegs = k->registers;
  attr->ptxVersion = attr->binaryVersion = Arch::major * 10 + Arch::minor;
  attr->maxDynamicSharedSizeBytes = k->max_dynamic_shared;
  attr->preferredShmemCarveout = -1;
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  DEVSIM_RT_CALL(cudaFuncSetAttribute, v9000, Light);
  KernelInfo* k = find_kernel(func);
  if (!k) DEVSIM_RT_RETURN(cudaErrorInvalidDeviceFunction);
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || value + k->static_shared > Arch::shared_per_block_optin) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
    k->max_dynamic_shared = value;
  }
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache) {
  DEVSIM_RT_CALL(cudaFuncSetCacheConfig, v3020, Light);
  DEVSIM_RT_RETURN(find_kernel(func) ? cudaSuccess : cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaFuncGetName(const char** name, const void* func) {
  DEVSIM_RT_CALL(cudaFuncGetName, v12030, Light);
  const KernelInfo* k = find_kernel(func);
  if (!name) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!k) DEVSIM_RT_RETURN(cudaErrorInvalidDeviceFunction);
  *name = k->name;
  DEVSIM_RT_RETURN(cudaSuccess);
}

// The returned handle is the same object libcuda.so.1 accepts as a CUfunction.
cudaError_t cudaGetFuncBySymbol(cudaFunction_t* function, const void* symbol) {
  DEVSIM_RT_CALL(cudaGetFuncBySymbol, v11000, Light);
  KernelInfo* k = find_kernel(symbol);
  if (!function) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!k) DEVSIM_RT_RETURN(cudaErrorInvalidDeviceFunction);
  *function = reinterpret_cast<cudaFunction_t>(k);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaGetKernel(cudaKernel_t* kernel, const void* entry) {
  DEVSIM_RT_CALL(cudaGetKernel, v12000, Light);
  KernelInfo* k = find_kernel(entry);
  if (!kernel) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!k) DEVSIM_RT_RETURN(cudaErrorInvalidDeviceFunction);
  *kernel = reinterpret_cast<cudaKernel_t>(k);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* func, int block_size,
                                                                   size_t dynamic_shared, unsigned int) {
  DEVSIM_RT_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, v7000, Light);
  const KernelInfo* k = find_kernel(func);
  if (!blocks || block_size <= 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!k) DEVSIM_RT_RETURN(cudaErrorInvalidDeviceFunction);
  *blocks = blocks_per_sm(*k, block_size, dynamic_shared);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func, int block_size,
                                                          size_t dynamic_shared) {
  DEVSIM_RT_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor, v6050, Light);
  const KernelInfo* k = find_kernel(func);
  if (!blocks || block_size <= 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!k) DEVSIM_RT_RETURN(cudaErrorInvalidDeviceFunction);
  *blocks = blocks_per_sm(*k, block_size, dynamic_shared);
  DEVSIM_RT_RETURN(cudaSuccess);
}

// The largest dynamic shared memory per block that still lets num_blocks blocks reside on one
// SM; 0 when threads, registers or the block cap already keep fewer resident.
cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* size, const void* func, int num_blocks,
                                                      int block_size) {
  DEVSIM_RT_CALL(cudaOccupancyAvailableDynamicSMemPerBlock, v10200, Light);
  const KernelInfo* k = find_kernel(func);
  if (!size || num_blocks <= 0 || block_size <= 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  if (!k) DEVSIM_RT_RETURN(cudaErrorInvalidDeviceFunction);
  size_t per_block = size_t(Arch::shared_per_sm) / size_t(num_blocks);
  size_t fixed = size_t(k->static_shared);
  bool fits = blocks_per_sm(*k, block_size, 0) >= num_blocks && per_block > fixed;
  *size = fits ? std::min(per_block - fixed, size_t(k->max_dynamic_shared)) : 0;
  DEVSIM_RT_RETURN(cudaSuccess);
}

// The modelled part has a fixed bank size (see cudaDeviceSetSharedMemConfig): accepted, no effect.
cudaError_t cudaFuncSetSharedMemConfig(const void* func, cudaSharedMemConfig config) {
  DEVSIM_RT_CALL(cudaFuncSetSharedMemConfig, v4020, Light);
  if (!find_kernel(func)) DEVSIM_RT_RETURN(cudaErrorInvalidDeviceFunction);
  bool known = config >= cudaSharedMemBankSizeDefault && config <= cudaSharedMemBankSizeEightByte;
  DEVSIM_RT_RETURN(known ? cudaSuccess : cudaErrorInvalidValue);
}

// Resolves driver entry points from the simulated libcuda.so.1 (loaded on demand, so programs
// that never ask do not load it). The runtime itself never calls what it hands out.
cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** func, unsigned long long flags,
                                    cudaDriverEntryPointQueryResult* status) {
  DEVSIM_RT_CALL(cudaGetDriverEntryPoint, v11030, Light);
  return entry_point_impl(scope_, symbol, func, flags, status);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** func, unsigned long long flags,
                                         cudaDriverEntryPointQueryResult* status) {
  DEVSIM_RT_CALL(cudaGetDriverEntryPoint_ptsz, v11030, Light);
  return entry_point_impl(scope_, symbol, func, flags | cudaEnablePerThreadDefaultStream, status);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** func, unsigned int, unsigned long long flags,
                                             cudaDriverEntryPointQueryResult* status) {
  DEVSIM_RT_CALL(cudaGetDriverEntryPointByVersion, v12050, Light);
  return entry_point_impl(scope_, symbol, func, flags, status);
}

cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** func, unsigned int,
                                                  unsigned long long flags, cudaDriverEntryPointQueryResult* status) {
  DEVSIM_RT_CALL(cudaGetDriverEntryPointByVersion_ptsz, v12050, Light);
  return entry_point_impl(scope_, symbol, func, flags | cudaEnablePerThreadDefaultStream, status);
}

}  // extern "C"
