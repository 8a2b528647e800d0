// The crash-safe partial trace of the window being recorded (exporters/partial_trace.h says how
// the file stays valid): every PROFAGENT_PARTIAL_INTERVAL_MS an agent thread appends to
// `<stem>.trace.json.partial` the events committed since the previous interval, joined with
// their device records (collector/interval_peek.h). A job killed by SIGKILL or a node failure
// leaves that file: a trace of every interval but the last. When the window's files are
// written, its final trace replaces it and the partial files are removed.
//
// The thread starts at the process's first CUDA call, with the device poller (a process that
// never uses CUDA runs none), and only when the trace is written and host activity recorded.
// Nothing is written for an interval without events. A forked child writes no partial trace.
#pragma once

#include <cstdint>

#include "agent/config.h"

namespace profagent::agent {

// Starts the thread once per process when config.partial_interval_ms is not 0.
void start_partial_writer(const Config& config) noexcept;

// After window `window`'s files were written: its partial trace is removed when `trace_written`
// (the final trace is there), else closed and left on disk (it is then all that is left).
void finish_partial(uint32_t window, bool trace_written) noexcept;

}  // namespace profagent::agent
