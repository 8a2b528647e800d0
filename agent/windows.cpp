#include "agent/windows.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "agent/agent_cost.h"
#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/partial_writer.h"
#include "agent/step_on.h"
#include "agent/step_timer.h"
#include "agent/threads.h"
#include "agent/window_export.h"
#include "agent/windows_state.h"
#include "collector/clock.h"
#include "collector/segment_stream.h"
#include "collector/session.h"
#include "collector/step_schedule.h"
#include "exporters/exporter.h"

namespace profagent::agent {

namespace windows_state {
Windows* g_windows = nullptr;  // leaked
}  // namespace windows_state
using namespace windows_state;

namespace {

void attach_steps(const std::vector<StepTicks>& steps, Trace& trace, bool whole_run);

// ---- background exporter --------------------------------------------------------------------

// A window cut at a step boundary, joined and written by the exporter thread.
struct PendingWindow {
  collector::CutWindow* cut;
  std::vector<StepTicks> steps;
  std::string output_dir;  // "" for the configured one (a trigger may name another)
  CostMark from, to;       // the agent's cost totals at the window's edges
};

struct ExportQueue {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<PendingWindow> traces;
  bool busy = false;
  bool thread_started = false;
};
ExportQueue* g_queue = new ExportQueue;  // leaked: exports may run while the process exits

std::string window_title(const Trace& trace) {
  std::string title = "window " + std::to_string(trace.window);
  if (!trace.whole_run) {
    title += " (steps " + std::to_string(trace.first_step.number) + "-" +
             std::to_string(trace.last_step.number) + ")";
  }
  return title;
}

void finish_and_export(PendingWindow& pending) noexcept {
  try {
    Trace trace;
    {
      AgentWork join("join window");
      trace = collector::finish_window(pending.cut);  // the join, off the program's thread
    }
    attach_steps(pending.steps, trace, false);
    attach_agent_cost(trace, pending.from, pending.to);
    const std::string name = window_title(trace) + ": ";
    AgentWork write("write window", trace.window);  // drawn in the next window
    export_and_report(trace, *g_windows->config,
                      {.drops_prefix = name, .closing_prefix = name, .output_dir = pending.output_dir});
  } catch (...) {
    static collector::SwallowedSite site{"a step window could not be joined or written (out of memory); it is lost"};
    collector::note_swallowed(site);
    collector::streamed_window_exported(UINT32_MAX);  // lost, and the windows before it exported: none waits
  }
}

// Joins and writes the oldest queued window; `lock` holds g_queue->mutex, released meanwhile.
void export_front(std::unique_lock<std::mutex>& lock) {
  PendingWindow pending = std::move(g_queue->traces.front());
  g_queue->traces.pop_front();
  g_queue->busy = true;
  lock.unlock();
  finish_and_export(pending);
  lock.lock();
  g_queue->busy = false;
  g_queue->changed.notify_all();
}

// Serves the queue until it is empty and agent threads are told to stop (agent/threads.h);
// thread_started then goes back to false, so a later window starts a new exporter.
void export_queued(void*) noexcept {
  std::unique_lock lock(g_queue->mutex);
  for (;;) {
    const bool woken = g_queue->changed.wait_for(lock, std::chrono::milliseconds(kAgentTickMs),
                                                 [] { return !g_queue->traces.empty(); });
    if (!woken) {
      if (keep_running()) continue;
      g_queue->thread_started = false;
      g_queue->changed.notify_all();  // wait_for_exports: nothing is queued
      return;
    }
    export_front(lock);
  }
}

// Queues a cut window; called with Windows::mutex held, so windows are queued (and joined)
// in the order of their cuts.
void queue_export(PendingWindow&& pending) {
  std::lock_guard lock(g_queue->mutex);
  g_queue->traces.push_back(std::move(pending));
  g_queue->changed.notify_all();
}

// Without Windows::mutex: starts the exporter thread if none runs. If none can be created the
// queued windows are joined and written here, on the program's thread, rather than lost (one
// thread at a time, in order: `busy` is held by whoever is exporting).
void serve_exports() {
  std::unique_lock lock(g_queue->mutex);
  if (!g_queue->thread_started) {
    g_queue->thread_started = start_agent_thread("profagent-export", export_queued, nullptr);
  }
  if (g_queue->thread_started) return;
  while (!g_queue->traces.empty() && !g_queue->busy) {
    export_front(lock);
  }
}

void wait_for_exports() {
  std::unique_lock lock(g_queue->mutex);
  g_queue->changed.wait(lock, [] {
    return (g_queue->traces.empty() || !g_queue->thread_started) && !g_queue->busy;
  });
}

// A forked child has no exporter thread, and the parent's windows are not its own.
void forget_exports_in_child() {
  new (g_queue) ExportQueue;  // the old one is leaked, never destroyed (its mutex may be held)
  if (g_windows != nullptr) new (&g_windows->mutex) std::mutex;
}

// ---- windows --------------------------------------------------------------------------------

RecordState state_for(StepAction action) {
  switch (action) {
    case StepAction::None: return RecordState::Off;
    case StepAction::Warmup: return RecordState::Warmup;
    default: return RecordState::Record;
  }
}

bool records(StepAction action) {
  return action == StepAction::Record || action == StepAction::RecordAndSave;
}

uint64_t elapsed_ns(const timespec& from) {
  timespec to{};
  clock_gettime(CLOCK_MONOTONIC, &to);
  return uint64_t(to.tv_sec - from.tv_sec) * 1'000'000'000ull + uint64_t(to.tv_nsec) - uint64_t(from.tv_nsec);
}

// Steps of the window, converted with the anchors its cut took.
void attach_steps(const std::vector<StepTicks>& steps, Trace& trace, bool whole_run) {
  const collector::clock::TickConverter converter = collector::clock::converter();
  trace.whole_run = whole_run;
  for (const StepTicks& s : steps) {
    trace.steps.push_back({s.number, converter.to_ns(s.start), converter.to_ns(s.end)});
  }
  if (trace.steps.empty()) return;
  trace.first_step = trace.steps.front();
  trace.last_step = trace.steps.back();
}


}  // namespace

namespace windows_state {

void set_record_state(RecordState state, BoundaryEffects& effects) {
  collector::set_record_state(state);
  effects.follow_device = true;
}

void apply(const BoundaryEffects& effects) {
  if (effects.follow_device) collector::follow_device_state();
  if (effects.serve_exports) serve_exports();
}

// Cuts the current window now (the hand-over) and queues its join and export.
void save_window(Windows& w, RecordState next, BoundaryEffects& effects) {
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  if (next == RecordState::Off) set_record_state(next, effects);  // nothing more in this window
  collector::CutWindow* cut = collector::cut_window();
  set_record_state(next, effects);
  if (!w.window_steps.empty()) w.last_window_step = w.window_steps.back().number;
  const uint64_t held = elapsed_ns(start);
  // The cut's own hold is this window's; the rest of the boundary goes to the next one.
  CostMark to = cost_mark();
  to.boundary_ns += held;
  queue_export({cut, std::move(w.window_steps), w.on_demand ? w.trigger_output_dir : std::string(), w.window_mark, to});
  w.window_mark = to;
  effects.serve_exports = true;
  w.window_steps.clear();
  w.hand_over.windows++;
  w.hand_over.total_ns += held;
  if (held > w.hand_over.max_ns) w.hand_over.max_ns = held;
  log(LogLevel::Debug, "window cut and handed over in " + std::to_string(held / 1000) + " us");
}

// What the schedule says of `step`; on demand, nothing until a trigger armed one.
StepAction step_action(const Windows& w, uint64_t step) {
  if (w.timed_open) return StepAction::Record;  // saved when its time is up, not at a step
  if (w.on_demand && !w.trigger_armed) return StepAction::None;
  return collector::action(w.schedule, step);
}

// An idle step right before a recorded one (no warmup step between them) keeps the device
// traced: set_device_ahead (collector/session.h) — a warmup step does that otherwise.
bool device_ahead(const Windows& w, uint64_t step) {
  return step_action(w, step) == StepAction::None && records(step_action(w, step + 1));
}

void set_device_ahead(const Windows& w, uint64_t step, BoundaryEffects& effects) {
  collector::set_device_ahead(w.scheduled && !w.profiler_api && device_ahead(w, step));
  effects.follow_device = true;
}

}  // namespace windows_state

namespace {

void scheduled_boundary(Windows& w, uint64_t ended, BoundaryEffects& effects) {
  const StepAction was = step_action(w, ended);
  const StepAction next = step_action(w, ended + 1);
  set_device_ahead(w, ended + 1, effects);
  if (was == StepAction::RecordAndSave) {
    save_window(w, state_for(next), effects);
    return;
  }
  // Entering recording (from idle or warmup): what came before is not part of the window.
  if (records(next) && !records(was)) {
    collector::discard_window();
    w.window_mark = cost_mark();
    w.window_steps.clear();
  }
  if (state_for(next) != collector::state()) set_record_state(state_for(next), effects);
}

void step_boundary(Windows& w, BoundaryEffects& effects) {
  std::lock_guard lock(w.mutex);
  if (w.finished) return;
  const uint64_t now = collector::now();
  const uint64_t ended = w.step++;
  // profiler-api: a cudaProfilerStart..Stop window is one step, from Start to Stop; the other
  // markers' steps neither split it nor move its start.
  if (w.profiler_api) return;
  if (!w.scheduled || records(step_action(w, ended))) w.window_steps.push_back({ended, w.step_start, now});
  w.step_start = now;
  if (w.scheduled) scheduled_boundary(w, ended, effects);
}

void on_step() noexcept {
  Windows* w = g_windows;
  if (w == nullptr) return;
  collector::AgentBusy busy;  // the freeze's own calls are not the program's
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  try {
    BoundaryEffects effects;
    step_boundary(*w, effects);
    apply(effects);
    note_boundary(elapsed_ns(start));
  } catch (...) {
    static collector::SwallowedSite site{"a step boundary failed (out of memory); its window may be incomplete"};
    collector::note_swallowed(site);
  }
}

// profiler-api: each cudaProfilerStart..Stop is one window holding one step, numbered from 0
// in the order of the windows (steps counted by other markers are not used for naming).
void profiler_api_boundary(Windows& w, bool start, BoundaryEffects& effects) {
  std::lock_guard lock(w.mutex);
  if (w.finished || start == w.profiler_window_open) return;  // unbalanced: ignored
  w.profiler_window_open = start;
  if (start) {
    collector::discard_window();
    w.window_mark = cost_mark();
    w.step_start = collector::now();
    set_record_state(RecordState::Record, effects);
    return;
  }
  w.window_steps.assign({{w.profiler_windows++, w.step_start, collector::now()}});
  save_window(w, RecordState::Off, effects);
}

void on_profiler_api(bool start) noexcept {
  Windows* w = g_windows;
  if (w == nullptr) return;
  collector::AgentBusy busy;
  timespec began{};
  clock_gettime(CLOCK_MONOTONIC, &began);
  try {
    BoundaryEffects effects;
    profiler_api_boundary(*w, start, effects);
    apply(effects);
    note_boundary(elapsed_ns(began));
  } catch (...) {
    static collector::SwallowedSite site{"a cudaProfilerStart/Stop boundary failed (out of memory); its window may be incomplete"};
    collector::note_swallowed(site);
  }
}

// time:MS stops marking once the final window was frozen.
bool windows_finished() { return g_windows->finished.load(); }

// Why a run with a schedule, or with profiler-api, wrote no window (without this line such
// a run ended in silence, and the user could not tell why). `w.step` steps have ended; the one in progress is `w.step`.
std::string schedule_silence(const Windows& w) {
  if (w.on_demand) {
    return "PROFAGENT_ON_DEMAND records nothing until `profagent trigger " + std::to_string(getpid()) +
           "` asks for steps, and no trigger came";
  }
  const uint64_t first_active = w.schedule.skip_first + w.schedule.wait + w.schedule.warmup;
  const std::string seen = std::to_string(w.step) + (w.step == 1 ? " step" : " steps") + " seen";
  if (w.step == 0) {
    return "no step ended, so the schedule never reached an active step (the first would be step " +
           std::to_string(first_active) + "); steps are marked by PROFAGENT_STEP_ON or profagent_step()";
  }
  if (step_action(w, w.step) == StepAction::Warmup) {
    return "the process ended during warmup step " + std::to_string(w.step) +
           " (warmup data is never written); no active step was reached (" + seen + ")";
  }
  return "the schedule never reached an active step (" + seen + ", the first active step would be " +
         std::to_string(first_active) + ")";
}

std::string profiler_api_silence(const Windows& w) {
  return "PROFAGENT_STEP_ON=profiler-api records only between cudaProfilerStart and "
         "cudaProfilerStop, and no cudaProfilerStart was seen";
}

// Why nothing came after the last window written (the exit found nothing to write).
std::string after_last_window(const Windows& w) {
  if (w.profiler_api) return "the last one: no cudaProfilerStart followed its cudaProfilerStop";
  if (w.on_demand && collector::finished(w.schedule, w.step)) return "the triggered steps were all recorded";
  const std::string step = std::to_string(w.step);
  if (collector::finished(w.schedule, w.step)) {
    return "the schedule's " + std::to_string(w.schedule.repeat) + " cycles (repeat=" +
           std::to_string(w.schedule.repeat) + ") were done";
  }
  switch (step_action(w, w.step)) {
    case StepAction::None: return "the process ended in idle step " + step + " of the schedule";
    case StepAction::Warmup: return "the process ended during warmup step " + step + " (warmup data is never written)";
    default: return "the steps since then made no call the agent records";
  }
}

// The closing line of an exit with nothing to write, after windows were written earlier: it
// says so, never "wrote nothing" (those windows' own lines name their files).
std::string windows_written_line(const Windows& w) {
  const uint64_t n = w.hand_over.windows;
  const std::string after = w.profiler_api ? "" : "step " + std::to_string(w.last_window_step) + ": ";
  return "wrote " + std::to_string(n) + (n == 1 ? " window" : " windows") + " (files listed above); nothing " +
         "was recorded after " + after + after_last_window(w);
}

RecordState first_state(const Windows& w) {
  if (w.profiler_api) return RecordState::Off;
  return w.scheduled ? state_for(step_action(w, 0)) : RecordState::Record;
}

}  // namespace

bool start_windows(const Config& config) noexcept {
  try {
    auto* w = new Windows;
    w->config = &config;
    w->on_demand = config.on_demand;
    w->scheduled = config.schedule_given || config.on_demand;
    w->schedule = {config.skip_first, config.wait, config.warmup, config.active, config.repeat};
    std::vector<std::string> warnings;
    StepOn step_on = parse_step_on(config.step_on, warnings);
    if (w->on_demand && (step_on.markers.profiler_api || config.schedule_given)) {
      warnings.push_back("PROFAGENT_ON_DEMAND: the schedule and profiler-api are not used: `profagent trigger` "
                         "says which steps are recorded");
      step_on.markers.profiler_api = false;
    }
    std::string problem;  // patterns left out; the other markers still work
    const bool marked = collector::configure_step_markers(step_on.markers, on_step, on_profiler_api, &problem);
    if (!marked) problem = "no step marker could be set up";
    if (!problem.empty()) warnings.push_back("PROFAGENT_STEP_ON: " + problem);
    for (std::string& warning : warnings) hold_warning(std::move(warning));
    w->profiler_api = step_on.markers.profiler_api && marked;
    w->step_start = collector::now();
    g_windows = w;
    pthread_atfork(nullptr, nullptr, forget_exports_in_child);
    collector::set_device_ahead(w->scheduled && !w->profiler_api && device_ahead(*w, 0));
    collector::set_state(first_state(*w));
    w->time_ms = step_on.time_ms;
    return true;
  } catch (...) {
    static collector::SwallowedSite site{"step windows could not be set up (out of memory); nothing is recorded"};
    collector::note_swallowed(site);
    return false;
  }
}

void step_ended() noexcept { on_step(); }

void start_time_marker() noexcept {
  Windows* w = g_windows;
  if (w == nullptr || w->time_ms == 0 || w->timer_started.exchange(true)) return;
  if (!start_step_timer(w->time_ms, on_step, windows_finished)) {
    log(LogLevel::Warn, "PROFAGENT_STEP_ON time: could not start the timer thread; no step is marked by time");
  }
}

namespace {

// The exit's boundary, under Windows::mutex: no more boundaries, recording stops, and the
// window being recorded is cut (nullptr when idle or in warmup: nothing to write).
collector::CutWindow* cut_last_window(Windows& w, std::vector<StepTicks>& steps, BoundaryEffects& effects,
                                      CostMark& from) {
  std::lock_guard lock(w.mutex);
  w.finished = true;
  const bool recording = collector::state() == RecordState::Record;
  collector::set_device_ahead(false);
  set_record_state(RecordState::Off, effects);  // hooks forward, record nothing more
  if (!recording) {
    collector::discard_window();  // idle or warmup at exit: nothing to write
    return nullptr;
  }
  if (!(!w.scheduled && !w.profiler_api)) {
    const uint64_t number = w.profiler_api ? w.profiler_windows : w.step;
    w.window_steps.push_back({number, w.step_start, collector::now()});  // the step in progress
  }
  collector::CutWindow* cut = collector::cut_window();
  steps = std::move(w.window_steps);
  w.window_steps.clear();
  from = w.window_mark;
  return cut;
}

}  // namespace

// Under Windows::mutex the window can be cut by no boundary, so the steps read belong to the
// window the collector is streaming. Step ends are pushed with now() and the step in progress
// starts there, so the list before step_start is final; profiler-api lists its one step at
// Stop (the steps marked inside are not kept), a timed window cuts its steps to its start. The
// ticks are converted after an anchor taken past them all: a converter made later (the export's)
// converts them the same way (collector/clock.h: a tick between two anchors is converted with
// those two). The anchor is taken under the lock: every other anchor comes from a cut (under
// it too) or from this thread (a segment, an interval), so none taken earlier is appended after
// it, between anchors this conversion uses; the converter (a copy of every anchor) is made after
// the lock is released, so a step boundary never waits for it.
void streamed_steps_so_far(uint32_t window, std::size_t known, exporters::StepsSoFar& out) noexcept {
  Windows* w = g_windows;
  out = {};
  if (w == nullptr) return;
  try {
    std::vector<StepTicks> ticks;
    uint64_t through = 0;
    {
      std::lock_guard lock(w->mutex);
      // A window not set up for steps that profagent_step() marked already: it has steps too
      // (folded by them, not as one without, when its first part comes after that).
      out.expected = w->scheduled || w->profiler_api || !w->config->step_on.empty() || !w->window_steps.empty();
      out.current = !w->finished && collector::streamed_window() == window;
      if (!out.current) return;
      through = w->timed_open ? std::max(w->step_start, w->timed_from) : w->step_start;
      if (!w->profiler_api && known < w->window_steps.size()) {
        ticks.assign(w->window_steps.begin() + std::ptrdiff_t(known), w->window_steps.end());
      }
      for (StepTicks& step : ticks) step.start = w->timed_open ? std::max(step.start, w->timed_from) : step.start;
      collector::clock::add_anchor();
    }
    const collector::clock::TickConverter converter = collector::clock::converter();
    for (const StepTicks& s : ticks) out.added.push_back({s.number, converter.to_ns(s.start), converter.to_ns(s.end)});
    out.through_ns = converter.to_ns(through);
  } catch (...) {
    out.current = false;
  }
}

bool freeze_last_window(Trace& trace) noexcept {
  Windows* w = g_windows;
  try {
    // The windows before it first: until a streamed one is exported, this one is not streamed
    // (collector/segment_stream.h streamed_window_exported), and the drain would take nothing.
    if (w != nullptr) wait_for_exports();
    drain_streamed_window();  // while still recording: only its tail is left to join
    if (w == nullptr) {
      collector::set_state(RecordState::Off);
      const CostMark to = cost_mark();
      {
        AgentWork join("join window");
        trace = collector::freeze_window();
      }
      attach_agent_cost(trace, {}, to);
      return true;
    }
    std::vector<StepTicks> steps;
    BoundaryEffects effects;
    CostMark from;
    collector::CutWindow* cut = cut_last_window(*w, steps, effects, from);
    const CostMark to = cost_mark();
    apply(effects);
    // A boundary may have queued a window after the first wait: joins go in the order of cuts.
    wait_for_exports();
    if (cut == nullptr) return true;
    {
      AgentWork join("join window");
      trace = collector::finish_window(cut);  // waits for the window's device work (bounded)
    }
    attach_steps(steps, trace, !w->scheduled && !w->profiler_api);
    attach_agent_cost(trace, from, to);
    return true;
  } catch (...) {
    static collector::SwallowedSite site{"the last window could not be frozen (out of memory)"};
    collector::note_swallowed(site);
    return false;
  }
}

std::string window_output_dir() noexcept {
  Windows* w = g_windows;
  if (w == nullptr || !w->on_demand) return {};
  try {
    std::lock_guard lock(w->mutex);
    return w->trigger_output_dir;
  } catch (...) {
    return {};
  }
}

std::string closing_line_without_window() noexcept {
  Windows* w = g_windows;
  if (w == nullptr || (!w->scheduled && !w->profiler_api)) return {};
  try {
    std::lock_guard lock(w->mutex);
    if (w->hand_over.windows != 0) return windows_written_line(*w);
    return "wrote nothing: " + (w->profiler_api ? profiler_api_silence(*w) : schedule_silence(*w));
  } catch (...) {
    static collector::SwallowedSite site{"could not say why nothing was recorded (out of memory)"};
    collector::note_swallowed(site);
    return {};
  }
}

}  // namespace profagent::agent
