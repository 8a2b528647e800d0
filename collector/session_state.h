// The session's shared state: internal to collector/session.cpp and collector/window.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

#include "collector/device_backend.h"
#include "collector/device_pool.h"
#include "collector/session.h"
#include "collector/thread_buffer.h"

namespace profagent::collector {

// The window being streamed (collector/segment_stream.cpp), under the session mutex.
struct StreamState {
  uint32_t cuts = ~0u;                  // Session::cuts when its segments began: which window
  std::vector<ThreadEvents> held;       // taken, not final yet: joined by a later segment or the cut
  std::unordered_map<uint64_t, uint32_t> waiting_device;  // host id -> segments it waited for its record
  StreamedWindow written;               // what its segments wrote
  DropCounters limited;                 // what the size limits left out of its segments (window_limits.h)
};

struct Session {
  SessionOptions options;
  std::atomic<bool> started{false};
  std::atomic<bool> backend_started{false};
  std::atomic<bool> backend_ready{false};  // start_backend() done: set_activity() may be called
  // A forked child (until exec): the runtime's own locks may be held by parent threads that
  // do not exist here, so the child's freeze asks the runtime nothing (no platform facts).
  std::atomic<bool> forked_child{false};
  std::mutex freeze_mutex;  // see the lock order in session.h
  std::mutex mutex;         // guards everything below up to the device activity fields
  DeviceBackend* backend = nullptr;  // leaked (hooks may be inside it)
  DevicePool pool;                   // device records and links waiting for their window
  uint32_t cuts = 0;                 // cuts made so far (kept and discarded windows)
  std::vector<ThreadEvents> carried;  // ended after the last cut: the next window's (its first segment's, if streamed)
  StreamState stream;
  // The last streamed window whose outputs are not finished yet (0: none). Its traces, folds
  // and stacks are single-window state on the agent's side, so the next window's segments wait
  // until its export says it is done (streamed_window_exported): until then that window is
  // buffered, as a window that is not streamed is.
  uint32_t stream_unexported = 0;
  uint64_t window_start_ticks = 0;
  CpuTimes window_start_cpu;  // CPU times read at the last cut (or the start): the next window's start
  bool window_start_deferred = false;  // window_start_cpu is a deferred start (collector/cpu_times.h)
  uint32_t window = 0;
  PlatformInfo platform;              // asked once, at the first join that needs it
  bool platform_known = false;
  // Drains taken from the backend but not yet in the pool: a join finishing meanwhile would
  // miss their records, so it waits for this to be 0 (no lock is held across the drain).
  std::atomic<uint32_t> drains_in_flight{0};
  // Device activity follows the record state (DeviceBackend::set_activity) without a lock held
  // across CUPTI: a boundary asks by taking a ticket; whoever holds `device_applying` applies
  // the latest state until every ticket taken is served (session.cpp follow_state_with_device).
  std::atomic<uint64_t> device_requests{0};
  std::atomic<uint64_t> device_applied{0};
  std::atomic<bool> device_applying{false};
  DeviceActivity device_activity = DeviceActivity::All;  // written only while holding device_applying
};


Session& session();  // leaked singleton

// Flushes (unless `flush` is false) and drains the device backend, outside every collector
// lock, into the pool (collector/window.cpp).
void collect_device_records(Session& s, bool flush);

// A drain another thread took (the periodic poll) may hold records not yet in the pool: waits
// (yielding) until none is in flight or CLOCK_MONOTONIC reaches `deadline_ns`. A drain takes
// microseconds; the bound is for a thread preempted in the middle of one.
inline constexpr uint64_t kDrainInFlightWaitNs = 100'000'000;
void wait_for_drains_in_flight(Session& s, uint64_t deadline_ns);

// Moves the events of `threads` that ended after `cut` (ticks) into `carried`, each thread's in
// its order: they belong to what comes after the cut. Events are committed when they end, so
// only a concurrent thread can show one that ended after a cut taken before its buffers were
// read (a window's cut, an interval's through instant).
void split_at_cut(std::vector<ThreadEvents>& threads, uint64_t cut, std::vector<ThreadEvents>& carried);

// Moves `thread`'s events from `from` on into a new entry of `into` (same thread): what a cut,
// an interval's end or a held launch sends to what comes next. Returns that entry.
ThreadEvents& move_events_from(ThreadEvents& thread, std::vector<HostEvent>::iterator from,
                               std::vector<ThreadEvents>& into);

// The names of the threads that recorded `threads` (a name the program gave wins).
std::vector<std::pair<uint32_t, std::string>> window_thread_names(const std::vector<ThreadEvents>& threads);

// The window's metadata (process, devices, configuration, device backend), keeping the thread
// names `trace` has. May ask the CUDA runtime once (no collector lock held).
void describe_window(Session& s, Trace& trace);

}  // namespace profagent::collector
