// FlatMap / FlatSet: hash tables of integer keys (CUPTI correlation ids, host event ids) kept in
// one array, for the window's per-record bookkeeping (the device pool's links, the claim's
// waiting sets, the join's indexes). std::unordered_map allocates a node per entry: with CUPTI
// on, every recorded call brings a link, and a million malloc/free pairs plus their pointer
// chasing were a tenth of the exit flush. Here an insert is a hash and a probe in memory that
// is already there.
//
// Open addressing with linear probing; an erased entry leaves a tombstone, so iterators stay
// valid across erase (erase-while-iterating works as with std::unordered_map) and a find never
// stops early. Inserting may rehash, which invalidates iterators and references (unlike
// std::unordered_map's references): hold none across an insert. Keys are unsigned integers;
// values are default-constructible. Entries read as `it->first` / `it->second`, and
// `for (auto& [key, value] : map)` works.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

namespace profagent::collector {

template <typename Key, typename Value>
class FlatMap {
  static_assert(std::is_unsigned_v<Key>, "FlatMap keys are unsigned integers");

 public:
  struct Entry {
    Key first{};
    Value second{};
  };

  template <bool Const>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Entry;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, const Entry*, Entry*>;
    using reference = std::conditional_t<Const, const Entry&, Entry&>;
    using Map = std::conditional_t<Const, const FlatMap, FlatMap>;
    using Ref = std::conditional_t<Const, const Entry&, Entry&>;
    using Ptr = std::conditional_t<Const, const Entry*, Entry*>;
    Iterator(Map* map, std::size_t at) : map_(map), at_(at) { skip_free(); }
    Ref operator*() const { return map_->entries_[at_]; }
    Ptr operator->() const { return &map_->entries_[at_]; }
    Iterator& operator++() { return ++at_, skip_free(), *this; }
    bool operator==(const Iterator& o) const { return at_ == o.at_; }
    bool operator!=(const Iterator& o) const { return at_ != o.at_; }
    operator Iterator<true>() const { return {map_, at_}; }  // NOLINT: as std containers
    std::size_t slot() const { return at_; }

   private:
    void skip_free() {
      while (at_ < map_->state_.size() && map_->state_[at_] != kFull) ++at_;
    }
    Map* map_;
    std::size_t at_;
  };
  using iterator = Iterator<false>;
  using const_iterator = Iterator<true>;

  FlatMap() = default;
  FlatMap(std::initializer_list<std::pair<Key, Value>> entries) {
    for (const auto& [key, value] : entries) try_emplace(key, value);
  }

  iterator begin() { return {this, 0}; }
  iterator end() { return {this, state_.size()}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, state_.size()}; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Allocates nothing for n == 0: an empty table owns no memory (a thread's first allocation
  // can cost it a malloc arena of its own, 64 MiB of address space).
  void reserve(std::size_t n) {
    if (n == 0 || fits(n)) return;
    std::size_t capacity = kMinCapacity;
    while (!fits_in(n, capacity)) capacity *= 2;
    rehash(capacity);
  }
  void clear() {
    entries_.clear(), state_.clear();
    size_ = used_ = 0;
  }

  iterator find(Key key) { return {this, slot_of(key)}; }
  const_iterator find(Key key) const { return {this, slot_of(key)}; }
  std::size_t count(Key key) const { return slot_of(key) != state_.size(); }

  // As std::unordered_map::try_emplace: inserts {key, Value(args...)} unless the key is there.
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(Key key, Args&&... args) {
    const std::size_t found = slot_of(key);
    if (found != state_.size()) return {iterator(this, found), false};
    if (!fits(used_ + 1)) rehash(grown_capacity());  // live entries and tombstones
    std::size_t at = home(key);
    while (state_[at] == kFull) at = (at + 1) & mask();  // a tombstone is reused
    if (state_[at] == kEmpty) ++used_;
    state_[at] = kFull;
    entries_[at] = Entry{key, Value(std::forward<Args>(args)...)};
    ++size_;
    return {iterator(this, at), true};
  }
  template <typename... Args>
  std::pair<iterator, bool> emplace(Key key, Args&&... args) {
    return try_emplace(key, std::forward<Args>(args)...);
  }
  Value& operator[](Key key) { return try_emplace(key).first->second; }

  iterator erase(iterator it) {
    state_[it.slot()] = kErased;
    --size_;
    return ++it;
  }
  std::size_t erase(Key key) {
    const std::size_t at = slot_of(key);
    if (at == state_.size()) return 0;
    state_[at] = kErased;
    --size_;
    return 1;
  }

 private:
  enum : uint8_t { kEmpty = 0, kFull = 1, kErased = 2 };
  static constexpr std::size_t kMinCapacity = 16;

  std::size_t mask() const { return state_.size() - 1; }
  // 32-bit keys are CUPTI correlation ids, a counter: their own low bits put consecutive keys
  // in consecutive slots, so inserts and lookups in id order walk the table in memory order (a
  // scattering hash made every access of a million-entry table a cache miss: +30 % user time
  // of the exit flush at 500 k launches). 64-bit keys are host event ids, which carry their
  // thread in the high half: the same low bits on every thread would pile the threads' keys
  // into one run of probes, so they are scattered (Fibonacci hashing).
  std::size_t home(Key key) const {
    if constexpr (sizeof(Key) <= 4) return std::size_t(key) & mask();
    return std::size_t((uint64_t(key) * 0x9E3779B97F4A7C15ull) >> 32) & mask();
  }
  static bool fits_in(std::size_t n, std::size_t capacity) { return n * 8 <= capacity * 7 - 8; }
  bool fits(std::size_t n) const { return !state_.empty() && fits_in(n, state_.size()); }
  // Room for a quarter more than the live entries: enough that cleaning tombstones at the same
  // size is not redone on every insert, no more (a table near an address-space limit must not
  // ask for twice what it holds).
  std::size_t grown_capacity() const {
    std::size_t capacity = state_.empty() ? kMinCapacity : state_.size();
    while (!fits_in(size_ + 1 + size_ / 4, capacity)) capacity *= 2;
    return capacity;
  }

  // The slot holding `key`, or state_.size() when it is absent.
  std::size_t slot_of(Key key) const {
    if (size_ == 0) return state_.size();
    for (std::size_t at = home(key);; at = (at + 1) & mask()) {
      if (state_[at] == kEmpty) return state_.size();
      if (state_[at] == kFull && entries_[at].first == key) return at;
    }
  }

  void rehash(std::size_t capacity) {
    std::vector<Entry> entries(capacity);
    std::vector<uint8_t> state(capacity, kEmpty);
    entries.swap(entries_), state.swap(state_);
    size_ = used_ = 0;
    for (std::size_t i = 0; i < state.size(); ++i) {
      if (state[i] != kFull) continue;
      std::size_t at = home(entries[i].first);
      while (state_[at] != kEmpty) at = (at + 1) & mask();
      state_[at] = kFull;
      entries_[at] = std::move(entries[i]);
      ++size_, ++used_;
    }
  }

  std::vector<Entry> entries_;
  std::vector<uint8_t> state_;
  std::size_t size_ = 0;  // live entries
  std::size_t used_ = 0;  // live entries and tombstones: what probes walk over
};

// The same table as a set of keys.
template <typename Key>
class FlatSet {
 public:
  FlatSet() = default;
  FlatSet(std::initializer_list<Key> keys) {
    for (Key key : keys) insert(key);
  }
  bool insert(Key key) { return map_.try_emplace(key).second; }
  std::size_t erase(Key key) { return map_.erase(key); }
  std::size_t count(Key key) const { return map_.count(key); }
  std::size_t size() const { return map_.size(); }
  bool empty() const { return map_.empty(); }
  void reserve(std::size_t n) { map_.reserve(n); }

 private:
  struct Nothing {};
  FlatMap<Key, Nothing> map_;
};

}  // namespace profagent::collector
