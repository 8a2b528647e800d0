// PROFAGENT_STEP_ON: what marks a step without code changes, comma-separated items:
//   api:NAME  kernel:REGEX  range:REGEX  profiler-api  python  time:MS
// (collector/step_markers.h says what each matches). A REGEX cannot contain a comma. The
// exported profagent_step() always marks a step, whatever this variable says.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collector/step_markers.h"

namespace profagent::agent {

struct StepOn {
  collector::StepMarkerSpec markers;
  uint64_t time_ms = 0;   // time:MS: a timer thread marks a step every MS milliseconds
  bool python = false;    // the Python hook calls profagent_step() (nothing to do here)
};

// Items that are not understood are skipped, all of them said in one line in `warnings`.
StepOn parse_step_on(std::string_view text, std::vector<std::string>& warnings);

}  // namespace profagent::agent
