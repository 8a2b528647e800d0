// Hooks on the entry points of the code nvcc generates. They record nothing; they learn
// facts: __cudaRegisterFatBinary is the first CUDA use of a process (its static constructors
// run before main), __cudaRegisterFunction gives each host stub its mangled device name, and
// __cudaGetKernel maps the cudaKernel_t handle that __cudaLaunchKernel receives (CUDA 13
// launch stubs) back to that stub, so those launches get kernel names too.
#include <cuda_runtime_api.h>

#include <mutex>
#include <unordered_map>

#include "hooks/hook.h"

extern "C" {
cudaError_t __cudaGetKernel(cudaKernel_t*, const void*);
void** __cudaRegisterFatBinary(void*);
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, uint3*, uint3*, dim3*,
                            dim3*, int*);
}

namespace {
using profagent::hooks::resolve;
using profagent::hooks::Site;

Site site_register_fat_binary{"__cudaRegisterFatBinary"};
Site site_register_function{"__cudaRegisterFunction"};
Site site_get_kernel{"__cudaGetKernel"};

// Host stub -> device name. Registration happens once per kernel, not on the hot path, so a
// mutex is fine. Leaked: modules may register or look up kernels during exit.
struct StubNames {
  std::mutex mutex;  // leaf lock: nothing is called while holding it
  std::unordered_map<const void*, const char*> names;
};
StubNames& stub_names() {
  static StubNames* names = new StubNames;
  return *names;
}

void remember_stub(const void* stub, const char* device_name) noexcept {
  try {
    StubNames& table = stub_names();
    std::lock_guard lock(table.mutex);
    table.names[stub] = device_name;  // the module's own string: lives as long as the module
  } catch (...) {
  }
}

const char* stub_name(const void* stub) noexcept {
  StubNames& table = stub_names();
  std::lock_guard lock(table.mutex);
  const auto found = table.names.find(stub);
  return found == table.names.end() ? nullptr : found->second;
}

template <typename Fn>
Fn* real_of(Site& site) noexcept {
  auto* real = reinterpret_cast<Fn*>(resolve(site.real));
  if (real == nullptr) profagent::hooks::report_unresolved(site);
  return real;
}
}  // namespace

PROFAGENT_EXPORT void** __cudaRegisterFatBinary(void* fat_cubin) {
  profagent::hooks::note_cuda_use();
  profagent::collector::cuda_in_use();
  auto* real = real_of<decltype(__cudaRegisterFatBinary)>(site_register_fat_binary);
  return real != nullptr ? real(fat_cubin) : nullptr;
}

PROFAGENT_EXPORT void __cudaRegisterFunction(void** module, const char* host_function, char* device_function,
                                             const char* device_name, int thread_limit, uint3* tid,
                                             uint3* bid, dim3* block, dim3* grid, int* warp_size) {
  auto* real = real_of<decltype(__cudaRegisterFunction)>(site_register_function);
  if (real == nullptr) return;
  if (device_function != nullptr) {
    profagent::collector::note_kernel_name(host_function, device_function);
    remember_stub(host_function, device_function);
  }
  real(module, host_function, device_function, device_name, thread_limit, tid, bid, block, grid, warp_size);
}

PROFAGENT_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_function) {
  auto* real = real_of<decltype(__cudaGetKernel)>(site_get_kernel);
  if (real == nullptr) return cudaErrorSharedObjectInitFailed;
  const cudaError_t result = real(kernel, host_function);
  if (result == cudaSuccess && kernel != nullptr) {
    const char* name = stub_name(host_function);
    if (name != nullptr) profagent::collector::note_kernel_name(*kernel, name);
  }
  return result;
}
