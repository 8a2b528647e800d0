#include "exporters/summaries/streamed_step_lines.h"

#include <algorithm>

#include "exporters/summaries/intervals.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {

void StepLinesFold::add(const Trace& part, StepsSoFar steps) {
  if (untracked_ || over_bound_) return;
  if (!steps.expected) {  // steps of a window not set up for them (profagent_step()) would come too late
    untracked_ = true;
    return;
  }
  steps_.update(std::move(steps));
  index_ends();
  std::vector<Interval> waiting;
  waiting.swap(waiting_);
  for (const Interval& piece : waiting) route(piece);
  add_work(part);
  if (waiting_.size() > kMaxWaiting) over_bound_ = true, waiting_ = {};
}

void StepLinesFold::add_work(const Trace& part) {
  std::vector<Interval> work, gained;
  for (const DeviceRecord& d : part.device) {
    if (is_device_work(d.kind)) work.push_back({d.start_ns, d.end_ns});
  }
  busy_.add(work, &gained);
  for (const Interval& piece : gained) route(piece);
}

// The part of `piece` before the steps are final is credited now, the rest waits.
void StepLinesFold::route(Interval piece) {
  const uint64_t final_before = steps_.final_before();
  if (piece.start < final_before) credit({piece.start, std::min(piece.end, final_before)});
  if (piece.end > final_before) waiting_.push_back({std::max(piece.start, final_before), piece.end});
}

// The latest end among the steps up to each one (sorted by start): steps that may overlap.
void StepLinesFold::index_ends() {
  const std::vector<StepSpan>& steps = steps_.steps();
  max_end_.resize(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) max_end_[i] = std::max(i ? max_end_[i - 1] : 0, steps[i].end_ns);
}

// Adds `piece` to every step it overlaps: the search back from the last step starting before its
// end stops where no earlier step ends after its start.
void StepLinesFold::credit(Interval piece) {
  const std::vector<StepSpan>& steps = steps_.steps();
  if (busy_by_step_.size() < steps.size()) busy_by_step_.resize(steps.size(), 0);
  auto it = std::lower_bound(steps.begin(), steps.end(), piece.end,
                             [](const StepSpan& s, uint64_t end) { return s.start_ns < end; });
  while (it != steps.begin()) {
    --it;
    if (max_end_[std::size_t(it - steps.begin())] <= piece.start) break;
    const uint64_t from = std::max(piece.start, it->start_ns), to = std::min(piece.end, it->end_ns);
    if (from < to) busy_by_step_[std::size_t(it - steps.begin())] += to - from;
  }
}

void StepLinesFold::add_last(const Trace& tail) {
  if (tail.steps.empty()) return;
  if (untracked_) {
    note_ = "Step lines not made for this streamed window: a step was marked in a window not set up for steps.\n";
    return;
  }
  if (over_bound_) {
    note_ = "Step lines not made for this streamed window: more than " + std::to_string(kMaxWaiting) +
            " device intervals waited for a step's end.\n";
    return;
  }
  const std::string why = steps_.finish(tail.steps);
  if (!why.empty()) {
    note_ = "Step lines not made for this streamed window: " + why + ".\n";
    return;
  }
  index_ends();
  busy_by_step_.resize(steps_.steps().size(), 0);
  std::vector<Interval> waiting;
  waiting.swap(waiting_);
  for (const Interval& piece : waiting) credit(piece);
  add_work(tail);
  // In the trace's order (step_figures), each found among the sorted steps by its start and number.
  const std::vector<StepSpan>& sorted = steps_.steps();
  for (const StepSpan& s : tail.steps) {
    auto it = std::lower_bound(sorted.begin(), sorted.end(), s.start_ns,
                               [](const StepSpan& a, uint64_t start) { return a.start_ns < start; });
    while (it != sorted.end() && it->start_ns == s.start_ns && it->number != s.number) ++it;
    const uint64_t busy = it != sorted.end() ? busy_by_step_[std::size_t(it - sorted.begin())] : 0;
    figures_.push_back({s.number, span_ns(s.start_ns, s.end_ns), busy});
  }
  if (busy_.late() > 0) {
    note_ = "Step lines not exact: " + std::to_string(busy_.late()) +
            " device intervals came after the union of the device time before them was closed.\n";
  }
}

}  // namespace profagent::exporters
