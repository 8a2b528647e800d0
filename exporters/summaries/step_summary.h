// The per-step summary under the table of a window that has steps: how many steps,
// their length (avg/min/max) and, per step, how busy the device was — the union of the
// device intervals (kernels, copies, sets) inside the step over the step's length, so
// overlapping work on several streams is not counted twice.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collector/trace.h"

namespace profagent::exporters {

struct StepFigures {
  uint64_t number = 0;
  uint64_t length_ns = 0;
  uint64_t device_busy_ns = 0;  // union of device intervals clipped to the step
};

std::vector<StepFigures> step_figures(const Trace& trace);

// "" when the window has no steps. Every step, one line each (the table file).
std::string render_step_summary(const Trace& trace);
// The same of figures computed already (a streamed window's: streamed_step_lines.h).
std::string render_step_summary(const std::vector<StepFigures>& figures);

// At most 20 lines whatever the number of steps (what stderr gets): the summary line (count,
// avg, min, max, total), the first kBriefFirstSteps steps, the kBriefSlowestSteps slowest of the
// others, and a line naming `full_file`, where every step is.
inline constexpr std::size_t kBriefFirstSteps = 5;
inline constexpr std::size_t kBriefSlowestSteps = 10;
std::string render_step_summary_brief(const Trace& trace, std::string_view full_file);
std::string render_step_summary_brief(const std::vector<StepFigures>& figures, std::string_view full_file);

}  // namespace profagent::exporters
