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

namespace devsim {
namespace {

struct Variable {
  void* storage;
  size_t size;
};

struct Registry {
  std::shared_mutex mutex;  // leaf lock
  std::unordered_map<const void*, KernelInfo*> kernels;
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

uint64_t fnv1a(const char* s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull;
  return h;
}

// Plausible, stable attributes: 16..128 registers in steps of 8, a little static shared memory
// for one kernel in four.
void derive_attributes(KernelInfo& k) {
  uint64_t h = fnv1a(k.name);
  k.registers = 16 + static_cast<int>(h % 15) * 8;
  k.static_shared = (h >> 8) % 4 == 0 ? static_cast<int>(((h >> 12) % 8 + 1) * 1024) : 0;
  k.const_bytes = 0;
  k.local_bytes = 0;
  k.max_threads = k.registers > 64 ? 512 : 1024;
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
    k.max_threads = k.registers > 64 ? 512 : 1024;
  }
}

}  // namespace

KernelInfo* register_kernel(const void* host_stub, const char* device_name) {
  Registry& r = registry();
  std::unique_lock lock(r.mutex);
  auto [it, inserted] = r.kernels.try_emplace(host_stub, nullptr);
  if (!inserted) return it->second;
  auto* k = new KernelInfo;
  k->host_stub = host_stub;
  k->name = device_name;
  k->demangled = demangle(device_name);
  derive_attributes(*k);
  apply_overrides(*k);
  it->second = k;
  r.handles.insert(k);
  return k;
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
