#include "collector/step_schedule.h"

#include <limits>

namespace profagent::collector {
namespace {

uint64_t saturating_add(uint64_t a, uint64_t b) noexcept {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
}

uint64_t cycle_length(const StepSchedule& s) noexcept {
  return saturating_add(saturating_add(s.wait, s.warmup), s.active == 0 ? 1 : s.active);
}

}  // namespace

StepAction action(const StepSchedule& s, uint64_t step) noexcept {
  if (step < s.skip_first) return StepAction::None;
  const uint64_t since_skip = step - s.skip_first;
  const uint64_t cycle = cycle_length(s);
  // floor(since_skip / cycle) >= repeat, in integers: no overflow for any value.
  if (s.repeat > 0 && since_skip / cycle >= s.repeat) return StepAction::None;
  const uint64_t in_cycle = since_skip % cycle;
  if (in_cycle < s.wait) return StepAction::None;
  if (in_cycle - s.wait < s.warmup) return StepAction::Warmup;
  return in_cycle + 1 < cycle ? StepAction::Record : StepAction::RecordAndSave;
}

bool finished(const StepSchedule& s, uint64_t step) noexcept {
  if (s.repeat == 0 || step < s.skip_first) return false;
  return (step - s.skip_first) / cycle_length(s) >= s.repeat;
}

const char* to_string(StepAction a) noexcept {
  switch (a) {
    case StepAction::None: return "none";
    case StepAction::Warmup: return "warmup";
    case StepAction::Record: return "record";
    case StepAction::RecordAndSave: return "record_and_save";
  }
  return "?";
}

}  // namespace profagent::collector
