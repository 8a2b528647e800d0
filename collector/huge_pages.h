// Large buffers the window's flush fills once (the cut's copy of the host events, the joined
// records, the summaries' per-record tables): on 2 MB pages their first touch takes ~500 times
// fewer page faults, and in a VM each fault costs microseconds, more than writing the bytes.
// Only a hint: with transparent huge pages off (or "never") the kernel ignores it and nothing
// changes. Header-only: the exporters use it without linking the collector.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace profagent {

// The whole 2 MB pages inside [data, data + bytes); nothing for buffers under 8 MB, whose faults
// cost little and whose neighbours on the heap should keep small pages.
inline void prefer_huge_pages(const void* data, std::size_t bytes) noexcept {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  if (bytes < 4 * kHugePage) return;
  const uintptr_t begin = (uintptr_t(data) + kHugePage - 1) & ~(kHugePage - 1);
  const uintptr_t end = (uintptr_t(data) + bytes) & ~(kHugePage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// reserve(n) and the hint for the storage, before anything touches it.
template <typename T>
void reserve_on_huge_pages(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  prefer_huge_pages(v.data(), v.capacity() * sizeof(T));
}

// A vector of n copies of `value`, its storage hinted before it is filled.
template <typename T>
std::vector<T> filled_on_huge_pages(std::size_t n, const T& value) {
  std::vector<T> v;
  reserve_on_huge_pages(v, n);
  v.assign(n, value);
  return v;
}

}  // namespace profagent
