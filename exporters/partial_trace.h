// A trace kept valid on disk while its window is being recorded, so that a process killed
// without warning (SIGKILL, the out-of-memory killer, a node failure) leaves a readable trace
// of every interval but the last one.
//
// `<stem>.trace.json.partial` is at every moment a complete trace.json (Kineto's head, the
// events of the intervals appended so far, then a tail: row names, the closing instant and
// `profagent_partial` {intervals, host_events, through_ns}). A reader never sees a half-written
// file: the file and a swap file take turns (swap_files.h says how). Memory holds the writers'
// buffers only. The window's final trace is written as any other; then remove() deletes both
// files.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collector/trace.h"
#include "exporters/gzip_stream.h"
#include "exporters/output_file.h"
#include "exporters/swap_files.h"

namespace profagent::exporters {

class PartialTrace {
 public:
  // Writes nothing until the first append. `stem` as file_names.h makes it. `head_room`: bytes
  // kept after the head for finish() to write the final one (0: none, finish() fails).
  // `gzip`: `<stem>.trace.json.gz.partial`, one gzip member that is whole after every append
  // (GzipParts: each append's events end at a sync point, its tail ends a copy of the stream,
  // and the next append writes over that tail). Nothing in it can be written over, so its head
  // lacks the keys known at the window's end (ChromeTraceWriter::write_head): its tail has
  // them — the last interval's, and the whole window's after finish(). JSON readers do not
  // depend on the order of top-level keys.
  PartialTrace(std::unique_ptr<OutputDir> dir, const std::string& stem, uint64_t head_room = 0, bool gzip = false);
  ~PartialTrace();  // closes both files and leaves them on disk
  PartialTrace(const PartialTrace&) = delete;
  PartialTrace& operator=(const PartialTrace&) = delete;

  // Appends the interval's events (its metadata heads the file when it is the first). "" when
  // the published file holds it; else one line saying why, and the published file is left as
  // it was (later appends fail the same way). The interval's unix_offset_ns is set to the
  // first interval's: one offset for the whole file, so intervals never shift against each other.
  // Without `publish`, the events go to the swap file only (swap_files.h): "" then means they
  // are written, and the next publishing append (or finish()) puts them under the name.
  std::string append(Trace& interval, bool publish = true);

  // A streamed window's end: appends `tail` (the window's last events, its final counters) with
  // a closing part that names the trace `final_name` and holds `final_keys` (top-level keys,
  // each line ending in ",\n") instead of profagent_partial, writes the head again from `tail`
  // (the window's final drops, span and summaries' inputs) in the room kept for it, then
  // renames the file to `final_name` and deletes the swap file. "" on success, else one line saying why (the
  // partial file is then left as it was).
  std::string finish(Trace& tail, const std::string& final_name, const std::string& final_keys);

  // Deletes both files (the window's final trace was written).
  void remove() noexcept;

  std::string location() const { return files_.location(); }
  uint64_t intervals() const { return intervals_; }
  uint64_t host_events() const { return host_events_; }
  uint64_t device_records() const { return device_records_; }

 private:
  struct Rows;  // what the tail names: rows, thread and stream names of every interval
  bool write_events(const Trace& interval, OutputStream& out);
  bool write_tail(const Trace& interval, OutputStream& out);
  std::string write_final_head(const Trace& tail);
  std::string window_keys(const Trace& t) const;
  template <typename Write>
  std::string text_of(const Trace& t, Write write) const;

  std::unique_ptr<OutputDir> dir_;
  std::string name_;  // <stem>.trace.json.partial
  SwapFiles files_;
  std::string error_;      // set by the first failure
  uint64_t base_ = 0;      // baseTimeNanoseconds of the first interval
  int64_t unix_offset_ns_ = 0;  // the first interval's
  // Ids made up for calls without a CUPTI correlation (trace_links.h) count up from 2^31, across
  // intervals: CUPTI numbers calls from 1, so no later interval's real id meets them.
  uint64_t next_fresh_id_ = uint64_t(1) << 31;
  uint64_t fresh_after_append_ = 0;
  uint64_t intervals_ = 0;
  uint64_t host_events_ = 0;
  uint64_t device_records_ = 0;
  std::unique_ptr<Rows> rows_;
  std::unique_ptr<GzipParts> gzip_;  // compressed (json.gz), else null
  std::string final_name_;  // finish(): the closing part is the final trace's
  std::string final_keys_;
  bool finished_ = false;
  uint64_t head_room_ = 0;
  uint64_t head_end_ = 0;  // where the first head and its room end
};

// The top-level key a partial trace's tail holds while its window is recorded: `profagent_partial`
// {intervals, host_events, through_ns (Unix ns of `last`'s end)}.
std::string partial_trace_keys(const Trace& last, uint64_t intervals, uint64_t host_events);

// The top-level key a streamed window's trace closes with (PartialTrace::finish): what its
// segments and its tail wrote.
std::string streamed_trace_keys(const Trace& tail);

}  // namespace profagent::exporters
