// Records collected while a trace is read, in fixed-size chunks instead of one growing vector:
// a vector that doubles holds the old and the new copy of every record while it moves them (a
// peak of twice the records, for a trace of small events more than the file itself). At the
// end the records move once into an exactly sized vector, each chunk given back to the system
// as soon as it is emptied, so the peak stays one copy plus one chunk.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <utility>
#include <vector>

namespace profagent::report {

// Chunks are mapped and unmapped directly: memory that malloc frees stays in its heap (glibc
// raises its mmap threshold after the first large free), and would count twice while the
// records move into their vector.
template <typename T>
struct PagesAllocator {
  using value_type = T;
  PagesAllocator() = default;
  template <typename U>
  PagesAllocator(const PagesAllocator<U>&) {}
  T* allocate(std::size_t n) {
    void* p = mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) { munmap(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const PagesAllocator<U>&) const { return true; }
};

template <typename T>
class ChunkedRecords {
 public:
  // ~1 MiB per chunk: big enough to be its own mapping (freed to the system at once).
  static constexpr std::size_t kPerChunk = (std::size_t(1) << 20) / sizeof(T) + 1;

  T& emplace_back() {
    if (chunks_.empty() || chunks_.back().size() == kPerChunk) chunks_.emplace_back().reserve(kPerChunk);
    ++size_;
    return chunks_.back().emplace_back();
  }
  T& back() { return chunks_.back().back(); }
  std::size_t size() const { return size_; }

  // Appends every record to `out` in order and leaves this empty.
  void move_into(std::vector<T>& out) {
    out.reserve(out.size() + size_);
    for (Chunk& chunk : chunks_) {
      for (T& record : chunk) out.push_back(std::move(record));
      Chunk().swap(chunk);
    }
    chunks_.clear();
    size_ = 0;
  }

 private:
  using Chunk = std::vector<T, PagesAllocator<T>>;
  std::vector<Chunk> chunks_;
  std::size_t size_ = 0;
};

}  // namespace profagent::report
