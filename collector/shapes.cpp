#include "collector/shapes.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>

#include "collector/api.h"

namespace profagent::collector {
namespace {

constexpr uint64_t kDefaultArenaWords = uint64_t(8) << 20;  // 64 MiB of address space

std::atomic<uint64_t> g_arena_words{kDefaultArenaWords};  // fixed once g_arena is set
std::atomic<uint64_t*> g_arena{nullptr};
std::atomic<uint64_t> g_cursor{0};
std::atomic<uint64_t> g_dropped{0};

uint64_t arena_words() noexcept { return g_arena_words.load(std::memory_order_relaxed); }

uint64_t* arena() noexcept {
  uint64_t* words = g_arena.load(std::memory_order_acquire);
  if (words != nullptr) return words;
  void* mapped = mmap(nullptr, arena_words() * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  uint64_t* expected = nullptr;
  if (!g_arena.compare_exchange_strong(expected, static_cast<uint64_t*>(mapped))) {
    munmap(mapped, arena_words() * sizeof(uint64_t));  // another thread won the race
    return expected;
  }
  return static_cast<uint64_t*>(mapped);
}

uint64_t words_needed(const ShapeArg* args, uint32_t count) noexcept {
  uint64_t words = 1;
  for (uint32_t i = 0; i < count; ++i) {
    words += 1 + (args[i].rank >= 0 ? uint64_t(args[i].rank) : 0);
  }
  return words;
}

}  // namespace

uint64_t record_shapes(const ShapeArg* args, uint32_t count) noexcept {
  for (uint32_t i = 0; i < count; ++i) {
    if (args[i].rank > int32_t(kMaxShapeRank) || (args[i].rank > 0 && args[i].dims == nullptr)) {
      g_dropped.fetch_add(1, std::memory_order_relaxed);
      return 0;  // refuse rather than guess
    }
  }
  uint64_t* words = arena();
  const uint64_t capacity = arena_words();
  const uint64_t need = words_needed(args, count);
  const uint64_t at = words == nullptr ? capacity : g_cursor.fetch_add(need, std::memory_order_relaxed);
  if (at + need > capacity) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  uint64_t* out = words + at;
  *out++ = count;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t rank = args[i].rank >= 0 ? uint32_t(args[i].rank) : kNotTensorRank;
    *out++ = (uint64_t(args[i].type) << 32) | rank;
    for (uint32_t d = 0; rank != kNotTensorRank && d < rank; ++d) *out++ = uint64_t(args[i].dims[d]);
  }
  return at + 1;
}

uint64_t record_words(const uint64_t* words_in, uint32_t count) noexcept {
  uint64_t* words = arena();
  const uint64_t capacity = arena_words();
  const uint64_t need = uint64_t(count) + 1;
  const uint64_t at = words == nullptr ? capacity : g_cursor.fetch_add(need, std::memory_order_relaxed);
  if (at + need > capacity) {
    g_dropped.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  words[at] = count;
  for (uint32_t i = 0; i < count; ++i) words[at + 1 + i] = words_in[i];
  return at + 1;
}

std::vector<uint64_t> read_words(uint64_t handle) {
  const uint64_t* words = g_arena.load(std::memory_order_acquire);
  if (words == nullptr || handle == 0 || handle > arena_words()) return {};
  const uint64_t count = std::min(words[handle - 1], arena_words() - handle);
  return std::vector<uint64_t>(words + handle, words + handle + count);
}

void read_shapes(uint64_t handle, const std::vector<std::string>& names,
                 std::vector<std::vector<int64_t>>& dims, std::vector<std::string>& types) {
  const uint64_t* words = g_arena.load(std::memory_order_acquire);
  if (words == nullptr || handle == 0 || handle > arena_words()) return;
  const uint64_t* in = words + (handle - 1);
  const uint64_t* end = words + arena_words();
  const uint64_t count = *in++;
  for (uint64_t i = 0; i < count && in < end; ++i) {
    const uint64_t header = *in++;
    const uint32_t rank = uint32_t(header & 0xFFFFFFFFu);
    const uint32_t type = uint32_t(header >> 32);
    std::vector<int64_t> shape;
    for (uint32_t d = 0; rank != kNotTensorRank && d < rank && in < end; ++d) shape.push_back(int64_t(*in++));
    dims.push_back(std::move(shape));
    types.push_back(type < names.size() ? names[type] : std::string());
  }
}

void shapes_not_recorded() noexcept { g_dropped.fetch_add(1, std::memory_order_relaxed); }

uint64_t dropped_shape_records() noexcept { return g_dropped.load(std::memory_order_relaxed); }

void configure_shape_store(size_t bytes) noexcept {
  if (g_arena.load(std::memory_order_acquire) != nullptr) return;  // reserved already: kept
  g_arena_words.store(std::max<uint64_t>(bytes / sizeof(uint64_t), 1), std::memory_order_relaxed);
}

size_t shape_store_bytes() noexcept { return size_t(arena_words() * sizeof(uint64_t)); }

}  // namespace profagent::collector
