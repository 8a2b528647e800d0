// Lazy resolution of the real CUDA runtime functions behind our interposed symbols
// (dlsym may allocate and recurse, so each name is resolved once, by its own name). A
// RealSymbol is resolved at its first call, not in a constructor: libcudart is often loaded
// later (dlopen by a framework, maybe RTLD_LOCAL). Results are cached, misses included; a miss
// is retried only after the process loaded another object, and every cached address is
// dropped when the process unloads an object (the runtime that held it may be gone, its
// address range reused by the next library).
//
// Each RealSymbol belongs to one runtime major: libprofagent.so exports every hook once per
// symbol version it supports (`cudaMalloc@libcudart.so.12`, `cudaMalloc@libcudart.so.13`),
// and each forwards to the runtime of its own version, so a process holding both (a cu12
// framework beside a cu13 extension) keeps each call on the runtime its caller linked.
#pragma once

#include <atomic>
#include <cstdint>

namespace profagent::hooks {

// The symbol version nodes of NVIDIA's runtimes, which are also their sonames.
inline constexpr const char* kCudart13 = "libcudart.so.13";
inline constexpr const char* kCudart12 = "libcudart.so.12";

struct RealSymbol {
  const char* name;
  // The runtime this symbol must come from; nullptr: any runtime (13 first, then 12), for the
  // agent's own queries.
  const char* version;
  std::atomic<void*> address{nullptr};
  // Value of the loader's "objects added" counter when the last lookup failed; kNeverTried
  // before the first lookup. Plain miss caching keeps a missing symbol off the hot path.
  std::atomic<uint64_t> missed_at_generation{kNeverTried};
  static constexpr uint64_t kNeverTried = UINT64_MAX;

  explicit constexpr RealSymbol(const char* symbol_name, const char* runtime = kCudart13) noexcept
      : name(symbol_name), version(runtime) {}
};

// Every RealSymbol is listed in one ELF section (a pointer each), so that an unload can drop
// all cached addresses without a registration step at start-up: the hooks may be called
// before any constructor of ours ran.
#define PROFAGENT_REGISTER_REAL_SYMBOL(tag, symbol)                                   \
  [[gnu::used, gnu::section("profagent_real_symbols")]] ::profagent::hooks::RealSymbol* \
      profagent_registered_##tag = &(symbol)

// The real function, or nullptr when no loaded runtime of the symbol's version defines it.
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
