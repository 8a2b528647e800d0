// CorrelationMap: a table keyed by CUPTI correlation ids, for the device pool's links (every
// recorded call's correlation -> the external id it links to).
//
// Correlation ids are a counter: CUPTI numbers API calls in the order they are made, so the ids
// a window links are a few dense runs. They are kept in pages of 1024 consecutive ids (a value
// array and a bitmap of the ids present), the pages in id order. A lookup is the page found
// last, else a binary search over the pages; an insert writes its slot and nothing else. With
// CUPTI on a million calls bring a million links, mostly all at once at the exit flush: a hash
// table grown by doubling copied them into each larger table and faulted in every table's
// pages (over half the flush's page faults), where pages are made once and filled in place.
//
// Iteration goes in id order. erase() keeps the page (iterators stay valid across it, as with
// std::unordered_map); drop_empty_pages() frees the pages left empty. Inserting may make a page,
// which invalidates iterators: hold none across an insert. Entries read as `it->first` /
// `it->second`, and `for (const auto& [correlation, value] : map)` works.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace profagent::collector {

template <typename Value>
class CorrelationMap {
  static constexpr unsigned kPageBits = 10;
  static constexpr uint32_t kPageIds = 1u << kPageBits;
  static_assert(std::is_trivially_copyable_v<Value> && std::is_trivially_destructible_v<Value>,
                "a page's values are raw memory, written when their id is inserted");
  struct Page {
    explicit Page(uint32_t k) : key(k) {}
    uint32_t key;        // correlation >> kPageBits
    uint32_t count = 0;  // ids present
    uint64_t present[kPageIds / 64] = {};
    // Not zero-filled: a slot is written by the insert of its id, read only while present.
    alignas(Value) unsigned char storage[sizeof(Value) * kPageIds];
    Value* values() { return std::launder(reinterpret_cast<Value*>(storage)); }
    const Value* values() const { return std::launder(reinterpret_cast<const Value*>(storage)); }
    bool has(uint32_t at) const { return (present[at / 64] >> (at % 64)) & 1; }
  };

 public:
  // What an iterator points at: the id and a reference to its value.
  template <bool Const>
  struct Ref {
    uint32_t first;
    std::conditional_t<Const, const Value&, Value&> second;
  };

  template <bool Const>
  class Iterator {
   public:
    using Map = std::conditional_t<Const, const CorrelationMap, CorrelationMap>;
    using iterator_category = std::forward_iterator_tag;
    using value_type = Ref<Const>;
    using difference_type = std::ptrdiff_t;
    using reference = Ref<Const>;
    struct Arrow {
      Ref<Const> ref;
      const Ref<Const>* operator->() const { return &ref; }
    };
    using pointer = Arrow;

    Iterator(Map* map, std::size_t page, uint32_t at) : map_(map), page_(page), at_(at) { skip_free(); }
    Ref<Const> operator*() const {
      auto& page = *map_->pages_[page_];
      return {page.key << kPageBits | at_, page.values()[at_]};
    }
    Arrow operator->() const { return {**this}; }
    Iterator& operator++() { return ++at_, skip_free(), *this; }
    bool operator==(const Iterator& o) const { return page_ == o.page_ && at_ == o.at_; }
    bool operator!=(const Iterator& o) const { return !(*this == o); }
    operator Iterator<true>() const { return {map_, page_, at_}; }  // NOLINT: as std containers

   private:
    friend class CorrelationMap;
    void skip_free() {
      for (; page_ < map_->pages_.size(); ++page_, at_ = 0) {
        const Page& page = *map_->pages_[page_];
        while (at_ < kPageIds && !page.has(at_)) ++at_;
        if (at_ < kPageIds) return;
      }
      at_ = 0;
    }
    Map* map_;
    std::size_t page_;
    uint32_t at_;
  };
  using iterator = Iterator<false>;
  using const_iterator = Iterator<true>;

  CorrelationMap() = default;
  CorrelationMap(CorrelationMap&&) noexcept = default;
  CorrelationMap& operator=(CorrelationMap&&) noexcept = default;

  iterator begin() { return {this, 0, 0}; }
  iterator end() { return {this, pages_.size(), 0}; }
  const_iterator begin() const { return {this, 0, 0}; }
  const_iterator end() const { return {this, pages_.size(), 0}; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  iterator find(uint32_t id) {
    const std::size_t page = page_of(id);
    if (page == pages_.size() || !pages_[page]->has(slot(id))) return end();
    return {this, page, slot(id)};
  }
  const_iterator find(uint32_t id) const { return const_cast<CorrelationMap*>(this)->find(id); }
  std::size_t count(uint32_t id) const { return find(id) != end(); }

  // As std::unordered_map::try_emplace: inserts {id, Value(args...)} unless the id is there.
  template <typename... Args>
  std::pair<iterator, bool> try_emplace(uint32_t id, Args&&... args) {
    // The page used last inline: links come in id order, a page's worth at a time.
    const bool last = last_ < pages_.size() && pages_[last_]->key == page_key(id);
    const std::size_t index = last ? last_ : page_for(id);
    Page& page = *pages_[index];
    const uint32_t at = slot(id);
    if (page.has(at)) return {iterator(this, index, at), false};
    new (&page.values()[at]) Value(std::forward<Args>(args)...);
    page.present[at / 64] |= uint64_t(1) << (at % 64);
    ++page.count, ++size_;
    return {iterator(this, index, at), true};
  }
  Value& operator[](uint32_t id) { return try_emplace(id).first->second; }

  // Inserts `value` under `id`, or overwrites the value there: operator[] without an iterator
  // made and read back (the device pool takes a million links this way at the exit flush).
  void assign(uint32_t id, const Value& value) {
    const bool last = last_ < pages_.size() && pages_[last_]->key == page_key(id);
    Page& page = *pages_[last ? last_ : page_for(id)];
    const uint32_t at = slot(id);
    new (&page.values()[at]) Value(value);
    uint64_t& word = page.present[at / 64];
    const uint64_t bit = uint64_t(1) << (at % 64);
    if (!(word & bit)) word |= bit, ++page.count, ++size_;
  }

  // fn(id, value) for every entry, in id order: a bitmap word at a time, where iterators test
  // each slot.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const std::unique_ptr<Page>& page : pages_) {
      for (uint32_t w = 0; w < kPageIds / 64; ++w) {
        for (uint64_t bits = page->present[w]; bits != 0; bits &= bits - 1) {
          const uint32_t at = w * 64 + uint32_t(__builtin_ctzll(bits));
          fn(page->key << kPageBits | at, page->values()[at]);
        }
      }
    }
  }

  iterator erase(iterator it) {
    Page& page = *pages_[it.page_];
    page.present[it.at_ / 64] &= ~(uint64_t(1) << (it.at_ % 64));
    --page.count, --size_;
    return ++it;
  }
  std::size_t erase(uint32_t id) {
    const iterator it = find(id);
    if (it == end()) return 0;
    erase(it);
    return 1;
  }

  // Frees the pages erase() left empty (invalidates iterators).
  void drop_empty_pages() {
    std::erase_if(pages_, [](const std::unique_ptr<Page>& page) { return page->count == 0; });
    last_ = pages_.size();
  }

 private:
  static uint32_t page_key(uint32_t id) { return id >> kPageBits; }
  static uint32_t slot(uint32_t id) { return id & (kPageIds - 1); }

  // The index of `id`'s page, pages_.size() when it has none.
  std::size_t page_of(uint32_t id) const {
    const uint32_t key = page_key(id);
    if (last_ < pages_.size() && pages_[last_]->key == key) return last_;
    auto found = std::lower_bound(pages_.begin(), pages_.end(), key,
                                  [](const std::unique_ptr<Page>& page, uint32_t k) { return page->key < k; });
    if (found == pages_.end() || (*found)->key != key) return pages_.size();
    last_ = std::size_t(found - pages_.begin());
    return last_;
  }
  std::size_t page_for(uint32_t id) {
    const std::size_t found = page_of(id);
    if (found != pages_.size()) return found;
    const uint32_t key = page_key(id);
    auto at = std::lower_bound(pages_.begin(), pages_.end(), key,
                               [](const std::unique_ptr<Page>& page, uint32_t k) { return page->key < k; });
    at = pages_.insert(at, std::make_unique<Page>(key));
    last_ = std::size_t(at - pages_.begin());
    return last_;
  }

  std::vector<std::unique_ptr<Page>> pages_;  // by key
  std::size_t size_ = 0;
  mutable std::size_t last_ = 0;  // the page found last: ids are mostly met in order
};

}  // namespace profagent::collector
