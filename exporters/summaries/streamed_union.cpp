#include "exporters/summaries/streamed_union.h"

#include <algorithm>

namespace profagent::exporters {

namespace {

// `part` less `covered` (both merged and sorted), appended to `out`.
void subtract(const std::vector<Interval>& part, const std::vector<Interval>& covered, std::vector<Interval>& out) {
  std::size_t c = 0;
  for (Interval piece : part) {
    while (c < covered.size() && covered[c].end <= piece.start) ++c;
    for (std::size_t k = c; k < covered.size() && covered[k].start < piece.end; ++k) {
      if (covered[k].start > piece.start) out.push_back({piece.start, covered[k].start});
      piece.start = std::max(piece.start, covered[k].end);
    }
    if (piece.start < piece.end) out.push_back(piece);
  }
}

}  // namespace

void OpenUnion::add(std::vector<Interval>& part, std::vector<Interval>* gained) {
  merge_intervals(part);
  if (part.empty()) return;
  for (Interval& i : part) {
    if (i.start >= closed_end_) continue;
    ++late_;  // reaches into what was closed: its part before that end is left out
    i.start = std::min(i.end, closed_end_);
  }
  std::erase_if(part, [](const Interval& i) { return i.end <= i.start; });
  if (part.empty()) return;
  // Only the open intervals that end at or after the part's first start can merge with it
  // (open_ is disjoint and sorted, so its ends are sorted too): a part mostly lies after them all.
  const auto from = std::lower_bound(open_.begin(), open_.end(), part.front().start,
                                     [](const Interval& i, uint64_t start) { return i.end < start; });
  std::vector<Interval> tail(from, open_.end());
  open_.erase(from, open_.end());
  if (gained != nullptr) subtract(part, tail, *gained);
  const std::size_t middle = tail.size();
  tail.insert(tail.end(), part.begin(), part.end());
  std::inplace_merge(tail.begin(), tail.begin() + std::ptrdiff_t(middle), tail.end(),
                     [](const Interval& a, const Interval& b) { return a.start < b.start; });
  merge_intervals(tail);  // sorted already: one pass
  open_.insert(open_.end(), tail.begin(), tail.end());
  if (open_.size() <= kMaxOpen) return;
  const std::size_t closing = open_.size() / 2;
  for (std::size_t i = 0; i < closing; ++i) closed_length_ += open_[i].end - open_[i].start;
  closed_end_ = open_[closing - 1].end;
  open_.erase(open_.begin(), open_.begin() + std::ptrdiff_t(closing));
}

uint64_t OpenUnion::length() const {
  uint64_t total = closed_length_;
  for (const Interval& i : open_) total += i.end - i.start;
  return total;
}

}  // namespace profagent::exporters
