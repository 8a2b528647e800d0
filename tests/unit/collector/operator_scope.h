// What a DIOPI operator wrapper does, for tests that drive the collector directly: its own
// event, its id pushed as the external correlation id around its body. Also finds a host
// record of a frozen Trace by id. Plain C++17: the nvcc-built devsim test includes it too.
#pragma once

#include <cstdint>

#include "collector/api.h"
#include "collector/trace.h"

namespace profagent::collector::testing {

// Returns the operator's event id, or 0 when the collector is not recording.
template <typename Body>
uint64_t operator_scope(const char* name, Body body) {
  if (!operator_should_record()) return 0;
  HostEvent event{};
  event.id = new_event_id();
  event.start = now();
  push_external_id(event.id);
  body();
  pop_external_id();
  event.end = now();
  event.kind = uint8_t(EventKind::Operator);
  event.name = intern(name);
  record(event);
  return event.id;
}

inline const HostRecord* find_host(const Trace& trace, uint64_t id) {
  for (const HostRecord& r : trace.host) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

}  // namespace profagent::collector::testing
