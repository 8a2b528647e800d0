// The recording session: what the agent drives (collector/api.h is what hooks see).
//
//   SessionOptions options;  ...fill from Config...
//   collector::start(options);                 // once, at agent init (no CUDA/CUPTI call here)
//   collector::set_state(RecordState::Record);
//   ... program runs; the first CUDA call starts the device backend (cuda_in_use()) ...
//   Trace trace = collector::freeze_window();  // at exit (later: at each window end)
//   collector::set_state(RecordState::Off);
//
// Windows: a window is the set of host events committed between two cuts, filtered by time.
// freeze_window() makes a cut now: host events that ended at or before the cut and started at
// or after the previous cut form the window; events still running at the cut are carried to
// the next window. Device records go to the window holding the host call that issued them
// (collector/device_pool.h), also when they arrive after later cuts: the join of a window
// waits, bounded by SessionOptions::window_wait_ms, until every launch, copy and set of the
// window has its record, forcing the device backend to flush as it polls. What is still
// missing then is counted in the window's late_device_records, and dropped when it comes.
// The agent's step windows (agent/windows.h) end windows at step boundaries with cut_window()
// (joined later by finish_window() on its exporter thread) and throw warmup steps away with
// discard_window().
//
// Lock order (outermost first): freeze mutex (cuts: host buffers drained, events split) ->
// session mutex -> leaf locks (thread registry, names, activity buffers). No collector lock is
// held across a CUPTI or CUDA call: flushes and drains run unlocked (drains_in_flight tells a
// join that a drained batch is still on its way into the pool), and device activity follows
// the record state through tickets, not a lock (session_state.h).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "collector/api.h"
#include "collector/cupti_options.h"
#include "collector/device_backend.h"
#include "collector/thread_buffer.h"
#include "collector/trace.h"
#include "collector/window_limits.h"
#include "collector/window_wait.h"

namespace profagent::collector {

// Facts only the CUDA runtime knows. The agent provides a function that asks it
// (cudaGetDeviceProperties, cudaRuntimeGetVersion, cudaDriverGetVersion); the session calls
// it at freeze under AgentBusy, and only if CUDA was used.
struct PlatformInfo {
  std::vector<DeviceInfo> devices;
  int cuda_runtime_version = 0;
  int cuda_driver_version = 0;
};
using PlatformInfoFn = PlatformInfo (*)();
// The configuration as Trace::config records it, asked at each window's description: built
// only for a window (a process that records nothing never builds it).
using ConfigPairs = std::vector<std::pair<std::string, std::string>>;
using ConfigPairsFn = ConfigPairs (*)();

struct SessionOptions {
  bool activity_cpu = true;     // host records in the Trace (PROFAGENT_ACTIVITIES has cpu)
  bool activity_cuda = true;    // a device backend (PROFAGENT_ACTIVITIES has cuda)
  CuptiOptions cupti;           // PROFAGENT_CUPTI, PROFAGENT_CUPTI_LIB
  size_t buffer_bytes = kDefaultBufferBytes;  // host event arena (PROFAGENT_BUFFER_MB)
  ConfigPairsFn config_pairs = nullptr;  // Trace::config
  PlatformInfoFn platform_info = nullptr;
  // How long a window's join may wait for the device work its window issued
  // (PROFAGENT_WINDOW_WAIT_MS); 0: take what has arrived, wait for nothing.
  uint32_t window_wait_ms = kDefaultWindowWaitMs;
  // PROFAGENT_MAX_EVENTS, PROFAGENT_MIN_DURATION_US (collector/window_limits.h).
  WindowLimits limits;
  // Tests: use this backend instead of CUPTI (not owned; must live for the whole process).
  DeviceBackend* device_backend = nullptr;
};

// Once per process (later calls return false and change nothing). Starts no device backend
// by itself unless CUDA was already used.
bool start(const SessionOptions& options) noexcept;
bool started() noexcept;

// The record state, with device activity following it (on while recording).
void set_state(RecordState state) noexcept;
RecordState state() noexcept;
// set_state() in two halves, so a caller holding its own lock changes the state under it and
// lets the device follow (a CUPTI call) after releasing it. Racing callers are applied in
// order: the device ends in the state of the last set_record_state().
void set_record_state(RecordState state) noexcept;
void follow_device_state() noexcept;
// Device work traced although nothing records (DeviceActivity::WorkOnly: the step before a
// recorded one, when no warmup step precedes it): a launch recorded at the first instant of
// recording then finds the device traced. Records of calls made meanwhile link to no host
// event and go to no window. Takes effect at the next follow_device_state().
void set_device_ahead(bool on) noexcept;

// Ends the current window now and returns it (never throws; on failure an empty Trace whose
// device_backend says why). Waits (bounded) for the window's device work as said above.
Trace freeze_window() noexcept;

// The same in two halves, so a program is held at a step boundary only for the cut: the
// cut (host buffers drained, events split at the cut; no CUDA or CUPTI call) and the join,
// which waits for the device and may run later on another thread (the agent's exporter).
// Every cut must be finished exactly once, in the order of the cuts; finish_window(nullptr)
// (a failed cut) gives the empty Trace saying why.
struct CutWindow;
CutWindow* cut_window() noexcept;
Trace finish_window(CutWindow* cut) noexcept;

// Ends the current window and throws it away (warmup), counting nothing as dropped.
void discard_window() noexcept;

// Parses completed device buffers now so CUPTI gets them back (a background thread may call
// this periodically; freeze_window() does it too).
void poll_device() noexcept;

// Commits the memory the host event buffers will use next, off the recording threads, once
// anything was recorded (an agent thread calls this periodically; collector/chunk_pool.h says why).
void warm_host_buffers() noexcept;

// What the device library (CUPTI) adds to each traced CUDA call's thread: measured by the first
// call made once the device backend started (collector/cupti_call_cost.h); later calls return
// that figure. NotYet until the backend started; Untraced host-only.
// From an agent thread that makes no CUDA call of the program's, holding no lock: the probe
// uses CUPTI's per-thread state (its external id stack), which a thread leaving, or the main
// thread at exit (whose thread-locals are destroyed before the exit handlers run), has lost.
DeviceCallCost measure_device_call_cost() noexcept;

// True once any CUDA hook ran (cuda_in_use()).
bool cuda_used() noexcept;

}  // namespace profagent::collector
