// Step windows (a pure function of the step, as torch.profiler.schedule): the step schedule and the
// step markers turn one run into recorded windows, each written by a background exporter thread.
//
// At each step boundary (profagent_step() or a PROFAGENT_STEP_ON marker, AFTER the marking
// call returned) the step that ended and the one starting are looked up in the schedule:
//   idle -> warmup/record   cut: what came before is thrown away
//   warmup -> record        cut: the warmup data is thrown away
//   record_and_save ends    cut (the hand-over, on the program's thread); the join and the
//                           files follow on the agent's exporter thread
// and the record state becomes that of the next step (idle: Off, hooks pass through). With no
// schedule variable the whole run is one window, written at exit, with a ProfilerStep#N range
// per step counted. With profiler-api, cudaProfilerStart/Stop open and close the windows.
// At exit, a window being recorded is written with the steps seen so far (as torch.profiler
// does when it stops); warmup data is not.
// A window holds the device work launched in it, also when the device runs it after the cut:
// the join waits for it, bounded by PROFAGENT_WINDOW_WAIT_MS (docs/windows.md).
#pragma once

#include <cstdint>
#include <string>

#include "agent/config.h"
#include "collector/trace.h"
#include "exporters/summaries/streamed_steps.h"

namespace profagent::agent {

// Configures markers, schedule and the time:MS thread, and sets the first record state.
// Warnings (bad markers) are logged. False if nothing could be set up (recording stays Off).
bool start_windows(const Config& config) noexcept;

// One step ended (any marker, or profagent_step()).
void step_ended() noexcept;

// PROFAGENT_STEP_ON=time:MS: starts the timer thread, at the process's first CUDA call (once;
// later calls do nothing). A process that never uses CUDA (a shell, a launcher, every stage of
// a pipeline started with the variable) runs no timer and so writes no window of empty steps.
void start_time_marker() noexcept;

// At exit: waits for queued window exports, then stops recording and freezes what the
// current window holds into `trace` (empty when nothing is being recorded). False on failure.
bool freeze_last_window(Trace& trace) noexcept;

// At exit, when the final window is empty, under a schedule or profiler-api: the closing line.
// "wrote nothing: <why>" when no window was ever written; after windows were written, that
// they were, and why nothing came after the last. "" without a schedule or profiler-api.
std::string closing_line_without_window() noexcept;

// On demand (PROFAGENT_ON_DEMAND): the step in progress and the triggered window, if one is
// armed or being recorded (steps first..last).
struct DemandState {
  uint64_t step = 0;
  bool busy = false;
  bool timed = false;  // busy with a window of a duration, not of steps
  uint64_t first = 0;
  uint64_t last = 0;
};
DemandState demand_state() noexcept;

// On demand: records steps first..first+steps-1 (first 0: the step after the one in progress)
// into one window whose files go to `output_dir` ("" for PROFAGENT_OUTPUT_DIR). False with
// `why` (one line) when the process is not on demand, is exiting, has a triggered window
// armed or being recorded, or is already past `first`; nothing is changed then.
bool arm_trigger(uint64_t first, uint64_t steps, const std::string& output_dir, DemandState& armed,
                 std::string& why) noexcept;

// On demand: takes back the trigger armed from step `first` while that step has not begun
// (`profagent trigger --all` arms every process, then finds one already past `first`: all or
// none). False with `why` when no trigger from `first` is armed or its first step has begun.
// `after`: the state left (not busy).
bool cancel_trigger(uint64_t first, DemandState& after, std::string& why) noexcept;

// On demand: records from now until close_timed_trigger() (the trigger's --duration-ms), into
// one window whose steps are those that ended in it and the one in progress at its end, each
// cut to the window. Refused as arm_trigger is.
bool arm_timed_trigger(const std::string& output_dir, std::string& why) noexcept;
void close_timed_trigger() noexcept;

// What is known now of the steps of streamed window `window` (exporters/summaries/streamed_steps.h):
// the steps listed since the first `known` of them, final and converted to ns as the window's
// export converts them, and the time before which the list is final (the start of the step in
// progress). Never throws (out of memory: `current` is false, and the records wait for the tail).
void streamed_steps_so_far(uint32_t window, std::size_t known, exporters::StepsSoFar& out) noexcept;

// Where the window being recorded writes its files: a trigger's --output-dir, or "" for
// PROFAGENT_OUTPUT_DIR.
std::string window_output_dir() noexcept;

// Hand-over figures: how long step boundaries that cut a window held the program.
struct HandOverStats {
  uint64_t windows = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
};

}  // namespace profagent::agent
