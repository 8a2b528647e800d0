// Lazy resolution of the real functions behind our interposed symbols (dlsym may allocate
// and recurse, so each name is resolved once, by its own name). A RealSymbol is resolved at its
// first call, not in a constructor: the library is often loaded later (dlopen by a framework,
// maybe RTLD_LOCAL). Results are cached, misses included; a miss is retried only after the
// process loaded another object, and every cached address is dropped when the process unloads
// an object (the library that held it may be gone, its address range reused by the next one).
//
// Each RealSymbol belongs to one version of one library (a LibraryVersion): libprofagent.so
// exports a versioned library's hooks once per symbol version it supports
// (`cudaMalloc@libcudart.so.12`, `cudaMalloc@libcudart.so.13`), and each forwards to the
// library of its own version, so a process holding both (a cu12 framework beside a cu13
// extension) keeps each call on the library its caller linked.
#pragma once

#include <atomic>
#include <cstdint>

namespace profagent::hooks {

// One version of an interposed library, as the resolver looks for it.
struct LibraryVersion {
  const char* soname;          // the loaded object's file name holds it: "libcudart.so.13"
  // The version node its symbols carry ("libcudart.so.13"), or nullptr for a library that
  // versions none of its symbols (libnccl.so.2).
  const char* symbol_version;
  // What the sonames of all its majors start with ("libcudart.so."), or nullptr: a definition
  // found in an object of the family but of another soname is refused (it would take calls
  // with another major's ABI).
  const char* family;
};

struct RealSymbol {
  const char* name;
  // The library version this symbol must come from; nullptr: the next definition in the
  // global scope, whichever object holds it.
  const LibraryVersion* library;
  // Tried when `library` defines no such symbol (the agent's own queries take whichever
  // runtime major is loaded); nullptr: none.
  const LibraryVersion* fallback;
  std::atomic<void*> address{nullptr};
  // Value of the loader's "objects added" counter when the last lookup failed; kNeverTried
  // before the first lookup. Plain miss caching keeps a missing symbol off the hot path.
  std::atomic<uint64_t> missed_at_generation{kNeverTried};
  static constexpr uint64_t kNeverTried = UINT64_MAX;

  explicit constexpr RealSymbol(const char* symbol_name, const LibraryVersion* from = nullptr,
                                const LibraryVersion* or_from = nullptr) noexcept
      : name(symbol_name), library(from), fallback(or_from) {}
};

// Every RealSymbol is listed in one ELF section (a pointer each), so that an unload can drop
// all cached addresses without a registration step at start-up: the hooks may be called
// before any constructor of ours ran.
#define PROFAGENT_REGISTER_REAL_SYMBOL(tag, symbol)                                   \
  [[gnu::used, gnu::section("profagent_real_symbols")]] ::profagent::hooks::RealSymbol* \
      profagent_registered_##tag = &(symbol)

// The real function, or nullptr when no loaded object of the symbol's library version defines it.
// Never returns an address inside libprofagent.so itself.
void* resolve_slow(RealSymbol& symbol) noexcept;

inline void* resolve(RealSymbol& symbol) noexcept {
  void* address = symbol.address.load(std::memory_order_acquire);
  return address != nullptr ? address : resolve_slow(symbol);
}

// Forgets every cached address and miss of every registered RealSymbol (after an unload).
void forget_real_symbols() noexcept;

// How many objects the dynamic loader has added (dl_iterate_phdr's dlpi_adds) and removed
// (dlpi_subs) so far.
uint64_t loader_generation() noexcept;
uint64_t loader_removals() noexcept;

}  // namespace profagent::hooks
