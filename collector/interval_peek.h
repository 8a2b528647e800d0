// A look at the window being recorded without ending it: what the crash-safe partial trace
// (agent/partial_writer.h) appends at each interval.
//
// Each call copies the host events committed since the previous call, at most a streamed
// segment's worth per thread (collector/segment_stream.h; the rest at the next call) (thread_buffer.h
// peek_all(): nothing is taken from the buffers, the window's own join still gets every event)
// and joins them with copies of the device records the pool holds for them (linked to one of
// these calls, or the work of a call the CUPTI callback recorded). A call that queued device
// work whose record has not come yet is held for the next call, once, so that a launch and its
// kernel are written together; after that it is given without its record.
//
// An interval ends at one instant (its end_ns, the partial trace's through_ns), and that
// instant is a promise both ways: every host event in it had ended by then, and every call
// that had returned to the program by then is in it or in an earlier interval. So the instant
// is read before the buffers are (a call committed after the read but returned before a later
// instant would be missed), and it is moved back to just before the earliest held call ended;
// the events that ended after it are carried to the next call, as a window's cut carries them.
//
// What an interval's join cannot know, because it sees only that interval: an operator or
// range still open at the interval's end does not enclose the calls of that interval (their
// External id is their own), and device work without a link (a library's driver launch) is
// not in it. The window's final trace, joined whole, has both.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/thread_buffer.h"
#include "collector/trace.h"

namespace profagent::collector {

// The caller's place, from one call to the next (one per caller; not thread-safe).
struct IntervalCursor {
  uint32_t cuts = ~0u;               // the session's cuts at the last peek: a cut since starts a new window
  std::vector<ThreadEvents> held;    // device-work calls whose record had not come (given once)
  std::vector<ThreadEvents> carried; // events that ended after the last interval's end (given next)
};

struct PeekedInterval {
  bool recording = false;   // false: no window is being recorded (idle, warmup): nothing else is set
  bool new_window = false;  // the first interval of its window (or the first since a cut)
  uint64_t events = 0;      // host events in `trace` (device records: trace.device.size())
  // The interval joined: trace.window is the window being recorded, start_ns its start,
  // end_ns its end (above: the instant every event in it had ended by, and every call
  // returned by is in it or before it); metadata as a window's.
  Trace trace;
};

// Never throws; false when out of memory (the interval's events are then not given again).
bool peek_interval(IntervalCursor& cursor, PeekedInterval& out) noexcept;

}  // namespace profagent::collector
