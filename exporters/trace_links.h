// What the trace writer derives from a finished Trace before writing, so every event can be
// written in one pass with the links Kineto's readers key on:
// - a `correlation` for every runtime/driver call: its CUPTI correlation id when known, else a
//   fresh id above every id in the trace (so it never collides with a device-linked one);
// - for event waits (cudaEventSynchronize, cudaStreamWaitEvent sync records): the correlation
//   of the cudaEventRecord that last recorded the waited event, and the CUPTI stream it was
//   recorded on (Kineto's wait_on_cuda_event_record_corr_id / wait_on_stream);
// - the device spans of every operator, range and step (Kineto's gpu_user_annotation): per
//   device and stream, from the first start to the last end of the device work issued inside it.
#pragma once

#include <cstdint>
#include <vector>

#include "collector/trace.h"

namespace profagent::exporters {

inline constexpr int64_t kUnknown = -1;

struct EventWait {
  int64_t stream = kUnknown;          // CUPTI stream id the waited event was recorded on
  int64_t record_correlation = kUnknown;  // correlation of that cudaEventRecord call
};

struct DeviceSpan {
  std::size_t scope = 0;  // index into Trace::host
  uint32_t device = 0;
  uint32_t stream = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

class TraceLinks {
 public:
  // `fresh_from`: fresh ids start at least there (a trace written an interval at a time keeps
  // them apart from the ids of intervals to come: partial_trace.h).
  explicit TraceLinks(const Trace& trace, uint32_t fresh_from = 0);

  // The correlation written on host record `index` (0 for operators, ranges and steps).
  uint32_t call_correlation(std::size_t index) const { return call_correlation_[index]; }
  // A fresh id no record in the trace uses (for flows of device work without a correlation).
  uint32_t fresh_id() { return next_free(); }
  uint64_t next_fresh_id() const { return next_; }  // the first fresh id not given yet
  // The earliest start of a host or device record (UINT64_MAX: none), found on the way.
  uint64_t earliest_record_ns() const { return earliest_ns_; }
  // Only for sync records of kind event synchronize / stream wait event.
  EventWait event_wait(const DeviceRecord& sync) const;
  // Sorted by (device, stream, start, longest first, outer scope first).
  const std::vector<DeviceSpan>& device_spans() const { return spans_; }

 private:
  void walk_host_records();  // call correlations, event records, the earliest start
  // Ids above the largest one in use (inline: most calls without device work take one);
  // next_free_wrapped() once they pass 2^32 - 1.
  uint32_t next_free() { return !wrapped_ && next_ <= UINT32_MAX ? uint32_t(next_++) : next_free_wrapped(); }
  uint32_t next_free_wrapped();
  void index_used_ids();
  void index_stream_ids();
  void collect_device_spans();
  int64_t stream_id_of(uint64_t handle, uint32_t tid) const;

  const Trace& t_;
  uint32_t fresh_from_;
  std::vector<uint32_t> call_correlation_;
  std::vector<uint32_t> used_;  // sorted ids in use, built only once fresh ids wrap around
  uint64_t next_ = 1;
  bool wrapped_ = false;  // fresh ids now fill gaps below the largest id in use
  uint64_t earliest_ns_ = UINT64_MAX;
  // cudaEventRecord calls by event handle: (start, host index), sorted.
  std::vector<std::pair<uint64_t, std::pair<uint64_t, std::size_t>>> records_;
  // Stream handle (with the thread for per-thread/legacy handles) -> CUPTI stream id.
  std::vector<std::pair<std::pair<uint64_t, uint32_t>, uint32_t>> streams_;
  std::vector<DeviceSpan> spans_;
};

}  // namespace profagent::exporters
