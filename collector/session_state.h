// The session's shared state: internal to collector/session.cpp and collector/window.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "collector/device_backend.h"
#include "collector/session.h"
#include "collector/thread_buffer.h"

namespace profagent::collector {

struct Session {
  SessionOptions options;
  std::atomic<bool> started{false};
  std::atomic<bool> backend_started{false};
  std::atomic<bool> backend_ready{false};  // start_backend() done: set_active() may be called
  // A forked child (until exec): the runtime's own locks may be held by parent threads that
  // do not exist here, so the child's freeze asks the runtime nothing (no platform facts).
  std::atomic<bool> forked_child{false};
  std::mutex freeze_mutex;  // see the lock order in session.h
  std::mutex mutex;         // guards everything below
  DeviceBackend* backend = nullptr;  // leaked (hooks may be inside it)
  DeviceBatch pending;               // parsed device records not yet in a window
  // CUPTI correlation -> external id, in two generations: received since the last cut, and
  // between the two cuts before. Older links are dropped at each cut: a device record arriving
  // two cuts after its call's link would be late anyway (its window is written), and CUPTI
  // sends a link for every recorded CUDA call, most of which never get device work.
  std::unordered_map<uint32_t, uint64_t> links;
  std::unordered_map<uint32_t, uint64_t> older_links;
  std::vector<ThreadEvents> carried;  // host events still running at the last cut
  uint64_t window_start_ticks = 0;
  uint32_t window = 0;
  // Device activity follows the record state (DeviceBackend::set_active). A leaf lock held
  // across the backend's enable/disable calls, never together with the locks above.
  std::mutex activity_mutex;
  bool device_active = true;  // a started backend starts with its activities on
};


Session& session();  // leaked singleton

}  // namespace profagent::collector
