// Resolution order for a symbol of library version V (hooks/resolve.h, LibraryVersion):
//   1. dlvsym(RTLD_NEXT, name, V's symbol version) — the versioned definition in the global
//      scope (before glibc 2.36 plain dlsym returned the OLDEST version); skipped for a
//      library without symbol versions;
//   2. a library loaded RTLD_LOCAL is invisible to RTLD_NEXT: find it with dl_iterate_phdr (an
//      object whose name holds V's soname), take a handle with dlopen(path, RTLD_NOLOAD) (no
//      new load, only a reference, dropped at once) and look the symbol up there, versioned
//      first, then unversioned;
//   3. dlsym(RTLD_NEXT, name) — an unversioned library — unless the definition found lives in
//      another major of the same library (it would take calls with the wrong ABI).
// A symbol without a library takes step 3 alone. Any candidate inside libprofagent.so is
// rejected: RTLD_NEXT from a copy of ourselves (or a handle lookup that finds our own export
// first) would make a hook call itself forever.
// None of these lookups pins the library: RTLD_NEXT and handle lookups add no dependency,
// so a program that unloads its runtime unloads it with the agent too (then every cached
// address is forgotten, see forget_real_symbols()).
#include "hooks/resolve.h"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstring>

#include "collector/api.h"

// The section the linker collects PROFAGENT_REGISTER_REAL_SYMBOL entries into.
extern "C" {
extern profagent::hooks::RealSymbol* __start_profagent_real_symbols[] __attribute__((weak, visibility("hidden")));
extern profagent::hooks::RealSymbol* __stop_profagent_real_symbols[] __attribute__((weak, visibility("hidden")));
}

namespace profagent::hooks {
namespace {

struct LoaderCounts {
  uint64_t adds = 0;
  uint64_t subs = 0;
};

int read_counts(dl_phdr_info* info, size_t, void* data) {
  auto& counts = *static_cast<LoaderCounts*>(data);
  counts.adds = info->dlpi_adds;
  counts.subs = info->dlpi_subs;
  return 1;  // the counters are the same in every entry: stop at the first
}

LoaderCounts loader_counts() noexcept {
  LoaderCounts counts;
  dl_iterate_phdr(read_counts, &counts);
  return counts;
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

// The file name of the object holding `address` ("" if none).
const char* object_of(void* address) noexcept {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fbase == own_base() ? nullptr : info.dli_fname;
}

// An object of `library`'s family with another soname (libcudart.so.12 when 13 is wanted).
bool other_major(const char* file, const LibraryVersion* library) noexcept {
  if (library == nullptr || library->family == nullptr) return false;
  return std::strstr(file, library->family) != nullptr && std::strstr(file, library->soname) == nullptr;
}

void* accept(void* address, const LibraryVersion* library) noexcept {
  if (address == nullptr) return nullptr;
  const char* file = object_of(address);
  if (file == nullptr || other_major(file, library)) return nullptr;
  return address;
}

void* versioned(void* handle, const char* name, const LibraryVersion& library) noexcept {
  return library.symbol_version != nullptr ? accept(dlvsym(handle, name, library.symbol_version), &library) : nullptr;
}

void* lookup_in(void* handle, const char* name, const LibraryVersion& library) noexcept {
  void* address = versioned(handle, name, library);
  return address != nullptr ? address : accept(dlsym(handle, name), &library);
}

// The loaded objects whose name contains the library's soname, copied (at most kMaxMatches).
// dlopen is never called inside dl_iterate_phdr's callback: the callback runs under the
// loader's write lock, and a dlopen there waits for the loader's main lock, which another
// thread's dlopen (holding it while it waits for the write lock) may hold: a deadlock.
constexpr int kMaxMatches = 4;
struct LocalSearch {
  const LibraryVersion& library;
  int matches = 0;
  char names[kMaxMatches][PATH_MAX] = {};
};

int collect_object(dl_phdr_info* info, size_t, void* data) {
  auto& search = *static_cast<LocalSearch*>(data);
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, search.library.soname) == nullptr) return 0;
  if (std::strlen(info->dlpi_name) >= PATH_MAX) return 0;
  std::strcpy(search.names[search.matches++], info->dlpi_name);
  return search.matches == kMaxMatches ? 1 : 0;
}

void* search_objects(const char* name, const LibraryVersion& library) noexcept {
  LocalSearch search{library};
  dl_iterate_phdr(collect_object, &search);
  for (int i = 0; i < search.matches; ++i) {
    void* handle = dlopen(search.names[i], RTLD_NOLOAD | RTLD_LAZY);
    if (handle == nullptr) continue;
    void* found = lookup_in(handle, name, library);
    dlclose(handle);  // drops only our reference; RTLD_NOLOAD never loaded anything
    if (found != nullptr) return found;
  }
  return nullptr;
}

void* find_in(const char* name, const LibraryVersion* library) noexcept {
  if (library != nullptr) {
    void* address = versioned(RTLD_NEXT, name, *library);
    if (address != nullptr) return address;
    address = search_objects(name, *library);
    if (address != nullptr) return address;
  }
  return accept(dlsym(RTLD_NEXT, name), library);
}

void* find_real(const RealSymbol& symbol) noexcept {
  void* address = find_in(symbol.name, symbol.library);
  return address != nullptr || symbol.fallback == nullptr ? address : find_in(symbol.name, symbol.fallback);
}

}  // namespace

uint64_t loader_generation() noexcept { return loader_counts().adds; }
uint64_t loader_removals() noexcept { return loader_counts().subs; }

void* resolve_slow(RealSymbol& symbol) noexcept {
  // dlsym may call back into hooked code on this thread (another interposer, a malloc hook):
  // mark the agent busy so such calls pass straight through (dlsym may allocate,
  // https://github.com/wolfcw/libfaketime/pull/463).
  collector::AgentBusy busy;
  const uint64_t generation = loader_generation();
  const uint64_t missed_at = symbol.missed_at_generation.load(std::memory_order_relaxed);
  if (missed_at == generation) return nullptr;
  void* address = find_real(symbol);
  if (address == nullptr) {
    symbol.missed_at_generation.store(generation, std::memory_order_relaxed);
    return nullptr;
  }
  symbol.address.store(address, std::memory_order_release);
  return address;
}

void forget_real_symbols() noexcept {
  if (__start_profagent_real_symbols == nullptr) return;
  for (RealSymbol** entry = __start_profagent_real_symbols; entry != __stop_profagent_real_symbols; ++entry) {
    (*entry)->address.store(nullptr, std::memory_order_release);
    (*entry)->missed_at_generation.store(RealSymbol::kNeverTried, std::memory_order_relaxed);
  }
}

}  // namespace profagent::hooks
