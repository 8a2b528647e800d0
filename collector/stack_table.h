// Interned call stacks: each distinct stack is stored once and named by a 32-bit id, so a
// repeated stack costs a hash and a compare, never a copy.
//
// A stack is a sequence of 64-bit words, innermost first: a native return address is one word;
// a Python frame is two (kPythonFrameTag | instruction offset, then the code object's address).
// User-space addresses never have bit 63 set, so the tag cannot be mistaken for an address.
//
// Lock-free and allocation-free after enable: a hook on any thread, a signal handler
// interrupting another insert on the same thread, or a forked child may intern concurrently.
// An insert claims an empty slot with a compare-exchange, copies its words into a bump arena and
// publishes the slot (release). A lookup that meets a slot still being written by someone else
// passes it by (it never waits: the writer may be the very thread it interrupted), so the same
// stack can get two ids; the export merges them by content. A full table or arena interns
// nothing: the caller counts that stack as lost.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace profagent::collector {

using StackId = uint32_t;  // 0: no stack
inline constexpr StackId kNoStack = 0;
inline constexpr uint64_t kPythonFrameTag = uint64_t{1} << 63;

struct StackWords {
  const uint64_t* words = nullptr;
  uint32_t count = 0;
};

class StackTable {
 public:
  // Reserves address space for `slots` stacks (a power of two) of `arena_words` words in all.
  // Pages are touched only as stacks are added. False if the memory could not be mapped.
  bool reserve(uint32_t slots, uint64_t arena_words) noexcept;
  bool ready() const noexcept { return slots_ != nullptr; }

  StackId intern(const uint64_t* words, uint32_t count) noexcept;
  // A published stack, or {nullptr, 0} for an id that is not (yet) one.
  StackWords words(StackId id) const noexcept;
  uint32_t capacity() const noexcept { return mask_ + 1; }

 private:
  struct Slot {
    std::atomic<uint64_t> state{0};  // 0 empty, 1 being written, else the stack's hash
    uint64_t offset = 0;             // into arena_
    uint32_t count = 0;
  };
  bool claim_words(uint32_t count, uint64_t& offset) noexcept;

  Slot* slots_ = nullptr;
  uint32_t mask_ = 0;
  uint64_t* arena_ = nullptr;
  uint64_t arena_words_ = 0;
  std::atomic<uint64_t> arena_used_{0};
};

uint64_t hash_stack(const uint64_t* words, uint32_t count) noexcept;

}  // namespace profagent::collector
