// Which taken events of a streamed window are final (collector/segment_stream.h): per thread,
// a bound from which its events are held, lowered until no held event can end up enclosed by
// a final scope. Separate from the session so that tests can feed it one recorded window both
// ways (segment by segment, and whole).
#pragma once

#include <cstdint>
#include <vector>

#include "collector/thread_buffer.h"

namespace profagent::collector {

inline constexpr uint64_t kNoBound = ~uint64_t{0};

// One thread's events not written yet: held from earlier segments, then this take's.
struct Candidates {
  ThreadEvents thread;
  uint64_t bound = kNoBound;  // events starting at or after it are held
};

// The held events and this take's, per thread (held first: they were committed first). A
// thread's bound: the smaller of its outermost open scope's start and the earliest scope it
// committed after the take (thread_buffer.h); a thread with held events and none listed in
// the take (its buffer was drained and reused) has none.
std::vector<Candidates> gather_candidates(std::vector<ThreadEvents>&& held, TakenChunks&& taken);

// Operators and ranges (not NVTX start/end ranges) enclose; calls do not.
bool encloses_others(const HostEvent& e);

// A scope before the bound that ends at or after it may enclose a held event: the bound is
// lowered to its start. Repeated until no such scope is left.
void hold_enclosing_scopes(Candidates& c);

// Splits each thread at its bound: what starts before it is final, the rest held. A stack tag
// goes with the event before it.
void split_candidates(std::vector<Candidates>& all, std::vector<ThreadEvents>& final_threads,
                      std::vector<ThreadEvents>& held);

}  // namespace profagent::collector
