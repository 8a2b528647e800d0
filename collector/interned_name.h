// InternedName: how a Trace's records hold their names (API, operator, range, kernel, copy).
//
// A window holds millions of records but few distinct names. A record that kept its own
// std::string paid 32 bytes plus a heap copy of every name longer than the small-string buffer
// (kernel names always are), and every exporter that derived something from a name (the API it
// implements, its CUPTI callback id) searched for it again per record. An InternedName is one
// pointer to a process-wide, append-only table entry: copying it is a pointer copy, two are
// equal when their pointers are, and `id()` numbers the distinct names densely from 0, so an
// exporter can keep what it derives per name in a vector indexed by id and compute it once.
//
// The table lives as long as the process (deliberately leaked, like the collector's own name
// table whose names it mostly holds): entries are never removed, so a name read from any Trace
// stays valid after the Trace is gone, and Traces can be copied and moved freely. Interning
// takes a mutex (a leaf lock, never held across any other call); reading a name takes nothing.
// The join interns each distinct name once per window, not once per record.
//
// It reads like a const std::string (str(), empty(), size(), ==, conversions to
// std::string_view and const std::string&) so that code written against the former
// `std::string name` keeps working. Header-only: exporters use it without linking the collector.
// Kept C++17: CUDA sources of the tests include collector/trace.h as C++17.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>

namespace profagent {

class InternedName {
 public:
  struct Entry {
    std::string text;
    uint32_t id;
  };

  InternedName() noexcept : entry_(table().empty_entry()) {}
  InternedName(std::string_view text) : entry_(table().intern(text)) {}  // NOLINT: implicit, as std::string
  InternedName(const char* text) : InternedName(std::string_view(text)) {}  // NOLINT
  InternedName(const std::string& text) : InternedName(std::string_view(text)) {}  // NOLINT

  // Dense per process: 0 is "", then one per distinct name in the order first interned.
  uint32_t id() const noexcept { return entry_->id; }
  // How many distinct names exist so far (every id() is below it).
  static uint32_t count() { return table().count(); }

  const std::string& str() const noexcept { return entry_->text; }
  operator const std::string&() const noexcept { return entry_->text; }  // NOLINT
  operator std::string_view() const noexcept { return entry_->text; }    // NOLINT

  bool empty() const noexcept { return entry_->text.empty(); }
  std::size_t size() const noexcept { return entry_->text.size(); }
  const char* data() const noexcept { return entry_->text.data(); }
  const char* c_str() const noexcept { return entry_->text.c_str(); }
  std::string::const_iterator begin() const noexcept { return entry_->text.begin(); }
  std::string::const_iterator end() const noexcept { return entry_->text.end(); }
  char operator[](std::size_t i) const noexcept { return entry_->text[i]; }
  std::size_t find(std::string_view what, std::size_t from = 0) const noexcept {
    return std::string_view(entry_->text).find(what, from);
  }
  std::size_t find(char what, std::size_t from = 0) const noexcept { return entry_->text.find(what, from); }
  std::size_t rfind(char what, std::size_t from = std::string::npos) const noexcept {
    return entry_->text.rfind(what, from);
  }
  std::size_t rfind(std::string_view what, std::size_t from = std::string::npos) const noexcept {
    return std::string_view(entry_->text).rfind(what, from);
  }
  std::string_view substr(std::size_t pos, std::size_t n = std::string_view::npos) const {
    return std::string_view(entry_->text).substr(pos, n);
  }
  int compare(std::string_view other) const noexcept { return std::string_view(entry_->text).compare(other); }

  friend bool operator==(InternedName a, InternedName b) noexcept { return a.entry_ == b.entry_; }
  friend bool operator!=(InternedName a, InternedName b) noexcept { return a.entry_ != b.entry_; }
  friend bool operator==(InternedName a, std::string_view b) noexcept { return std::string_view(a) == b; }
  friend bool operator!=(InternedName a, std::string_view b) noexcept { return std::string_view(a) != b; }
  friend bool operator==(std::string_view a, InternedName b) noexcept { return a == std::string_view(b); }
  friend bool operator!=(std::string_view a, InternedName b) noexcept { return a != std::string_view(b); }
  friend bool operator==(InternedName a, const std::string& b) noexcept { return a.str() == b; }
  friend bool operator!=(InternedName a, const std::string& b) noexcept { return a.str() != b; }
  friend bool operator==(const std::string& a, InternedName b) noexcept { return a == b.str(); }
  friend bool operator!=(const std::string& a, InternedName b) noexcept { return a != b.str(); }
  friend bool operator==(InternedName a, const char* b) noexcept { return a.str() == b; }
  friend bool operator!=(InternedName a, const char* b) noexcept { return a.str() != b; }
  // By text, so that sorting by name is what it was with strings.
  friend bool operator<(InternedName a, InternedName b) noexcept { return a.str() < b.str(); }
  friend std::string operator+(const std::string& a, InternedName b) { return a + b.str(); }
  friend std::string operator+(InternedName a, const std::string& b) { return a.str() + b; }
  friend std::string operator+(const char* a, InternedName b) { return a + b.str(); }
  friend std::string operator+(InternedName a, const char* b) { return a.str() + b; }
  friend std::ostream& operator<<(std::ostream& out, InternedName name) { return out << name.str(); }

 private:
  class Table {
   public:
    Table() { intern(std::string_view()); }
    const Entry* empty_entry() const noexcept { return &entries_.front(); }
    const Entry* intern(std::string_view text) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = index_.find(text);
      if (found != index_.end()) return found->second;
      // A deque never moves its elements: entries, and the views the index keys on, stay put.
      entries_.push_back(Entry{std::string(text), uint32_t(entries_.size())});
      const Entry* entry = &entries_.back();
      index_.emplace(std::string_view(entry->text), entry);
      return entry;
    }
    uint32_t count() {
      std::lock_guard<std::mutex> lock(mutex_);
      return uint32_t(entries_.size());
    }

   private:
    std::mutex mutex_;  // leaf: held only inside intern() and count()
    std::deque<Entry> entries_;
    std::unordered_map<std::string_view, const Entry*> index_;
  };

  // Leaked on purpose: records may be read by exit handlers after static destructors ran.
  static Table& table() {
    static Table* const instance = new Table();
    return *instance;
  }

  const Entry* entry_;
};

}  // namespace profagent

template <>
struct std::hash<profagent::InternedName> {
  std::size_t operator()(profagent::InternedName name) const noexcept { return std::hash<uint32_t>()(name.id()); }
};
