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

}  // namespace profagent::exporters
