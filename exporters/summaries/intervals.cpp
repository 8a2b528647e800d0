#include "exporters/summaries/intervals.h"

#include <algorithm>

#include "collector/huge_pages.h"

namespace profagent::exporters {

std::vector<Interval>& merge_intervals(std::vector<Interval>& intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.start; });
  const auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  // Intervals mostly come from records already in time order (one thread's calls, one
  // stream's work): checking is linear, sorting millions of them is not. The union does not
  // depend on the order of equal starts, so skipping the sort changes nothing.
  if (!std::is_sorted(intervals.begin(), intervals.end(), by_start)) std::sort(intervals.begin(), intervals.end(), by_start);
  std::size_t out = 0;
  for (const Interval& i : intervals) {
    if (out > 0 && i.start <= intervals[out - 1].end) {
      intervals[out - 1].end = std::max(intervals[out - 1].end, i.end);
    } else {
      intervals[out++] = i;
    }
  }
  intervals.resize(out);
  return intervals;
}

uint64_t merged_length(std::vector<Interval>& intervals) {
  uint64_t total = 0;
  for (const Interval& i : merge_intervals(intervals)) total += i.end - i.start;
  return total;
}

void UnionGatherer::reserve(std::size_t n) { reserve_on_huge_pages(set_, n); }

uint64_t UnionGatherer::length() {
  if (!in_order_) merge_intervals(set_), in_order_ = true;
  uint64_t total = 0;
  for (const Interval& i : set_) total += i.end - i.start;
  return total;
}

uint64_t overlap_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  uint64_t total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const uint64_t start = std::max(a[i].start, b[j].start);
    const uint64_t end = std::min(a[i].end, b[j].end);
    if (end > start) total += end - start;
    (a[i].end < b[j].end) ? ++i : ++j;
  }
  return total;
}

std::vector<Interval> clip(const std::vector<Interval>& merged, uint64_t start, uint64_t end) {
  std::vector<Interval> out;
  for (const Interval& i : merged) {
    const Interval c{std::max(i.start, start), std::min(i.end, end)};
    if (c.end > c.start) out.push_back(c);
  }
  return out;
}

bool contains(const std::vector<Interval>& merged, uint64_t t) {
  auto it = std::upper_bound(merged.begin(), merged.end(), t,
                             [](uint64_t v, const Interval& i) { return v < i.start; });
  return it != merged.begin() && t < std::prev(it)->end;
}

}  // namespace profagent::exporters
