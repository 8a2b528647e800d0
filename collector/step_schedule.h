// The step schedule: which steps are recorded, exactly as torch.profiler.schedule decides.
//
// A pure function of the step number: step markers only count, and the
// session asks action(step) at each boundary. Semantics (torch/profiler/profiler.py,
// `schedule`): the first `skip_first` steps are idle; then cycles of `wait` idle steps,
// `warmup` steps traced but discarded, `active` recorded steps, the last of which saves the
// window; `repeat` cycles at most (0 = no limit).
#pragma once

#include <cstdint>

namespace profagent::collector {

enum class StepAction : uint8_t {
  None,           // idle: nothing is recorded
  Warmup,         // traced, thrown away at the start of the first active step
  Record,         // recorded into the current window
  RecordAndSave,  // recorded, and the window is written when this step ends
};

struct StepSchedule {
  uint64_t skip_first = 0;
  uint64_t wait = 0;
  uint64_t warmup = 0;
  uint64_t active = 1;  // >= 1; a schedule with active == 0 is rejected when parsed
  uint64_t repeat = 0;  // 0: cycles continue for the whole run
};

StepAction action(const StepSchedule& schedule, uint64_t step) noexcept;

// True once no later step can be recorded (repeat cycles are used up): the session can stop
// asking, and hooks stay idle for the rest of the run.
bool finished(const StepSchedule& schedule, uint64_t step) noexcept;

const char* to_string(StepAction action) noexcept;

}  // namespace profagent::collector
