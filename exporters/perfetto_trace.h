// Perfetto's native protobuf trace (<stem>.pftrace; https://perfetto.dev/docs/reference/trace-packet-proto),
// written directly from the window's Trace: the same events as the JSON trace (chrome_trace.h),
// from the same plan of rows and flows, at a fraction of the size.
//
//   JSON trace                         Perfetto trace
//   'X' slice on row pid/tid           SLICE_BEGIN/SLICE_END on the row's track
//                                      (ThreadDescriptor pid/tid; a lane under it when it
//                                      does not nest: perfetto_packets.h)
//   cat, name                          interned category and name (per sequence)
//   args                               debug annotations (interned names); see docs/trace-formats.md
//                                      for which are kept and which are left implied
//   's'/'f' ac2g flows                 flow_ids on the launching call, terminating_flow_ids on
//                                      the device record (fwdbwd links: id | kFwdBwdFlowBit)
//   NVTX marks, [memory] instants      INSTANT on the thread's track
//   NVTX start/end ranges ('b'/'e')    slices on the process's "NVTX start/end ranges" track
//   'C' memory counters                COUNTER on "<Memory (GPU d)> allocated", the reserved
//                                      figure as its extra counter value
//   'M' process/thread names           ProcessDescriptor / ThreadDescriptor names and labels
//   top-level keys (deviceProperties,  one ChromeMetadata json_value "profagent_trace_metadata":
//   distributedInfo, profagent_*, ...) the JSON object with "traceEvents": []
// Times are Unix ns (BOOTTIME and REALTIME in the clock snapshots carry the same value).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "collector/trace.h"
#include "exporters/output_stream.h"

namespace profagent::exporters {

struct PerfettoFigures {
  uint64_t events = 0;  // as the JSON trace counts them (a slice, an instant, a counter, a flow end)
  uint64_t bytes = 0;
};

// Writes the whole trace to `out` (not committed); false when a write failed.
bool write_perfetto_trace(const Trace& trace, std::string_view trace_name, OutputStream& out,
                          PerfettoFigures* figures = nullptr);

// A streamed window written in Perfetto's format a segment at a time (partial_perfetto.h): one
// packet writer for all of them, so a thread's track, its packet sequences (their incremental
// timestamps and interned names, cleared once, at a sequence's first packet) and the process's
// tracks carry on from segment to segment. Each segment's packets end every slice they begin,
// so the segments written so far are a whole trace.
class PerfettoSegments {
 public:
  PerfettoSegments();
  ~PerfettoSegments();
  PerfettoSegments(const PerfettoSegments&) = delete;
  PerfettoSegments& operator=(const PerfettoSegments&) = delete;

  // `segment`'s events, as write_perfetto_trace() writes a window's (the first segment's are
  // preceded by a metadata packet: a reader needs its baseTimeNanoseconds first, which every
  // later segment keeps). `fresh_ids_from` as ChromeTraceWriter's; *next_fresh_id: where the
  // next segment's start. False when a write failed (also any earlier one).
  bool write_segment(const Trace& segment, uint32_t fresh_ids_from, OutputStream& out, uint64_t* next_fresh_id);
  // One metadata packet: `t`'s top-level keys (as the JSON trace's) with `extra_keys` (raw
  // `"key": value,\n` text). It belongs to no packet sequence, so it may be written over by the
  // next segment (a partial file's tail); a reader keeps the last one.
  bool write_metadata(const Trace& t, std::string_view trace_name, std::string_view extra_keys, OutputStream& out);
  // The window's closing instant at t.end_ns (a sequence's packet: written once, at the end).
  bool write_window_end(const Trace& t, OutputStream& out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace profagent::exporters
