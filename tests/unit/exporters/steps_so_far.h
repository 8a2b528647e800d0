// The steps a streamed window's fold is told at a segment (exporters/summaries/streamed_steps.h
// StepsSoFar), as the agent gives them for the window being recorded: `added` the steps listed
// since the last segment, everything before `through_ns` final.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "exporters/summaries/streamed_steps.h"

namespace profagent::exporters::testing {

inline StepsSoFar steps_so_far(std::vector<StepSpan> added, uint64_t through_ns) {
  StepsSoFar s;
  s.expected = true;
  s.current = true;
  s.added = std::move(added);
  s.through_ns = through_ns;
  return s;
}

}  // namespace profagent::exporters::testing
