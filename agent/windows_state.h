// The state of the step windows, shared by agent/windows.cpp (boundaries, schedule, exit) and
// agent/windows_trigger.cpp (windows armed by `profagent trigger`); no other file includes it.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "agent/agent_cost.h"
#include "agent/config.h"
#include "agent/windows.h"
#include "collector/session.h"
#include "collector/step_schedule.h"

namespace profagent::agent::windows_state {

using collector::RecordState;
using collector::StepAction;

struct StepTicks {
  uint64_t number;
  uint64_t start;  // agent clock ticks
  uint64_t end;
};

struct Windows {
  const Config* config = nullptr;
  bool scheduled = false;     // a schedule variable was given
  bool profiler_api = false;  // cudaProfilerStart/Stop delimit windows
  collector::StepSchedule schedule;
  uint64_t time_ms = 0;                      // PROFAGENT_STEP_ON=time:MS
  std::atomic<bool> timer_started{false};    // at the first CUDA call (start_time_marker)
  // Guards everything below; never taken by hooks. Lock order: Windows::mutex ->
  // ExportQueue::mutex -> the collector's locks (collector/session.h). It is never held across
  // a CUDA or CUPTI call: under it a boundary only updates the step state, cuts (host buffers
  // only), sets the record state and queues the cut; the device follows the record state and
  // the exporter is started after it is released (BoundaryEffects).
  std::mutex mutex;
  uint64_t step = 0;          // the step in progress
  uint64_t step_start = 0;
  std::vector<StepTicks> window_steps;  // recorded steps of the current window
  uint64_t last_window_step = 0;  // the last step of the last window cut
  bool profiler_window_open = false;
  uint64_t profiler_windows = 0;
  // PROFAGENT_ON_DEMAND: idle until `profagent trigger` arms `schedule` (one cycle of the
  // requested steps) through arm_trigger(); files of that window go to trigger_output_dir.
  bool on_demand = false;
  bool trigger_armed = false;
  std::string trigger_output_dir;
  bool timed_open = false;  // a trigger's --duration-ms window is being recorded
  uint64_t timed_from = 0;  // when it opened (agent clock ticks)
  std::atomic<bool> finished{false};  // the final window was frozen: boundaries do nothing
  HandOverStats hand_over;
  CostMark window_mark;  // the agent's cost totals when the current window began
};
extern Windows* g_windows;  // leaked; set once by start_windows

// What a boundary does once Windows::mutex is released: CUDA and CUPTI calls.
struct BoundaryEffects {
  bool follow_device = false;  // the record state changed: device activity follows it
  bool serve_exports = false;  // a window was queued
};

// Under Windows::mutex (effects are applied once it is released, with apply()).
void set_record_state(RecordState state, BoundaryEffects& effects);
void save_window(Windows& w, RecordState next, BoundaryEffects& effects);  // cuts and queues it
void set_device_ahead(const Windows& w, uint64_t step, BoundaryEffects& effects);
// Without Windows::mutex: the CUDA and CUPTI calls a boundary decided.
void apply(const BoundaryEffects& effects);

}  // namespace profagent::agent::windows_state
