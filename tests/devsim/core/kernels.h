// Kernels and device variables registered by nvcc-generated code (__cudaRegisterFunction,
// __cudaRegisterVar), and the kernel duration model.
#pragma once

#include <cstdint>
#include <string>

namespace devsim {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return uint64_t{x} * y * z; }
};

// One registered kernel. Its address is what __cudaGetKernel hands out as cudaKernel_t and
// cudaGetFuncBySymbol as cudaFunction_t / CUfunction. Never freed.
struct KernelInfo {
  uint32_t magic = kMagic;
  const void* host_stub = nullptr;
  const char* name = nullptr;          // mangled device name (static storage in the binary)
  std::string demangled;
  // Attributes the real compiler would report; deterministic per name (hash-derived).
  int registers = 32;
  int static_shared = 0;
  int local_bytes = 0;
  int const_bytes = 0;
  int max_threads = 1024;
  int64_t override_ns = -1;            // from DEVSIM_KERNEL_NS, -1: use the model
  int max_dynamic_shared = 49152;      // cudaFuncAttributeMaxDynamicSharedMemorySize

  static constexpr uint32_t kMagic = 0x6b65726eu;  // "kern"
};

KernelInfo* register_kernel(const void* host_stub, const char* device_name);
KernelInfo* find_kernel(const void* host_stub);
KernelInfo* find_kernel_by_name(const char* mangled_name);
// Validates a handle that claims to be a KernelInfo* (cudaKernel_t, cudaFunction_t, CUfunction).
KernelInfo* kernel_from_handle(const void* handle);

// Device storage of a __device__/__constant__ variable, keyed by its host shadow.
void register_variable(const void* host_shadow, const char* name, size_t size);
void* variable_storage(const void* symbol, size_t* size);

uint64_t kernel_duration_ns(const KernelInfo& k, Dim3 grid, Dim3 block);

}  // namespace devsim
