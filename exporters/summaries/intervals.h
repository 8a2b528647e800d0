// Interval merging, the rule of Paddle's Overview Summary: overlapping intervals of one kind of
// event (on any thread or stream) count once. Touching intervals (a.end == b.start) merge;
// identical and nested ones count once.
#pragma once

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

// Length of the intersection of two merged sets.
uint64_t overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

// The part of a merged set inside [start, end).
std::vector<Interval> clip(const std::vector<Interval>& merged, uint64_t start, uint64_t end);

// Whether `t` lies in a merged set.
bool contains(const std::vector<Interval>& merged, uint64_t t);

}  // namespace profagent::exporters
