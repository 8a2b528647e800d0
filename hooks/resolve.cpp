// Resolution order (pitfalls §4):
//   1. dlvsym(RTLD_NEXT, name, "libcudart.so.13") — the right version where the runtime
//      versions its symbols (before glibc 2.36 plain dlsym returned the OLDEST version);
//   2. dlsym(RTLD_NEXT, name) — unversioned runtimes (devsim, older builds);
//   3. a libcudart loaded RTLD_LOCAL is invisible to RTLD_NEXT: find it with dl_iterate_phdr,
//      take a handle with dlopen(path, RTLD_NOLOAD) (no new load, only a reference) and look
//      the symbol up there.
// Any candidate inside libprofagent.so is rejected: RTLD_NEXT from a copy of ourselves (or a
// handle lookup that finds our own export first) would make a hook call itself forever.
//
// Why a loader generation instead of a dlopen hook: interposing dlopen changes the caller
// that glibc sees, so DT_RUNPATH and $ORIGIN of the real caller stop applying and the host
// could load different libraries. dl_iterate_phdr's dlpi_adds counts every load for free.
#include "hooks/resolve.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "collector/api.h"

namespace profagent::hooks {
namespace {

constexpr const char* kRuntimeVersion = "libcudart.so.13";

uint64_t& generation_slot(void* data) { return *static_cast<uint64_t*>(data); }

int read_generation(dl_phdr_info* info, size_t, void* data) {
  generation_slot(data) = info->dlpi_adds;
  return 1;  // the counter is the same in every entry: stop at the first
}

// The base address of the object that holds this very function, i.e. libprofagent.so.
const void* own_base() noexcept {
  static std::atomic<const void*> base{nullptr};
  const void* known = base.load(std::memory_order_relaxed);
  if (known != nullptr) return known;
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&own_base), &info) != 0) known = info.dli_fbase;
  base.store(known, std::memory_order_relaxed);
  return known;
}

bool is_ours(void* address) noexcept {
  if (address == nullptr) return false;
  Dl_info info{};
  return dladdr(address, &info) != 0 && info.dli_fbase == own_base();
}

void* accept(void* address) noexcept { return is_ours(address) ? nullptr : address; }

void* lookup_in(void* handle, const char* name) noexcept {
  void* address = accept(dlvsym(handle, name, kRuntimeVersion));
  return address != nullptr ? address : accept(dlsym(handle, name));
}

struct LocalSearch {
  const char* name;
  void* found = nullptr;
};

int search_object(dl_phdr_info* info, size_t, void* data) {
  auto& search = *static_cast<LocalSearch*>(data);
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libcudart.so") == nullptr) return 0;
  void* handle = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);
  if (handle == nullptr) return 0;
  search.found = lookup_in(handle, search.name);
  dlclose(handle);  // drops only our reference; RTLD_NOLOAD never loaded anything
  return search.found != nullptr ? 1 : 0;
}

void* find_real(const char* name) noexcept {
  void* address = lookup_in(RTLD_NEXT, name);
  if (address != nullptr) return address;
  LocalSearch search{name};
  dl_iterate_phdr(search_object, &search);
  return search.found;
}

}  // namespace

uint64_t loader_generation() noexcept {
  uint64_t generation = 0;
  dl_iterate_phdr(read_generation, &generation);
  return generation;
}

void* resolve_slow(RealSymbol& symbol) noexcept {
  // dlsym may call back into hooked code on this thread (another interposer, a malloc hook):
  // mark the agent busy so such calls pass straight through (pitfalls §1).
  collector::AgentBusy busy;
  const uint64_t generation = loader_generation();
  const uint64_t missed_at = symbol.missed_at_generation.load(std::memory_order_relaxed);
  if (missed_at == generation) return nullptr;
  void* address = find_real(symbol.name);
  if (address == nullptr) {
    symbol.missed_at_generation.store(generation, std::memory_order_relaxed);
    return nullptr;
  }
  symbol.address.store(address, std::memory_order_release);
  return address;
}

}  // namespace profagent::hooks
