#include "collector/names.h"

#include <cxxabi.h>
#include <pthread.h>

#include <cstdlib>
#include <mutex>

#include "collector/api.h"

namespace profagent::collector {
namespace {

struct NameTable {
  std::mutex mutex;  // leaf lock
  std::vector<std::string> names{std::string()};  // NameId 0 = kNoName
  std::unordered_map<std::string, NameId> ids;
  std::unordered_map<const void*, std::string> kernels;
};

// Leaked: names are looked up by a freeze that may run during exit.
NameTable& table() {
  static NameTable* instance = [] {
    auto* created = new NameTable;
    // A fork while another thread holds the lock must not leave the child's copy locked.
    pthread_atfork([] { table().mutex.lock(); }, [] { table().mutex.unlock(); },
                   [] { table().mutex.unlock(); });
    return created;
  }();
  return *instance;
}

// Built when the library loads, while the process has one thread: a function-local static
// first built by one thread while another forks leaves the child waiting forever on its
// initialisation guard (reliability.fork_stress_light hung on names' table()).
[[gnu::constructor]] void build_name_table_at_load() { table(); }

}  // namespace

NameId intern(std::string_view name) noexcept {
  if (name.empty()) return kNoName;
  try {
    NameTable& t = table();
    std::lock_guard lock(t.mutex);
    auto [it, inserted] = t.ids.try_emplace(std::string(name), NameId(t.names.size()));
    if (inserted) t.names.emplace_back(name);
    return it->second;
  } catch (...) {
    static SwallowedSite site{"interning a name failed: events of that name show none"};
    note_swallowed(site);
    return kNoName;
  }
}

void note_kernel_name(const void* host_function, const char* device_name) noexcept {
  if (!host_function || !device_name) return;
  try {
    NameTable& t = table();
    std::lock_guard lock(t.mutex);
    t.kernels[host_function] = device_name;
  } catch (...) {
    static SwallowedSite site{"remembering a kernel's name failed: its launches may show no kernel name"};
    note_swallowed(site);
  }
}

std::vector<std::string> names_snapshot() {
  NameTable& t = table();
  std::lock_guard lock(t.mutex);
  return t.names;
}

std::unordered_map<const void*, std::string> kernel_names_snapshot() {
  NameTable& t = table();
  std::lock_guard lock(t.mutex);
  return t.kernels;
}

bool kernel_name_of(const void* kernel, std::string& name) {
  NameTable& t = table();
  std::lock_guard lock(t.mutex);
  const auto it = t.kernels.find(kernel);
  if (it == t.kernels.end()) return false;
  name = it->second;
  return true;
}

std::string demangle(std::string_view name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return std::string(name);
  std::string mangled(name);
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !readable) return mangled;
  std::string result(readable);
  std::free(readable);
  return result;
}

}  // namespace profagent::collector
