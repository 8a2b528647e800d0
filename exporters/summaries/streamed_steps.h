// The steps of a streamed window as its parts are folded (streamed_summaries.h): which step a
// record of a part belongs to, decided as scope_trace() decides it for the whole trace (a host
// record by its start, a device record by its call's start, else its own), with the step
// boundaries the trace ends up carrying.
//
// While the window is recorded its steps are known up to the start of the step in progress
// (`through_ns`): the steps listed before it are final, and no later step covers a time before
// it. A record that starts before it is decided now; one that starts at or after it waits for
// the next boundary (or the window's end: the step in progress may be listed or not, and its
// end is not known yet). The agent converts the boundaries' ticks after an anchor taken past
// them, so they are converted as the window's export converts them; the fold still checks them
// against the trace's steps at the end (check_final) before trusting what it decided.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collector/trace.h"

namespace profagent::exporters {

// What the agent knows of the steps of the window being streamed when a part is folded.
struct StepsSoFar {
  // The window may list steps (a schedule, PROFAGENT_STEP_ON, profiler-api, on demand). When
  // false, the window is folded as one without steps, and a step listed after all (the C API's
  // profagent_step()) makes the fold give up at the end rather than differ.
  bool expected = false;
  // The window being recorded is still the part's: when false (a cut came meanwhile), every
  // record of the part waits for the window's end.
  bool current = false;
  std::vector<StepSpan> added;  // steps listed since the `known` asked for, final, in order
  uint64_t through_ns = 0;      // the step list is final before this time
};

enum class StepFate : uint8_t { In, Out, Later };

class StepSorter {
 public:
  // Takes what the agent said; `known()` is how many steps were given so far.
  void update(StepsSoFar now);
  std::size_t known() const { return steps_.size(); }
  bool expected() const { return expected_; }
  bool current() const { return current_; }
  // The window's end: `steps` are the trace's (Trace::steps). "" when the steps given before
  // are the first of them, boundaries and numbers, else why the fold cannot be trusted.
  std::string finish(std::vector<StepSpan> steps);
  bool has_steps() const { return final_ ? !steps_.empty() : expected_; }
  // Every record is in (the window is one span): no record needs its step found.
  bool all_in() const { return final_ ? steps_.empty() : !expected_; }
  // The fate of a record decided by time `at`, and its step's index (sorted by start).
  StepFate fate(uint64_t at, uint32_t& step) const;
  const std::vector<StepSpan>& steps() const { return steps_; }
  // No step listed later covers a time before this (0 while the part waits whole; UINT64_MAX
  // once finished).
  uint64_t final_before() const { return current_ ? through_ns_ : 0; }

 private:
  bool expected_ = false;
  bool current_ = false;
  bool final_ = false;
  std::vector<StepSpan> steps_;  // sorted by start
  uint64_t through_ns_ = 0;
  mutable std::size_t hint_ = 0;  // the step the last record was found in
};

}  // namespace profagent::exporters
