// Scheduler state shared by timeline.cpp, streams.cpp and graph.cpp. All of it is guarded by
// sched_mutex().
#pragma once

#include <cstdint>
#include <vector>

#include "timeline.h"

namespace devsim {

struct DeviceState {
  Stream* legacy = nullptr;
  std::vector<Stream*> streams;        // live non-legacy streams (created and per-thread)
  std::vector<uint64_t> kernel_slots;  // end time of the kernel holding each slot
  uint64_t copy_engines[2] = {0, 0};   // HtoD and DtoH engines: one copy at a time each
  std::vector<OpRef> retired_tails;    // unfinished last ops of destroyed streams
};

DeviceState& device_state(int device);
Status enqueue_locked(Stream* s, const OpRef& op, const OpRef& extra_dep);
Status enqueue_node_locked(Stream* s, const OpRef& op, const std::vector<OpRef>& deps, bool after_stream);
// Reports the graph nodes this thread's captures created under sched_mutex (graph.cpp).
void flush_capture_notices();

}  // namespace devsim
