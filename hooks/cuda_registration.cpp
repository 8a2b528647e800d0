// Hooks on the entry points of the code nvcc generates. They record nothing; they learn
// facts: __cudaRegisterFatBinary is the first CUDA use of a process (its static constructors
// run before main), __cudaRegisterFunction gives each host stub its mangled device name, and
// __cudaGetKernel maps the cudaKernel_t handle that __cudaLaunchKernel receives (CUDA 13
// launch stubs) back to that stub, so those launches get kernel names too.
#include <cuda_runtime_api.h>

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "hooks/cudart.h"

extern "C" {
cudaError_t __cudaGetKernel(cudaKernel_t*, const void*);
void** __cudaRegisterFatBinary(void*);
void __cudaUnregisterFatBinary(void**);
void __cudaRegisterFunction(void**, const char*, char*, const char*, int, uint3*, uint3*, dim3*,
                            dim3*, int*);
}

namespace {
using profagent::hooks::CudaRuntime;
using profagent::hooks::CudartSite;
using profagent::hooks::resolve;

// One site per runtime major, as for every hook (hooks/hook.h, "Exported names").
struct RegistrationSites {
  CudartSite fat_binary;
  CudartSite unregister;
  CudartSite function;
  CudartSite get_kernel;
};
#define PROFAGENT_REGISTRATION_SITES(Library, version, tag, kind, symbol_version)                  \
  RegistrationSites sites_##tag{CudartSite{"__cudaRegisterFatBinary", version},                   \
                                CudartSite{"__cudaUnregisterFatBinary", version},                 \
                                CudartSite{"__cudaRegisterFunction", version},                    \
                                CudartSite{"__cudaGetKernel", version}};                          \
  PROFAGENT_REGISTER_REAL_SYMBOL(fat_binary_##tag, sites_##tag.fat_binary.real);                  \
  PROFAGENT_REGISTER_REAL_SYMBOL(unregister_##tag, sites_##tag.unregister.real);                  \
  PROFAGENT_REGISTER_REAL_SYMBOL(function_##tag, sites_##tag.function.real);                      \
  PROFAGENT_REGISTER_REAL_SYMBOL(get_kernel_##tag, sites_##tag.get_kernel.real);
PROFAGENT_LIBRARY_cudart(PROFAGENT_REGISTRATION_SITES)

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
    static profagent::collector::SwallowedSite site{"remembering a registered kernel's name failed: its launches "
                                                    "may show no kernel name"};
    profagent::collector::note_swallowed(site);
  }
}

const char* stub_name(const void* stub) noexcept {
  StubNames& table = stub_names();
  std::lock_guard lock(table.mutex);
  const auto found = table.names.find(stub);
  return found == table.names.end() ? nullptr : found->second;
}

template <typename Fn>
Fn* real_of(CudartSite& site) noexcept {
  auto* real = reinterpret_cast<Fn*>(resolve(site.real));
  if (real == nullptr) profagent::hooks::report_unresolved(site);
  return real;
}

// Registration starts the device backend (CUPTI must see modules load) but is not the
// program's first CUDA use: nvcc follows each registration with atexit(unregister), and the
// runtime tears itself down when the last module is unregistered. The agent's exit handler,
// registered at the first use (agent/lifecycle.cpp), must be registered after those so it runs
// before them; a flush after the teardown crashed NVIDIA's CUPTI (SIGSEGV, seen on an H100).
// Modules registered and not yet unregistered, all runtimes together.
std::atomic<int64_t> g_modules{0};

void** register_fat_binary(RegistrationSites& sites, void* fat_cubin) {
  profagent::collector::cuda_in_use();
  auto* real = real_of<decltype(__cudaRegisterFatBinary)>(sites.fat_binary);
  void** module = real != nullptr ? real(fat_cubin) : nullptr;
  if (module != nullptr) g_modules.fetch_add(1, std::memory_order_relaxed);
  return module;
}

// The last module's unregistration tears the runtime down: the device library is flushed
// before it (usually the exit flush has run already; not when a plugin holding the only module
// is unloaded, or when a module's handler runs after ours).
void unregister_fat_binary(RegistrationSites& sites, void** module) {
  auto* real = real_of<decltype(__cudaUnregisterFatBinary)>(sites.unregister);
  if (real == nullptr) return;
  if (module != nullptr && g_modules.fetch_sub(1, std::memory_order_relaxed) == 1) {
    profagent::collector::cuda_runtime_tearing_down();
  }
  real(module);
}

void register_function(RegistrationSites& sites, void** module, const char* host_function,
                       char* device_function, const char* device_name, int thread_limit, uint3* tid,
                       uint3* bid, dim3* block, dim3* grid, int* warp_size) {
  auto* real = real_of<decltype(__cudaRegisterFunction)>(sites.function);
  if (real == nullptr) return;
  if (device_function != nullptr) {
    profagent::collector::note_kernel_name(host_function, device_function);
    remember_stub(host_function, device_function);
  }
  real(module, host_function, device_function, device_name, thread_limit, tid, bid, block, grid, warp_size);
}

// The driver calls the runtime makes inside (CUDA 13: cuLibraryLoadData and cuLibraryGetKernel,
// reported by CUPTI with no runtime callback around them) are its own, not the program's: the
// callback leaves them alone while the hook forwards.
cudaError_t get_kernel(RegistrationSites& sites, cudaKernel_t* kernel, const void* host_function) {
  auto* real = real_of<decltype(__cudaGetKernel)>(sites.get_kernel);
  if (real == nullptr) return CudaRuntime::kUnavailable;
  cudaError_t result;
  {
    profagent::collector::HookForwarding forwarding;
    result = real(kernel, host_function);
  }
  if (result == cudaSuccess && kernel != nullptr) {
    const char* name = stub_name(host_function);
    if (name != nullptr) profagent::collector::note_kernel_name(*kernel, name);
  }
  return result;
}
}  // namespace

// The four entry points, once per runtime major.
#define PROFAGENT_REGISTRATION_HOOKS(Library, version, tag, kind, symbol_version)                              \
  PROFAGENT_HOOK_FUNCTION(kind, tag, symbol_version, __cudaRegisterFatBinary, (void* fat_cubin)) {             \
    return register_fat_binary(sites_##tag, fat_cubin);                                                        \
  }                                                                                                            \
  PROFAGENT_HOOK_FUNCTION(kind, tag, symbol_version, __cudaUnregisterFatBinary, (void** module)) {             \
    unregister_fat_binary(sites_##tag, module);                                                                \
  }                                                                                                            \
  PROFAGENT_HOOK_FUNCTION(kind, tag, symbol_version, __cudaRegisterFunction,                                   \
                          (void** m, const char* h, char* d, const char* n, int l, uint3* t, uint3* b, dim3* bl, \
                           dim3* g, int* w)) {                                                                 \
    register_function(sites_##tag, m, h, d, n, l, t, b, bl, g, w);                                             \
  }                                                                                                            \
  PROFAGENT_HOOK_FUNCTION(kind, tag, symbol_version, __cudaGetKernel,                                          \
                          (cudaKernel_t * kernel, const void* host_function)) {                                \
    return get_kernel(sites_##tag, kernel, host_function);                                                     \
  }

PROFAGENT_LIBRARY_cudart(PROFAGENT_REGISTRATION_HOOKS)
