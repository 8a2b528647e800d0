// A streamed window's trace in Perfetto's format, kept valid on disk while it is recorded, as
// the JSON one (partial_trace.h): `<stem>.pftrace.partial` is at every moment a complete
// Perfetto trace — the metadata packet, the packets of the segments appended so far (each
// segment ends every slice it begins), then a tail: one metadata packet with
// `profagent_partial` {intervals, host_events, through_ns}, which belongs to no packet sequence
// and is written over by the next segment. The file never ends inside a packet: it and a swap
// file take turns (swap_files.h), so a half-written packet is never under the published name.
// At the window's end, the tail's events, the closing instant and the whole window's metadata
// (a reader keeps the last metadata packet) are appended and the file is renamed `<stem>.pftrace`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "collector/trace.h"
#include "exporters/output_file.h"
#include "exporters/perfetto_trace.h"
#include "exporters/swap_files.h"

namespace profagent::exporters {

class PerfettoPartial {
 public:
  PerfettoPartial(std::unique_ptr<OutputDir> dir, const std::string& stem);
  PerfettoPartial(const PerfettoPartial&) = delete;
  PerfettoPartial& operator=(const PerfettoPartial&) = delete;

  // As PartialTrace::append (its unix_offset_ns set to the first segment's).
  std::string append(Trace& segment, bool publish = true);
  // As PartialTrace::finish: `tail`'s events and the closing instant, then the metadata of the
  // whole window (`tail`'s top-level keys, `final_keys`); the file is renamed `final_name`.
  std::string finish(Trace& tail, const std::string& final_name, const std::string& final_keys);
  // Deletes both files, unless the trace was finished.
  void remove() noexcept;

  std::string location() const { return files_.location(); }
  uint64_t host_events() const { return host_events_; }
  uint64_t device_records() const { return device_records_; }

 private:
  std::unique_ptr<OutputDir> dir_;
  SwapFiles files_;
  PerfettoSegments segments_;
  std::string error_;  // set by the first failure
  std::string trace_name_;  // <stem>.pftrace: the partial file's traceName
  int64_t unix_offset_ns_ = 0;
  uint64_t next_fresh_id_ = uint64_t(1) << 31;  // as PartialTrace's
  uint64_t intervals_ = 0;
  uint64_t host_events_ = 0;
  uint64_t device_records_ = 0;
  bool finished_ = false;
};

}  // namespace profagent::exporters
