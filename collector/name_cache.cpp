// intern_cached (api.h): names that programs pass on hot paths (an NVTX message per range) are
// looked up in a fixed, lock-free table keyed by their text before intern() takes its lock and
// builds a std::string. A slot is claimed once and never changes afterwards, so a reader that
// saw its key published (release/acquire) reads a complete, immutable entry. Names that find
// their slot taken by another name go through intern() each time (still correct, just slower).
#include <atomic>
#include <cstring>
#include <new>

#include "collector/api.h"

namespace profagent::collector {
namespace {

constexpr uint32_t kSlots = 4096;  // distinct hot names kept; copies are leaked with the table
constexpr uint64_t kClaimed = 1;   // a writer is filling the slot

struct Slot {
  std::atomic<uint64_t> key{0};  // 0 empty, kClaimed being filled, else the name's hash | 2
  const char* text = nullptr;    // the name's own copy (never freed)
  uint32_t size = 0;
  NameId id = kNoName;
};

Slot g_slots[kSlots];

uint64_t hash_of(std::string_view name) noexcept {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h | 2;  // never 0 nor kClaimed
}

void fill(Slot& slot, std::string_view name, NameId id, uint64_t key) noexcept {
  char* copy = new (std::nothrow) char[name.size() + 1];
  if (copy == nullptr) {
    slot.key.store(0, std::memory_order_release);  // give the slot back
    return;
  }
  std::memcpy(copy, name.data(), name.size());
  copy[name.size()] = '\0';
  slot.text = copy;
  slot.size = uint32_t(name.size());
  slot.id = id;
  slot.key.store(key, std::memory_order_release);
}

}  // namespace

NameId intern_cached(std::string_view name) noexcept {
  if (name.empty()) return kNoName;
  const uint64_t key = hash_of(name);
  Slot& slot = g_slots[(key >> 2) % kSlots];
  uint64_t seen = slot.key.load(std::memory_order_acquire);
  if (seen == key && slot.size == name.size() && std::memcmp(slot.text, name.data(), name.size()) == 0) {
    return slot.id;
  }
  const NameId id = intern(name);
  if (seen == 0 && id != kNoName &&
      slot.key.compare_exchange_strong(seen, kClaimed, std::memory_order_acquire)) {
    fill(slot, name, id, key);
  }
  return id;
}

}  // namespace profagent::collector
