// Helpers shared by the collector's unit tests.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "collector/api.h"
#include "collector/thread_buffer.h"

namespace profagent::collector::testing {

inline uint32_t this_tid() { return uint32_t(syscall(SYS_gettid)); }

// A host event as a hook would record it; `marker` goes into arg1 so tests find their own.
inline HostEvent make_event(EventKind kind, uint64_t start, uint64_t end, uint64_t marker = 0,
                            NameId name = kNoName) {
  HostEvent event{};
  event.id = new_event_id();
  event.start = start;
  event.end = end;
  event.kind = uint8_t(kind);
  event.arg1 = marker;
  event.name = name;
  return event;
}

// Events drained now whose arg1 equals `marker` (other tests' leftovers are ignored).
inline std::vector<HostEvent> drain_marked(uint64_t marker, DrainResult* all = nullptr) {
  DrainResult result = drain_all();
  std::vector<HostEvent> found;
  for (const ThreadEvents& thread : result.threads) {
    for (const HostEvent& event : thread.events) {
      if (event.arg1 == marker) found.push_back(event);
    }
  }
  if (all) *all = std::move(result);
  return found;
}

}  // namespace profagent::collector::testing
