// The per-step summary under the table of a window that has steps (issue 4): how many steps,
// their length (avg/min/max) and, per step, how busy the device was — the union of the
// device intervals (kernels, copies, sets) inside the step over the step's length, so
// overlapping work on several streams is not counted twice.
#pragma once

#include <string>

#include "collector/trace.h"

namespace profagent::exporters {

struct StepFigures {
  uint64_t number = 0;
  uint64_t length_ns = 0;
  uint64_t device_busy_ns = 0;  // union of device intervals clipped to the step
};

std::vector<StepFigures> step_figures(const Trace& trace);

// "" when the window has no steps.
std::string render_step_summary(const Trace& trace);

}  // namespace profagent::exporters
