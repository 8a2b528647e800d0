// Decodes batches of trace events ("[e1,e2,...]", from trace_stream.h) with simdjson's
// on-demand parser into RawEvents, and the metadata object into a Trace's header fields.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/report/raw_event.h"
#include "agent/report/trace_stacks.h"
#include "collector/trace.h"

namespace profagent::report {

// Returns false with `error` set to stop reading.
using EventFn = std::function<bool(const RawEvent& event, uint64_t index, std::string& error)>;

class EventReader {
 public:
  EventReader();
  ~EventReader();
  // `batch` must be followed by `padding` readable bytes (>= simdjson's); `first_index` numbers
  // its events.
  bool read_batch(std::string_view batch, std::size_t padding, uint64_t first_index, const EventFn& on_event,
                  std::string& error);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct TraceHeader {
  bool has_events_key = false;     // a trace has "traceEvents"
  bool profagent = false;          // written by profagent (its own metadata keys)
  uint64_t base_time_ns = 0;       // Unix ns that ts 0 stands for
  bool has_window = false;         // profagent_window was read
  uint64_t window_start_ns = 0;    // profagent_window's bounds (0: not in the file)
  uint64_t window_end_ns = 0;
  // Per Trace::memory.live entry: the start of the call that made it (0: not in the window),
  // to find that call among the loaded host records.
  std::vector<uint64_t> live_call_ns;
  std::vector<StackFrameNode> stack_frames;  // "stackFrames" (trace_stacks.h)
};

// Reads the top-level metadata (events left out) into `trace` and `header`.
bool read_metadata(const std::string& metadata, Trace& trace, TraceHeader& header, std::string& error);

}  // namespace profagent::report
