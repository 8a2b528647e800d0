// Interval merging, the rule of Paddle's Overview Summary: overlapping intervals of one kind of
// event (on any thread or stream) count once. Touching intervals (a.end == b.start) merge;
// identical and nested ones count once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace profagent::exporters {

struct Interval {
  uint64_t start = 0;
  uint64_t end = 0;
};

// Sorts and merges in place; empty intervals (end <= start) are dropped. Returns the merged set.
std::vector<Interval>& merge_intervals(std::vector<Interval>& intervals);

// Length of the union of `intervals` (merged, in place).
uint64_t merged_length(std::vector<Interval>& intervals);

// Intervals gathered for the length of their union (merged_length's figure): merged as they
// come while they come in start order (one thread's calls, one stream's work), so the set needs
// no sort or merge at the end; one out of order switches to gathering them as they are, and
// length() merges them then. Either way the figure is merged_length's.
class UnionGatherer {
 public:
  void reserve(std::size_t n);  // on huge pages, as the window's other per-record sets
  void add(uint64_t start, uint64_t end) {
    if (end <= start) return;  // empty: merge_intervals drops it
    if (in_order_ && !set_.empty()) {
      Interval& last = set_.back();
      if (start < last.start) {
        in_order_ = false;
      } else if (start <= last.end) {
        if (end > last.end) last.end = end;
        return;
      }
    }
    set_.push_back({start, end});
  }
  uint64_t length();

 private:
  std::vector<Interval> set_;  // merged and sorted while in_order_
  bool in_order_ = true;
};

// Length of the intersection of two merged sets.
uint64_t overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

// The part of a merged set inside [start, end).
std::vector<Interval> clip(const std::vector<Interval>& merged, uint64_t start, uint64_t end);

// Whether `t` lies in a merged set.
bool contains(const std::vector<Interval>& merged, uint64_t t);

}  // namespace profagent::exporters
