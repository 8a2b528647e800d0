// Windows armed by `profagent trigger` (PROFAGENT_ON_DEMAND): a cycle of the schedule for N
// steps, or a window of a duration (agent/windows.h).
#include <algorithm>
#include <string>

#include "agent/windows.h"
#include "agent/windows_state.h"
#include "collector/api.h"

namespace profagent::agent {

using namespace windows_state;

namespace {

DemandState demand_state_of(const Windows& w) {
  DemandState state;
  state.step = w.step;
  state.timed = w.timed_open;
  state.busy = w.timed_open || (w.trigger_armed && !collector::finished(w.schedule, w.step));
  if (state.busy && !state.timed) {
    state.first = w.schedule.skip_first, state.last = w.schedule.skip_first + w.schedule.active - 1;
  }
  return state;
}

// Under Windows::mutex: the checks of arm_trigger, "" when the trigger may be armed.
std::string trigger_refusal(const Windows& w, uint64_t first) {
  if (!w.on_demand) return "this process does not run on demand (PROFAGENT_ON_DEMAND)";
  if (w.finished) return "the process is exiting";
  const DemandState state = demand_state_of(w);
 if (state.timed) return "already triggered: a timed window is being recorded";
  if (state.busy) {
    return "already triggered: steps " + std::to_string(state.first) + "-" + std::to_string(state.last) +
           " are being recorded (step " + std::to_string(w.step) + " is in progress)";
  }
  if (first <= w.step) {
    return "step " + std::to_string(first) + " has already begun (step " + std::to_string(w.step) + " is in progress)";
  }
  return {};
}

// A trigger request: `change` runs on the windows under their lock (false: refused, `why`
// says why), its boundary effects are applied once the lock is released.
template <typename Change>
bool change_windows(std::string& why, Change change) noexcept {
  Windows* w = g_windows;
  if (w == nullptr) return why = "no step windows", false;
  collector::AgentBusy busy;
  try {
    BoundaryEffects effects;
    {
      std::lock_guard lock(w->mutex);
      if (!change(*w, effects)) return false;
    }
    apply(effects);
    return true;
  } catch (...) {
    why = "out of memory";
    return false;
  }
}

}  // namespace

DemandState demand_state() noexcept {
  Windows* w = g_windows;
  if (w == nullptr) return {};
  std::lock_guard lock(w->mutex);
  return demand_state_of(*w);
}

bool arm_trigger(uint64_t first, uint64_t steps, const std::string& output_dir, DemandState& armed,
                 std::string& why) noexcept {
  if (steps == 0) return why = "no step asked for", false;
  return change_windows(why, [&](Windows& w, BoundaryEffects& effects) {
    if (first == 0) first = w.step + 1;
    why = trigger_refusal(w, first);
    if (!why.empty()) return false;
    // One cycle of torch.profiler.schedule: idle until `first`, then `steps` recorded steps.
    w.schedule = {.skip_first = first, .wait = 0, .warmup = 0, .active = steps, .repeat = 1};
    w.trigger_armed = true;
    w.trigger_output_dir = output_dir;
    set_device_ahead(w, w.step, effects);  // the step in progress may be the one just before
    armed = demand_state_of(w);
    return true;
  });
}

bool cancel_trigger(uint64_t first, DemandState& after, std::string& why) noexcept {
  return change_windows(why, [&](Windows& w, BoundaryEffects& effects) {
    if (!w.trigger_armed || w.timed_open || w.schedule.skip_first != first) {
      return why = "no trigger from step " + std::to_string(first) + " is armed", false;
    }
    if (w.step >= first) {
      return why = "step " + std::to_string(first) + " has already begun: its window is being recorded", false;
    }
    w.trigger_armed = false;  // back to idle: no step of the schedule is recorded
    set_device_ahead(w, w.step, effects);
    after = demand_state_of(w);
    return true;
  });
}

bool arm_timed_trigger(const std::string& output_dir, std::string& why) noexcept {
  return change_windows(why, [&](Windows& w, BoundaryEffects& effects) {
    why = trigger_refusal(w, w.step + 1);
    if (!why.empty()) return false;
    collector::discard_window();  // what came before is not part of the window
    w.window_mark = cost_mark();
    w.window_steps.clear();
    w.timed_open = true;
    w.timed_from = collector::now();
    w.trigger_output_dir = output_dir;
    set_record_state(RecordState::Record, effects);
    return true;
  });
}

void close_timed_trigger() noexcept {
  Windows* w = g_windows;
  if (w == nullptr) return;
  collector::AgentBusy busy;
  try {
    BoundaryEffects effects;
    {
      std::lock_guard lock(w->mutex);
      if (!w->timed_open || w->finished) return;
      // The steps that ended in the window, and the one in progress, each cut to the window.
      w->window_steps.push_back({w->step, w->step_start, collector::now()});
      for (StepTicks& step : w->window_steps) step.start = std::max(step.start, w->timed_from);
      w->timed_open = false;
      save_window(*w, RecordState::Off, effects);
    }
    apply(effects);
  } catch (...) {
    static collector::SwallowedSite site{"a timed window could not be cut (out of memory); it is lost"};
    collector::note_swallowed(site);
  }
}

}  // namespace profagent::agent
