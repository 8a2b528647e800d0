// FlatMap / FlatSet: hash tables of integer keys (CUPTI correlation ids, host event ids) kept in
// one array, for the window's per-record bookkeeping (the device pool's links, the claim's
// waiting sets, the join's indexes). std::unordered_map allocates a node per entry: with CUPTI
// on, every recorded call brings a link, and a million malloc/free pairs plus their pointer
// chasing were a tenth of the exit flush. Here an insert is a hash and a probe in memory that
// is already there.
//
// The slots are raw memory (malloc, never zero-filled): only the slots a key lands in are ever
// written, so a big table faults in just the pages its keys use. Correlation ids are a counter
// and land in consecutive slots: a million links in a table of two million slots touch half its
// entry pages, where zero-filling a std::vector touched them all (the device pool's links, grown
// at the exit flush, were over half of that flush's page faults with CUPTI on). Values are
// therefore trivially copyable (ids, indexes, small records of them).
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
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <stdexcept>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

namespace profagent::collector {

template <typename Key, typename Value>
class FlatMap {
  static_assert(std::is_unsigned_v<Key>, "FlatMap keys are unsigned integers");
  static_assert(std::is_trivially_copyable_v<Value> && std::is_trivially_destructible_v<Value>,
                "FlatMap values live in raw memory: trivially copyable");

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
      while (at_ < map_->capacity_ && map_->state_[at_] != kFull) ++at_;
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
  FlatMap(const FlatMap& other) { *this = other; }
  FlatMap(FlatMap&& other) noexcept { swap(other); }
  FlatMap& operator=(const FlatMap& other) {
    if (this == &other) return *this;
    clear();
    if (other.capacity_ == 0) return *this;
    allocate(other.capacity_);
    std::memcpy(state_.get(), other.state_.get(), capacity_);
    for (std::size_t i = 0; i < capacity_; ++i) {
      if (state_[i] == kFull) new (&entries_[i]) Entry(other.entries_[i]);
    }
    size_ = other.size_, used_ = other.used_;
    return *this;
  }
  FlatMap& operator=(FlatMap&& other) noexcept {
    if (this != &other) clear(), swap(other);
    return *this;
  }
  void swap(FlatMap& other) noexcept {
    std::swap(entries_, other.entries_), std::swap(state_, other.state_);
    std::swap(capacity_, other.capacity_), std::swap(size_, other.size_), std::swap(used_, other.used_);
  }

  iterator begin() { return {this, 0}; }
  iterator end() { return {this, capacity_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, capacity_}; }
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
    entries_.reset(), state_.reset();
    capacity_ = size_ = used_ = 0;
  }

  iterator find(Key key) { return {this, slot_of(key)}; }
  const_iterator find(Key key) const { return {this, slot_of(key)}; }
  std::size_t count(Key key) const { return slot_of(key) != capacity_; }
  const Value& at(Key key) const {  // as std::unordered_map::at
    const std::size_t found = slot_of(key);
    if (found == capacity_) throw std::out_of_range("FlatMap::at: no such key");
    return entries_[found].second;
  }

  // As std::unordered_map::try_emplace: inserts {key, Value(args...)} unless the key is there.
  // One walk finds the key or, on its way, the slot to insert it in (a tombstone is reused),
  // rather than a lookup and then a second walk for the free slot: the exit flush inserts every
  // claimed device record's link.
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(Key key, Args&&... args) {
    std::size_t at = capacity_;
    for (std::size_t probe = capacity_ == 0 ? 0 : home(key); capacity_ != 0; probe = (probe + 1) & mask()) {
      const uint8_t state = state_[probe];
      if (state == kFull) {
        if (entries_[probe].first == key) return {iterator(this, probe), false};
        continue;
      }
      if (at == capacity_) at = probe;
      if (state == kEmpty) break;  // the key is not further on
    }
    if (!fits(used_ + 1)) {  // live entries and tombstones
      rehash(grown_capacity());
      for (at = home(key); state_[at] == kFull;) at = (at + 1) & mask();
    }
    if (state_[at] == kEmpty) ++used_;
    state_[at] = kFull;
    new (&entries_[at]) Entry{key, Value(std::forward<Args>(args)...)};
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
    if (at == capacity_) return 0;
    state_[at] = kErased;
    --size_;
    return 1;
  }

 private:
  enum : uint8_t { kEmpty = 0, kFull = 1, kErased = 2 };
  static constexpr std::size_t kMinCapacity = 16;

  std::size_t mask() const { return capacity_ - 1; }
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
  bool fits(std::size_t n) const { return capacity_ != 0 && fits_in(n, capacity_); }
  // Room for a quarter more than the live entries: enough that cleaning tombstones at the same
  // size is not redone on every insert, no more (a table near an address-space limit must not
  // ask for twice what it holds).
  std::size_t grown_capacity() const {
    std::size_t capacity = capacity_ == 0 ? kMinCapacity : capacity_;
    while (!fits_in(size_ + 1 + size_ / 4, capacity)) capacity *= 2;
    return capacity;
  }

  // The slot holding `key`, or capacity_ when it is absent.
  std::size_t slot_of(Key key) const {
    if (size_ == 0) return capacity_;
    for (std::size_t at = home(key);; at = (at + 1) & mask()) {
      if (state_[at] == kEmpty) return capacity_;
      if (state_[at] == kFull && entries_[at].first == key) return at;
    }
  }

  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  template <typename T>
  using Raw = std::unique_ptr<T[], Free>;

  // Fresh slots, all empty: the states zeroed by calloc (pages the kernel gives zeroed are not
  // written), the entries left unwritten.
  void allocate(std::size_t capacity) {
    Raw<Entry> entries(static_cast<Entry*>(std::malloc(capacity * sizeof(Entry))));
    Raw<uint8_t> state(static_cast<uint8_t*>(std::calloc(capacity, 1)));
    if (!entries || !state) throw std::bad_alloc();
    entries_ = std::move(entries), state_ = std::move(state);
    capacity_ = capacity;
  }

  // Out of memory leaves the table as it was.
  void rehash(std::size_t capacity) {
    FlatMap fresh;
    fresh.allocate(capacity);
    for (std::size_t i = 0; i < capacity_; ++i) {
      if (state_[i] != kFull) continue;
      std::size_t at = fresh.home(entries_[i].first);
      while (fresh.state_[at] != kEmpty) at = (at + 1) & fresh.mask();
      fresh.state_[at] = kFull;
      new (&fresh.entries_[at]) Entry(entries_[i]);
      ++fresh.size_, ++fresh.used_;
    }
    swap(fresh);
  }

  Raw<Entry> entries_;
  Raw<uint8_t> state_;
  std::size_t capacity_ = 0;  // slots (a power of two), 0 before the first insert
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
