// Lazy resolution of the real CUDA runtime functions behind our interposed symbols
// (pitfalls §§ 1, 3, 4). A RealSymbol is resolved at its first call, not in a constructor:
// libcudart is often loaded later (dlopen by a framework, maybe RTLD_LOCAL). Results are
// cached, misses included; a miss is retried only after the process loaded another object.
#pragma once

#include <atomic>
#include <cstdint>

namespace profagent::hooks {

struct RealSymbol {
  const char* name;
  std::atomic<void*> address{nullptr};
  // Value of the loader's "objects added" counter when the last lookup failed; kNeverTried
  // before the first lookup. Plain miss caching keeps a missing symbol off the hot path.
  std::atomic<uint64_t> missed_at_generation{kNeverTried};
  static constexpr uint64_t kNeverTried = UINT64_MAX;

  explicit constexpr RealSymbol(const char* symbol_name) noexcept : name(symbol_name) {}
};

// The real function, or nullptr when no loaded libcudart defines it (logged once per symbol).
// Never returns an address inside libprofagent.so itself.
void* resolve_slow(RealSymbol& symbol) noexcept;

inline void* resolve(RealSymbol& symbol) noexcept {
  void* address = symbol.address.load(std::memory_order_acquire);
  return address != nullptr ? address : resolve_slow(symbol);
}

// How many objects the dynamic loader has added so far (dl_iterate_phdr's dlpi_adds).
uint64_t loader_generation() noexcept;

}  // namespace profagent::hooks
