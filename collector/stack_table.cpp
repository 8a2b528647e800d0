#include "collector/stack_table.h"

#include <sys/mman.h>

#include <cstring>

namespace profagent::collector {
namespace {

constexpr uint64_t kEmpty = 0;
constexpr uint64_t kWriting = 1;
constexpr uint32_t kMaxProbes = 64;  // then the table counts as full for this stack

void* map_lazily(size_t bytes) noexcept {
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return memory == MAP_FAILED ? nullptr : memory;
}

}  // namespace

// A multiply-xorshift mix per word (as in splitmix64): cheap, and return addresses that differ
// in a few low bits still spread over the whole table.
uint64_t hash_stack(const uint64_t* words, uint32_t count) noexcept {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ count;
  for (uint32_t i = 0; i < count; ++i) {
    h ^= words[i];
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  }
  return h < 2 ? h + 2 : h;  // never kEmpty or kWriting
}

bool StackTable::reserve(uint32_t slots, uint64_t arena_words) noexcept {
  if (slots == 0 || (slots & (slots - 1)) != 0) return false;
  auto* table = static_cast<Slot*>(map_lazily(sizeof(Slot) * slots));
  auto* arena = static_cast<uint64_t*>(map_lazily(sizeof(uint64_t) * arena_words));
  if (table == nullptr || arena == nullptr) {
    if (table) munmap(table, sizeof(Slot) * slots);
    if (arena) munmap(arena, sizeof(uint64_t) * arena_words);
    return false;
  }
  arena_ = arena, arena_words_ = arena_words, mask_ = slots - 1;
  slots_ = table;  // zero-filled pages: every slot empty
  return true;
}

bool StackTable::claim_words(uint32_t count, uint64_t& offset) noexcept {
  offset = arena_used_.fetch_add(count, std::memory_order_relaxed);
  return offset + count <= arena_words_;
}

StackId StackTable::intern(const uint64_t* words, uint32_t count) noexcept {
  if (slots_ == nullptr || count == 0) return kNoStack;
  const uint64_t hash = hash_stack(words, count);
  for (uint32_t probe = 0; probe < kMaxProbes; ++probe) {
    const uint32_t index = uint32_t(hash + probe) & mask_;
    Slot& slot = slots_[index];
    uint64_t state = slot.state.load(std::memory_order_acquire);
    if (state == kEmpty) {
      if (!slot.state.compare_exchange_strong(state, kWriting, std::memory_order_acquire)) {
        if (state == kWriting) continue;  // another writer got it first: never wait for it
      } else {
        uint64_t offset = 0;
        if (!claim_words(count, offset)) {  // the arena is full: give the slot back
          slot.state.store(kEmpty, std::memory_order_release);
          return kNoStack;
        }
        std::memcpy(arena_ + offset, words, count * sizeof(uint64_t));
        slot.offset = offset, slot.count = count;
        slot.state.store(hash, std::memory_order_release);
        return index + 1;
      }
    }
    if (state == hash && slot.count == count &&
        std::memcmp(arena_ + slot.offset, words, count * sizeof(uint64_t)) == 0) {
      return index + 1;
    }
  }
  return kNoStack;
}

StackWords StackTable::words(StackId id) const noexcept {
  if (slots_ == nullptr || id == kNoStack || id - 1 > mask_) return {};
  const Slot& slot = slots_[id - 1];
  const uint64_t state = slot.state.load(std::memory_order_acquire);
  if (state == kEmpty || state == kWriting) return {};
  return {arena_ + slot.offset, slot.count};
}

}  // namespace profagent::collector
