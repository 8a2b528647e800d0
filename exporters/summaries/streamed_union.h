// OpenUnion: the length of a union of intervals added part by part, in bounded memory (the
// streamed window's folds: streamed_summaries.h, streamed_step_summaries.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exporters/summaries/intervals.h"

namespace profagent::exporters {

// The length of the union of intervals added part by part, in bounded memory: held as merged
// intervals, of which at most kMaxOpen are kept open; beyond that the earliest half is closed
// (its length kept, its intervals forgotten). An interval that starts before the end of what
// was closed would need the forgotten intervals: its part before that end is left out (as if
// covered already), so the length may fall short by at most that part, and it is counted in
// late() (the figure is then not exact, and says so). Parts come
// in time order but for calls held a few segments, so this needs a part to reach back over
// 32,768 device idle gaps.
class OpenUnion {
 public:
  static constexpr std::size_t kMaxOpen = 65536;  // 1 MiB of intervals
  // Merges `part` in place first. `gained`: when given, gets the pieces of `part` the union did
  // not cover before (disjoint from every piece gained before: the union's growth, in order).
  void add(std::vector<Interval>& part, std::vector<Interval>* gained = nullptr);
  uint64_t length() const;
  uint64_t late() const { return late_; }

 private:
  std::vector<Interval> open_;  // merged, sorted
  uint64_t closed_length_ = 0;
  uint64_t closed_end_ = 0;
  uint64_t late_ = 0;
};

}  // namespace profagent::exporters
