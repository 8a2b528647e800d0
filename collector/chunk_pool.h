// Fixed-size chunks for the per-thread event buffers, from one preallocated arena.
//
// The arena is one mmap(MAP_NORESERVE) region: virtual space is reserved up front, pages are
// committed only when a chunk is first written. Chunks never return to the system; they cycle
// through a lock-free free list (Treiber stack whose head carries a tag, so a chunk popped and
// pushed back between another thread's load and CAS cannot corrupt it: the ABA problem).
// Never-used chunks are handed out by a bump index, so start-up touches no page.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "collector/event.h"

namespace profagent::collector {

inline constexpr size_t kChunkBytes = 64 * 1024;
inline constexpr size_t kMinReserveBytes = 1u << 20;  // 16 chunks, about 21,000 events

struct Chunk {
  std::atomic<Chunk*> next;          // set once by the writer when it moves on (release)
  std::atomic<uint32_t> committed;   // events published so far (release by the writer)
  std::atomic<uint32_t> free_link;   // free-list successor: chunk index + 1, 0 = none
  HostEvent events[1];               // really kEventsPerChunk

  void reset() noexcept {
    next.store(nullptr, std::memory_order_relaxed);
    committed.store(0, std::memory_order_relaxed);
  }
};

inline constexpr uint32_t kEventsPerChunk =
    uint32_t((kChunkBytes - offsetof(Chunk, events)) / sizeof(HostEvent));

class ChunkPool {
 public:
  // Reserves `bytes` (rounded down to whole chunks, at least one), or `at_most` if less.
  // When the address space is limited (RLIMIT_AS, `ulimit -v`: MAP_NORESERVE still counts
  // against it) and mmap fails, retries with half as much down to kMinReserveBytes, so that
  // a limited process still records what fits. If even that fails the pool is empty: every
  // pop() then returns nullptr and the caller counts drops. reserved_bytes() <
  // requested_bytes() tells.
  explicit ChunkPool(size_t bytes, size_t at_most = SIZE_MAX) noexcept;
  ~ChunkPool();  // returns the arena (the agent's pool is leaked and never destroyed)
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  Chunk* pop() noexcept;            // a reset chunk, or nullptr when exhausted
  void push(Chunk* chunk) noexcept;  // give a chunk back for reuse
  uint32_t capacity() const noexcept { return count_; }
  size_t reserved_bytes() const noexcept { return size_t(count_) * kChunkBytes; }
  size_t requested_bytes() const noexcept { return requested_; }

  // Commits the pages of the next fresh chunks, up to `ahead` past those handed out, so the
  // writers do not pay for first touching them (2.3 us per 4 KiB page in the benchmark VM:
  // 27 ns per event). Called from an agent thread; never changes a chunk's contents, so it
  // may overlap a writer that already took one of those chunks.
  void warm_ahead(uint32_t ahead) noexcept;
  uint32_t handed_out() const noexcept;  // fresh chunks carved so far
  // Chunks handed out and not given back: what the writers and unread events hold.
  uint32_t in_use() const noexcept {
    // The count may lag a push or pop by an instant (even below 0): an estimate.
    const int64_t used = int64_t(handed_out()) - free_count_.load(std::memory_order_relaxed);
    return used > 0 ? uint32_t(used) : 0;
  }
  // Chunks whose pages were committed (handed out or warmed ahead): what the arena holds in
  // memory, since chunks never go back to the system.
  size_t committed_bytes() const noexcept;

 private:
  Chunk* at(uint32_t index) const noexcept;
  uint32_t index_of(const Chunk* chunk) const noexcept;
  static void commit_pages(Chunk* first, uint32_t chunks) noexcept;

  std::byte* arena_ = nullptr;
  uint32_t count_ = 0;
  size_t requested_ = 0;
  std::atomic<uint64_t> head_{0};   // (tag << 32) | (index + 1); low half 0 = empty
  std::atomic<uint64_t> bump_{0};   // chunks never handed out start here
  std::atomic<uint32_t> warmed_{0};  // chunks below this index have committed pages
  std::atomic<int64_t> free_count_{0};    // chunks on the free list (once per chunk, not per event)
};

}  // namespace profagent::collector
