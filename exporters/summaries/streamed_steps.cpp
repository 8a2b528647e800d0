#include "exporters/summaries/streamed_steps.h"

#include <algorithm>

namespace profagent::exporters {
namespace {

bool by_start(const StepSpan& a, const StepSpan& b) { return a.start_ns < b.start_ns; }

}  // namespace

void StepSorter::update(StepsSoFar now) {
  expected_ = now.expected;
  current_ = now.current;
  if (!current_) return;
  steps_.insert(steps_.end(), now.added.begin(), now.added.end());
  // As trace_scope.cpp steps_of sorts them (listed in time order: sorted already but for ties).
  if (!std::is_sorted(steps_.begin(), steps_.end(), by_start)) std::sort(steps_.begin(), steps_.end(), by_start);
  through_ns_ = now.through_ns;
}

std::string StepSorter::finish(std::vector<StepSpan> steps) {
  std::sort(steps.begin(), steps.end(), by_start);
  std::string why;
  if (steps.size() < steps_.size()) why = "the trace lists fewer steps than were final while it streamed";
  for (std::size_t i = 0; why.empty() && i < steps_.size(); ++i) {
    const StepSpan& a = steps_[i];
    const StepSpan& b = steps[i];
    if (a.number != b.number || a.start_ns != b.start_ns || a.end_ns != b.end_ns) {
      why = "step " + std::to_string(b.number) + "'s boundaries in the trace differ from those converted while it streamed";
    }
  }
  steps_ = std::move(steps);
  final_ = true;
  current_ = true;
  through_ns_ = UINT64_MAX;
  return why;
}

// The step scope_trace() gives a record starting at `at` (trace_scope.cpp step_at): the last
// step starting at or before it, when `at` is before that step's end.
StepFate StepSorter::fate(uint64_t at, uint32_t& step) const {
  step = 0;
  if (all_in()) return StepFate::In;  // the window is one span
  // Before the first step is listed, the window may still end with none (then every record is in).
  if (!current_ || at >= through_ns_ || steps_.empty()) return StepFate::Later;
  // Records come in order within a thread: most are in the step the last one was found in
  // (the last step starting at or before `at`, as the search below would find it).
  const std::size_t h = hint_;
  if (h < steps_.size() && steps_[h].start_ns <= at && at < steps_[h].end_ns &&
      (h + 1 == steps_.size() || at < steps_[h + 1].start_ns)) {
    step = uint32_t(h);
    return StepFate::In;
  }
  auto it = std::upper_bound(steps_.begin(), steps_.end(), at,
                             [](uint64_t t, const StepSpan& s) { return t < s.start_ns; });
  if (it == steps_.begin()) return StepFate::Out;
  --it;
  if (at >= it->end_ns) return StepFate::Out;
  step = uint32_t(it - steps_.begin());
  hint_ = step;
  return StepFate::In;
}

}  // namespace profagent::exporters
