// A streamed window: a long window written while it is recorded, so that it never has to fit
// in memory (the agent's partial writer drives it: agent/partial_writer.h).
//
// Each segment TAKES the chunks the writers have left (thread_buffer.h take_closed_chunks: the
// chunks go back to the pool), joins the events that are final, and hands them over to be
// appended to the window's trace; the window's cut joins the rest (its tail) as usual. The
// links are those a join of the whole window gives:
//   - An operator or range is committed at its end, after what it encloses. Each thread
//     publishes where its outermost open scope began (api.h scope_opened), read after the
//     take: a taken event that starts at or after it may still get an enclosing scope, and so
//     may one that a scope committed but not taken yet (still in the writer's chunk) encloses.
//     Those are held, with every later event of their thread and every taken scope around
//     them, and joined again by the next segment (or the cut).
//   - A launch, copy or set whose device record has not come is held the same way, for at
//     most StreamLimits::device_wait_segments segments; then it is written without its record
//     (counted: StreamedWindow::written_without_device_record, late_device_records).
//   - Device records linked to a final call are claimed from the pool with it, and their links
//     (also every call's own CUPTI correlation) are given to the segment and forgotten by the
//     pool: what the pool holds stays bounded too.
// Not streamed: records no call is linked to (a library's driver launches outside every range,
// unlinked work), which the cut's join claims by time as for any window.
// Call stacks: each segment's are symbolised as it is cut, into the window's one list of
// distinct stacks (stack_symbols.h StreamedStacks), which the tail adopts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/trace.h"

namespace profagent::collector {

struct StreamLimits {
  std::size_t segment_events = std::size_t(1) << 17;  // host events taken per segment at most
  // Events held for scopes still open (a range around the whole window holds everything
  // after its start): beyond this, they are written without that scope (counted).
  std::size_t held_events = std::size_t(1) << 19;
  uint32_t device_wait_segments = 4;
};

// The order in which a streamed window's segments, and then its tail, are cut, use the
// window's stacks and are appended. Segments may be cut by two threads (the agent's
// partial-trace thread, and the exit's flush), and each cut calls CUPTI and the loader, so no
// lock may serialise them: instead each cut takes a ticket first and waits, outside every lock
// (bounded), until every earlier ticket is done; the turn ends when the StreamTurn is destroyed
// (after its segment is appended). A window's end takes a ticket after its cut, so every
// segment of the window (taken before that cut) comes before it. Move-only.
class StreamTurn {
 public:
  StreamTurn() = default;
  StreamTurn(StreamTurn&& other) noexcept;
  StreamTurn& operator=(StreamTurn&& other) noexcept;
  ~StreamTurn() { end(); }
  // Waits (bounded: kStreamTurnWaitMs) until every earlier ticket is done; false when it gave
  // up (a holder stuck for that long): the caller then touches nothing shared in order.
  bool wait() noexcept;
  // Every earlier ticket is done (wait() returned true): this holder alone is in turn.
  bool held() const noexcept { return held_; }
  // Done: the next ticket may go (once every earlier one is done too).
  void end() noexcept;

 private:
  friend StreamTurn take_stream_turn() noexcept;
  friend StreamTurn issue_stream_ticket() noexcept;
  uint64_t ticket_ = 0;  // 0: none
  bool held_ = false;
};

// How long a turn is waited for: as long as the exit flush waits for a segment being written.
inline constexpr uint64_t kStreamTurnWaitMs = 60'000;

// A ticket after every segment cut so far, waited for (a streamed window's end, before it
// adopts the window's stacks and finishes its trace). held() says whether the wait succeeded.
StreamTurn take_stream_turn() noexcept;

struct StreamedSegment {
  // false: nothing was cut and nothing else is set: no window is being recorded, or the window
  // being recorded is not streamed yet because the last streamed window's export is not done
  // (streamed_window_exported).
  bool recording = false;
  bool first_of_window = false;
  uint64_t chunks = 0;        // chunks taken and given back to the pool
  uint64_t held_events = 0;   // held for a later segment or the cut
  // The segment joined: trace.window is the window being recorded, metadata as a window's.
  Trace trace;
  // Its turn, held from before its cut until the caller has appended it and lets it go
  // (destroys it, or calls turn.end()).
  StreamTurn turn;
};

// One segment of the window being recorded. Never throws; false when out of memory (the events
// taken are then left to the cut, not lost). No lock is held across the device flush or the
// symbolizer (CUPTI and the loader): the segment's turn orders it (StreamTurn). Returns with
// out.turn held, so the caller appends it in turn (a turn not come within kStreamTurnWaitMs:
// recording false, nothing taken); the caller must hold no lock a turn holder may take.
bool cut_segment(const StreamLimits& limits, StreamedSegment& out) noexcept;

// The streamed window's tail (its join leaves its raw stack ids: symbolize_window_stacks):
// symbolised with the symbolizer its segments used (each module's debug info read once for the
// whole window), numbered in their list, tail.stacks the whole list (StreamedStacks::adopt_tail).
// Called once per streamed window, with a turn taken after its last segment (take_stream_turn);
// with a turn not held, or no segment of this window symbolised, by a symbolizer of its own.
// Calls the loader: no lock may be held.
void adopt_streamed_stacks(Trace& tail, const StreamTurn& turn) noexcept;

// Window `window` is exported (every window up to it is): the next window may be streamed. A
// streamed window's outputs (its traces, folds and stacks) are one window's at a time, so the
// first segment of the window after a streamed one waits for this; meanwhile that window is
// buffered as any window is (its events count against the buffer, the pool's drops counted).
void streamed_window_exported(uint32_t window) noexcept;

// The window being recorded when some segment of it was cut (0: none is).
uint32_t streamed_window() noexcept;

}  // namespace profagent::collector
