// HostIdMap / HostIdSet: tables keyed by host event ids, for the window's per-event bookkeeping
// (which ids device records may link to, which calls still wait for their work, where a linked
// call is in the joined trace).
//
// A host event id is the recording thread's slot in its high half and that thread's counter in
// its low half (api.h new_event_id), so the ids of one window are a few dense runs, one per
// thread. They are kept in pages of 256 consecutive ids: a value array and a bitmap of the ids
// present, found by a hash of (thread, page) with the last page used remembered. Inserting or
// finding an id is an index into memory that is already there, with no allocation per entry
// (std::unordered_map allocates a node per entry: two maps of the window's calls cost about
// 400 instructions per call in malloc and free at the exit flush, a sixth of it with CUPTI on)
// and no hash per entry for ids met in order. A page is made when its first id is inserted, so
// the memory is that of the runs (an id a thread took for an event it then dropped costs one
// slot of a page in use, or nothing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

#include "collector/flat_map.h"

namespace profagent::collector {

template <typename Value>
class HostIdMap {
 public:
  HostIdMap() = default;
  HostIdMap(std::initializer_list<std::pair<uint64_t, Value>> entries) {
    for (const auto& [id, value] : entries) try_emplace(id, value);
  }
  HostIdMap(HostIdMap&&) noexcept = default;
  HostIdMap& operator=(HostIdMap&&) noexcept = default;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t count(uint64_t id) const { return find(id) != nullptr; }

  // The value of `id`, nullptr when it is absent.
  const Value* find(uint64_t id) const {
    const Page* page = page_of(id);
    if (page == nullptr || !page->has(slot(id))) return nullptr;
    return &page->values[slot(id)];
  }
  Value* find(uint64_t id) { return const_cast<Value*>(static_cast<const HostIdMap*>(this)->find(id)); }

  // As std::unordered_map::try_emplace: {the value, whether it was inserted}.
  std::pair<Value*, bool> try_emplace(uint64_t id, Value value = Value()) {
    Page& page = page_for(id);
    const unsigned at = slot(id);
    if (page.has(at)) return {&page.values[at], false};
    page.present[at / 64] |= uint64_t(1) << (at % 64);
    page.values[at] = std::move(value);
    ++size_;
    return {&page.values[at], true};
  }

  std::size_t erase(uint64_t id) {
    Page* page = const_cast<Page*>(page_of(id));
    const unsigned at = slot(id);
    if (page == nullptr || !page->has(at)) return 0;
    page->present[at / 64] &= ~(uint64_t(1) << (at % 64));
    --size_;
    return 1;
  }

 private:
  static constexpr unsigned kPageBits = 8;
  static constexpr unsigned kPageIds = 1u << kPageBits;
  struct Page {
    Value values[kPageIds];
    uint64_t present[kPageIds / 64] = {};
    bool has(unsigned at) const { return (present[at / 64] >> (at % 64)) & 1; }
  };

  static uint64_t page_key(uint64_t id) { return id >> kPageBits; }
  static unsigned slot(uint64_t id) { return unsigned(id & (kPageIds - 1)); }

  const Page* page_of(uint64_t id) const {
    const uint64_t key = page_key(id);
    if (last_page_ != nullptr && last_key_ == key) return last_page_;
    auto found = index_.find(key);
    if (found == index_.end()) return nullptr;
    last_key_ = key;
    last_page_ = pages_[found->second].get();
    return last_page_;
  }
  Page& page_for(uint64_t id) {
    if (const Page* page = page_of(id)) return *const_cast<Page*>(page);
    const uint64_t key = page_key(id);
    index_.try_emplace(key, uint32_t(pages_.size()));
    pages_.push_back(std::make_unique<Page>());
    last_key_ = key;
    last_page_ = pages_.back().get();
    return *pages_.back();
  }

  std::vector<std::unique_ptr<Page>> pages_;
  FlatMap<uint64_t, uint32_t> index_;  // page key -> pages_ index
  std::size_t size_ = 0;
  // The page found last: ids are mostly met in order, a page's worth at a time.
  mutable uint64_t last_key_ = 0;
  mutable const Page* last_page_ = nullptr;
};

// The same table as a set of ids.
class HostIdSet {
 public:
  HostIdSet() = default;
  HostIdSet(std::initializer_list<uint64_t> ids) {
    for (uint64_t id : ids) insert(id);
  }
  bool insert(uint64_t id) { return map_.try_emplace(id).second; }
  std::size_t erase(uint64_t id) { return map_.erase(id); }
  std::size_t count(uint64_t id) const { return map_.count(id); }
  std::size_t size() const { return map_.size(); }
  bool empty() const { return map_.empty(); }

 private:
  struct Nothing {};
  HostIdMap<Nothing> map_;
};

}  // namespace profagent::collector
