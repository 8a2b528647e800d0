// The crash-safe partial trace of the window being recorded (exporters/partial_trace.h says how
// the file stays valid): every PROFAGENT_PARTIAL_INTERVAL_MS an agent thread appends to
// `<stem>.trace.json.partial` the events committed since the previous interval, joined with
// their device records (collector/interval_peek.h). A job killed by SIGKILL or a node failure
// leaves that file: a trace of every interval but the last. When the window's files are
// written, its final trace replaces it and the partial files are removed.
//
// The thread starts when the first interval has passed (the device poller looks: a process
// that never uses CUDA, or ends sooner, runs none), and only when host activity is recorded.
// Nothing is written for an interval without events. A forked child writes no partial trace.
#pragma once

#include <cstdint>

#include <string>
#include <vector>

#include "agent/config.h"
#include "collector/trace.h"

namespace profagent::agent {

// At the process's first CUDA call: the first interval starts (config.partial_interval_ms 0: none).
void start_partial_writer(const Config& config) noexcept;

// From the device poller's every tick: starts the thread once the first interval has passed.
void partial_writer_tick() noexcept;

// Streamed windows (collector/segment_stream.h): once the host events buffered pass
// config.stream_after_bytes(), the same thread cuts segments of the window being recorded and
// appends them to its partial trace (a fresh one: what intervals appended is dropped), until
// the window ends. Those chunks go back to the pool, so the buffer never fills.

// Before the last window's cut (exit): a streamed window's closed chunks (or those of a window
// whose buffered events passed the threshold, streamed from here) are streamed to the last, so
// the tail joined at its end is the writers' open chunks and the held events only.
// Step windows are cut as they are: their tail is what was buffered since the last segment.
void drain_streamed_window() noexcept;

// A streamed window's end: appends `tail` (the window's Trace, which holds its last events) to
// the window's streamed traces (JSON, and Perfetto when that format is asked for) and gives
// them their final names. "" on success of the JSON trace, else one line saying why; `paths`
// gets each trace finished (a Perfetto trace that could not be is said on stderr).
std::string finish_streamed_trace(Trace& tail, std::vector<std::string>& paths) noexcept;

// After window `window`'s files were written: its partial trace is removed when `trace_written`
// (the final trace is there), else closed and left on disk (it is then all that is left).
// False when the writer was busy appending for 2 s: the partial is then left on disk as it is
// (stale but valid).
bool finish_partial(uint32_t window, bool trace_written) noexcept;

}  // namespace profagent::agent
