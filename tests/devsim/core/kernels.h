// Kernels and device variables registered by nvcc-generated code (__cudaRegisterFunction,
// __cudaRegisterVar), and the kernel duration model.
#pragma once

#include <cstdint>
#include <atomic>
#include <string>

#include "cubin_resources.h"

namespace devsim {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t{x} * y * z; }
};

// One registered kernel. Its address is what __cudaGetKernel hands out as cudaKernel_t and
// cudaGetFuncBySymbol as cudaFunction_t / CUfunction. Never freed.
struct KernelInfo {
  KernelInfo() = default;
  KernelInfo(const KernelInfo&) = delete;  // `name` points into this object's own `mangled`
  KernelInfo& operator=(const KernelInfo&) = delete;

  uint32_t magic = kMagic;
  const void* host_stub = nullptr;
  // The mangled device name, a copy the kernel owns, as NVIDIA's driver keeps its own: the
  // string nvcc registered lives in the registering library, which may be unloaded while the
  // kernel is still queued, and the kernel's record (with its name) is made when it ends.
  std::string mangled;
  const char* name = nullptr;          // mangled.c_str()
  std::string demangled;
  // What the compiler wrote into the kernel's cubin (cubin_resources.h), or the fallback
  // figures when the image says nothing (kFallbackRegisters, no shared or local memory).
  int registers = kFallbackRegisters;
  int static_shared = 0;
  int local_bytes = 0;
  int const_bytes = 0;
  int param_bytes = 0;
  int launch_bound = 0;                // threads per block from __launch_bounds__; 0: none
  int max_threads = 1024;              // beyond this a launch fails: registers, launch bound
  int64_t override_ns = -1;            // from DEVSIM_KERNEL_NS, -1: use the model
  // cudaFuncAttributeMaxDynamicSharedMemorySize: what is left of the 48 KiB default per block
  // after static shared memory, until the program opts in to more.
  int max_dynamic_shared = 49152;
  // Lazy loading (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2): the runtime fetches
  // the kernel from its library at its first launch, a driver call CUPTI reports.
  mutable std::atomic<bool> fetched{false};

  // A kernel whose image carries no resources (PTX only, compressed entries, another
  // architecture): 32 registers let every launch of up to 1024 threads succeed.
  static constexpr int kFallbackRegisters = 32;

  static constexpr uint32_t kMagic = 0x6b65726eu;  // "kern"
};

// `resources`: what the kernel's image says about it, nullptr when nothing (fallback figures).
KernelInfo* register_kernel(const void* host_stub, const char* device_name,
                            const KernelResources* resources = nullptr);
// nvcc's registration: __cudaRegisterFatBinary hands the image once per module, then
// __cudaRegisterFunction names its kernels one by one under the same module handle.
void register_module_image(const void* module, const void* image);
KernelInfo* register_module_kernel(const void* module, const void* host_stub, const char* device_name);
// Registers one warp holds: `registers` per thread for 32 threads, allocated in units of 256.
int registers_per_warp(int registers);
// Threads per block a kernel using `registers` per thread can launch with: the register file
// of a block (65536) divided among warps.
int register_limited_threads(int registers);
KernelInfo* find_kernel(const void* host_stub);
KernelInfo* find_kernel_by_name(const char* mangled_name);
// Validates a handle that claims to be a KernelInfo* (cudaKernel_t, cudaFunction_t, CUfunction).
KernelInfo* kernel_from_handle(const void* handle);

// Device storage of a __device__/__constant__ variable, keyed by its host shadow.
void register_variable(const void* host_shadow, const char* name, size_t size);
void* variable_storage(const void* symbol, size_t* size);

uint64_t kernel_duration_ns(const KernelInfo& k, Dim3 grid, Dim3 block);

}  // namespace devsim
