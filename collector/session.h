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
// the next window. Device records go to the window holding the host call that issued them;
// those whose host call belongs to no window (an earlier, already written one; a warmup step)
// are dropped and counted as late. The agent's step windows (agent/windows.h) end windows at
// step boundaries with cut_window() (joined later by finish_window() on its exporter thread)
// and throw warmup steps away with discard_window().
//
// Lock order (outermost first): freeze mutex (only freeze/discard take it, so it may be held
// across the device flush: CUPTI's callbacks never take it) -> session mutex -> leaf locks
// (thread registry, names, activity buffers). The session mutex is never held across a CUPTI
// or CUDA call.
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

struct SessionOptions {
  bool activity_cpu = true;     // host records in the Trace (PROFAGENT_ACTIVITIES has cpu)
  bool activity_cuda = true;    // a device backend (PROFAGENT_ACTIVITIES has cuda)
  CuptiOptions cupti;           // PROFAGENT_CUPTI, PROFAGENT_CUPTI_LIB
  size_t buffer_bytes = kDefaultBufferBytes;  // host event arena (PROFAGENT_BUFFER_MB)
  bool record_shapes = false;   // PROFAGENT_RECORD_SHAPES (shape records: a later issue)
  std::vector<std::pair<std::string, std::string>> config;  // copied into Trace::config
  PlatformInfoFn platform_info = nullptr;
  // Tests: use this backend instead of CUPTI (not owned; must live for the whole process).
  DeviceBackend* device_backend = nullptr;
};

// Once per process (later calls return false and change nothing). Starts no device backend
// by itself unless CUDA was already used.
bool start(const SessionOptions& options) noexcept;
bool started() noexcept;

void set_state(RecordState state) noexcept;
RecordState state() noexcept;

// Ends the current window now and returns it (never throws; on failure an empty Trace whose
// device_backend says why). Flushes the device backend without holding collector locks.
Trace freeze_window() noexcept;

// The same in two halves, so a program is held at a step boundary only for the cut: the
// cut (host buffers drained, device records taken, events split at the cut) and the join,
// which may run later on another thread (the agent's exporter). Every cut must be finished
// exactly once; finish_window(nullptr) (a failed cut) gives the empty Trace saying why.
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

// True once any CUDA hook ran (cuda_in_use()).
bool cuda_used() noexcept;

// Device backend status as it would appear in Trace::device_backend.
std::string device_backend_status();

// Process facts as they appear in Trace::process (thread names excepted).
ProcessInfo current_process_info();

}  // namespace profagent::collector
