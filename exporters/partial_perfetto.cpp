#include "exporters/partial_perfetto.h"

#include <algorithm>
#include <new>

#include "exporters/partial_trace.h"

namespace profagent::exporters {

PerfettoPartial::PerfettoPartial(std::unique_ptr<OutputDir> dir, const std::string& stem)
    : dir_(std::move(dir)), files_(*dir_, stem + ".pftrace.partial"), trace_name_(stem + ".pftrace") {}

std::string PerfettoPartial::append(Trace& segment, bool publish) {
  if (!error_.empty()) return error_;
  if (intervals_ == 0) unix_offset_ns_ = segment.unix_offset_ns;
  segment.unix_offset_ns = unix_offset_ns_;
  try {
    uint64_t next_fresh_id = next_fresh_id_;
    const std::string keys = partial_trace_keys(segment, intervals_ + 1, host_events_ + segment.host.size());
    error_ = files_.append(
        [&](OutputStream& out) {
          return segments_.write_segment(segment, uint32_t(std::min<uint64_t>(next_fresh_id_, UINT32_MAX)), out,
                                         &next_fresh_id);
        },
        [&](OutputStream& out) {
          return segments_.write_metadata(segment, trace_name_, keys, out);
        },
        publish);
    if (!error_.empty()) return error_;
    ++intervals_;
    host_events_ += segment.host.size();
    device_records_ += segment.device.size();
    next_fresh_id_ = next_fresh_id;
    return {};
  } catch (const std::bad_alloc&) {
    return error_ = "out of memory while writing " + location();
  }
}

std::string PerfettoPartial::finish(Trace& tail, const std::string& final_name, const std::string& final_keys) {
  if (!error_.empty()) return error_;
  try {
    if (intervals_ == 0) unix_offset_ns_ = tail.unix_offset_ns;
    tail.unix_offset_ns = unix_offset_ns_;
    error_ = files_.append(
        [&](OutputStream& out) {
          return segments_.write_segment(tail, uint32_t(std::min<uint64_t>(next_fresh_id_, UINT32_MAX)), out, nullptr) &&
                 segments_.write_window_end(tail, out);
        },
        [&](OutputStream& out) { return segments_.write_metadata(tail, final_name, final_keys, out); });
    if (error_.empty()) error_ = files_.rename(final_name);
    if (!error_.empty()) return error_;
    finished_ = true;
    error_ = "the trace was finished";  // later appends change nothing
    return {};
  } catch (const std::bad_alloc&) {
    return error_ = "out of memory while writing " + location();
  }
}

void PerfettoPartial::remove() noexcept {
  if (!finished_) files_.remove();
}

}  // namespace profagent::exporters
