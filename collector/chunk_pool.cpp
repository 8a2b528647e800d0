#include "collector/chunk_pool.h"

#include <sys/mman.h>

#include <algorithm>

namespace profagent::collector {

static_assert(kEventsPerChunk > 1000, "a chunk should hold many events");

ChunkPool::ChunkPool(size_t bytes, size_t at_most) noexcept {
  size_t count = bytes / kChunkBytes;
  if (count == 0) count = 1;
  if (count > UINT32_MAX - 1) count = UINT32_MAX - 1;
  requested_ = count * kChunkBytes;
  count = std::max<size_t>(std::min(count, at_most / kChunkBytes), 1);
  const size_t floor = std::min(count, kMinReserveBytes / kChunkBytes);
  for (;; count /= 2) {
    void* arena = mmap(nullptr, count * kChunkBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (arena != MAP_FAILED) {
      arena_ = static_cast<std::byte*>(arena);
      count_ = uint32_t(count);
      return;
    }
    if (count / 2 < floor || count == 1) return;
  }
}

ChunkPool::~ChunkPool() {
  if (arena_ != nullptr) munmap(arena_, size_t(count_) * kChunkBytes);
}

Chunk* ChunkPool::at(uint32_t index) const noexcept {
  return reinterpret_cast<Chunk*>(arena_ + size_t(index) * kChunkBytes);
}

uint32_t ChunkPool::index_of(const Chunk* chunk) const noexcept {
  return uint32_t((reinterpret_cast<const std::byte*>(chunk) - arena_) / kChunkBytes);
}

Chunk* ChunkPool::pop() noexcept {
  uint64_t head = head_.load(std::memory_order_acquire);
  while (uint32_t(head) != 0) {
    Chunk* chunk = at(uint32_t(head) - 1);
    uint64_t tag = (head >> 32) + 1;
    uint64_t next = (tag << 32) | chunk->free_link.load(std::memory_order_relaxed);
    if (head_.compare_exchange_weak(head, next, std::memory_order_acquire,
                                    std::memory_order_acquire)) {
      free_count_.fetch_sub(1, std::memory_order_relaxed);
      chunk->reset();
      return chunk;
    }
  }
  // Free list empty: carve a fresh chunk. The load first keeps an exhausted pool free of
  // read-modify-writes (the hot path retries on every event while exhausted).
  if (bump_.load(std::memory_order_relaxed) >= count_) return nullptr;
  uint64_t index = bump_.fetch_add(1, std::memory_order_relaxed);
  if (index >= count_) return nullptr;
  Chunk* chunk = at(uint32_t(index));
  if (index >= warmed_.load(std::memory_order_relaxed)) commit_pages(chunk, 1);
  chunk->reset();
  return chunk;
}

// One call commits a run of fresh chunks' pages instead of a page fault per 4 KiB spread over
// the writer's next events. Older kernels refuse (EINVAL): the faults then happen as usual.
void ChunkPool::commit_pages(Chunk* first, uint32_t chunks) noexcept {
#ifdef MADV_POPULATE_WRITE
  madvise(first, size_t(chunks) * kChunkBytes, MADV_POPULATE_WRITE);
#else
  (void)first, (void)chunks;
#endif
}

uint32_t ChunkPool::handed_out() const noexcept {
  const uint64_t bump = bump_.load(std::memory_order_relaxed);
  return bump < count_ ? uint32_t(bump) : count_;
}

size_t ChunkPool::committed_bytes() const noexcept {
  return size_t(std::max(warmed_.load(std::memory_order_relaxed), handed_out())) * kChunkBytes;
}

// Chunk by chunk, publishing each, so a writer racing ahead of a long warm-up benefits from
// the part already done (pop() commits the pages of any chunk not warmed yet itself).
void ChunkPool::warm_ahead(uint32_t ahead) noexcept {
  if (arena_ == nullptr) return;
  const uint64_t goal = std::min<uint64_t>(uint64_t(handed_out()) + ahead, count_);
  for (uint32_t next = std::max(warmed_.load(std::memory_order_relaxed), handed_out());
       next < goal; ++next) {
    commit_pages(at(next), 1);
    warmed_.store(next + 1, std::memory_order_relaxed);
  }
}

void ChunkPool::push(Chunk* chunk) noexcept {
  uint32_t link = index_of(chunk) + 1;
  uint64_t head = head_.load(std::memory_order_relaxed);
  for (;;) {
    chunk->free_link.store(uint32_t(head), std::memory_order_relaxed);
    uint64_t next = (((head >> 32) + 1) << 32) | link;
    if (head_.compare_exchange_weak(head, next, std::memory_order_release,
                                    std::memory_order_relaxed)) {
      free_count_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
}

}  // namespace profagent::collector
