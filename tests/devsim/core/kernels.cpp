#include "kernels.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>

#include "config.h"
#include "device.h"
#include "memory.h"
#include "module_image.h"

namespace devsim {
namespace {

struct Variable {
  void* storage;
  size_t size;
};

struct Registry {
  std::shared_mutex mutex;  // leaf lock
  std::unordered_map<const void*, KernelInfo*> kernels;
  std::unordered_map<const void*, const ImageResources*> modules;  // leaked with the registry
  std::unordered_set<const void*> handles;  // every KernelInfo* handed out
  std::unordered_map<const void*, Variable> variables;
};

Registry& registry() {
  static Registry* r = new Registry;  // leaked on purpose
  return *r;
}

std::string demangle(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = status == 0 && out ? out : name;
  std::free(out);
  return result;
}

int round_up(int value, int unit) { return (value + unit - 1) / unit * unit; }

void derive_limits(KernelInfo& k) {
  const int bound = k.launch_bound > 0 ? std::min(k.launch_bound, Arch::max_threads_per_block)
                                       : Arch::max_threads_per_block;
  k.max_threads = std::min(bound, register_limited_threads(k.registers));
  k.max_dynamic_shared = std::max(0, Arch::shared_per_block - k.static_shared);
}

void take_resources(KernelInfo& k, const KernelResources* r) {
  if (r == nullptr) return;
  if (r->registers > 0) k.registers = r->registers;
  k.static_shared = r->static_shared;
  k.local_bytes = r->local_bytes;
  k.param_bytes = r->param_bytes;
  k.launch_bound = r->max_threads;
}

const KernelOverride* first_match(const std::vector<KernelOverride>& overrides, const KernelInfo& k) {
  for (const KernelOverride& o : overrides) {
    if (std::regex_search(k.name, o.pattern) || std::regex_search(k.demangled, o.pattern)) return &o;
  }
  return nullptr;
}

void apply_overrides(KernelInfo& k) {
  if (const KernelOverride* o = first_match(config().kernel_ns, k)) k.override_ns = static_cast<int64_t>(o->ns);
  if (const KernelOverride* o = first_match(config().kernel_regs, k)) {
    k.registers = static_cast<int>(std::min<uint64_t>(o->ns, 255));
  }
}

}  // namespace

KernelInfo* register_kernel(const void* host_stub, const char* device_name, const KernelResources* resources) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto [it, inserted] = r.kernels.try_emplace(host_stub, nullptr);
  const std::string mangled = device_name != nullptr ? device_name : "";
  // The same stub again (a module registered twice, a plugin reloaded at the same address) is
  // the same kernel; another name there is a new library at an unloaded one's addresses.
  if (!inserted && it->second->mangled == mangled) return it->second;
  auto* k = new KernelInfo;  // an earlier one stays: queued kernels and handles still use it
  k->host_stub = host_stub;
  k->mangled = mangled;
  k->name = k->mangled.c_str();
  k->demangled = demangle(k->name);
  take_resources(*k, resources);
  apply_overrides(*k);
  derive_limits(*k);
  it->second = k;
  r.handles.insert(k);
  return k;
}

// Parsed outside the lock: an image may be large.
void register_module_image(const void* module, const void* image) {
  auto* resources = new ImageResources(resources_in_image(image));
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  if (!r.modules.try_emplace(module, resources).second) delete resources;
}

KernelInfo* register_module_kernel(const void* module, const void* host_stub, const char* device_name) {
  const KernelResources* found = nullptr;
  {
    Registry& r = registry();
    std::shared_lock lock(r.mutex);
    auto it = r.modules.find(module);
    if (it != r.modules.end() && device_name != nullptr) {
      auto kernel = it->second->find(device_name);
      if (kernel != it->second->end()) found = &kernel->second;
    }
  }
  return register_kernel(host_stub, device_name, found);
}

int registers_per_warp(int registers) {
  constexpr int kAllocationUnit = 256;  // registers are given to a warp in units of 256
  return round_up(std::max(registers, 1) * Arch::warp_size, kAllocationUnit);
}

int register_limited_threads(int registers) {
  const int warps = Arch::regs_per_block / registers_per_warp(registers);
  return std::min(Arch::max_threads_per_block, warps * Arch::warp_size);
}

KernelInfo* find_kernel(const void* host_stub) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.kernels.find(host_stub);
  return it == r.kernels.end() ? nullptr : it->second;
}

KernelInfo* find_kernel_by_name(const char* mangled_name) {
  if (mangled_name == nullptr) return nullptr;
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  for (const auto& [stub, k] : r.kernels) {
    if (std::strcmp(k->name, mangled_name) == 0) return k;
  }
  return nullptr;
}

KernelInfo* kernel_from_handle(const void* handle) {
  if (handle == nullptr) return nullptr;
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  if (!r.handles.count(handle)) return nullptr;
  return static_cast<KernelInfo*>(const_cast<void*>(handle));
}

void register_variable(const void* host_shadow, const char* name, size_t size) {
  void* storage = allocate_persistent(size);
  if (storage == nullptr) return;
  std::memset(storage, 0, size);
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  r.variables[host_shadow] = Variable{storage, size};
}

void* variable_storage(const void* symbol, size_t* size) {
  Registry& r = registry();
  std::shared_lock lock(r.mutex);
  auto it = r.variables.find(symbol);
  if (it == r.variables.end()) return nullptr;
  if (size) *size = it->second.size;
  return it->second.storage;
}

// Throughput model: the device holds sm_count * max_threads_per_sm threads at once; a kernel
// takes one wave time per full wave of threads, never less than the floor.
uint64_t kernel_duration_ns(const KernelInfo& k, Dim3 grid, Dim3 block) {
  if (k.override_ns >= 0) return static_cast<uint64_t>(k.override_ns);
  const Config& c = config();
  uint64_t threads = grid.count() * block.count();
  uint64_t resident = uint64_t(c.sm_count) * Arch::max_threads_per_sm;
  uint64_t waves = (threads + resident - 1) / resident;
  uint64_t ns = waves * c.kernel_wave_ns;
  return ns < c.kernel_min_ns ? c.kernel_min_ns : ns;
}

}  // namespace devsim
