#include "exporters/partial_trace.h"

#include <algorithm>
#include <map>
#include <new>

#include "exporters/chrome_trace.h"
#include "exporters/chrome_trace_writer.h"
#include "exporters/gzip_stream.h"
#include "exporters/json_writer.h"
#include "exporters/trace_schema.h"

namespace profagent::exporters {

struct PartialTrace::Rows {
  chrome::RowSet host;
  chrome::RowSet device;
  std::map<uint32_t, std::string> thread_names;
  std::map<uint32_t, std::string> stream_names;

  void add(const Trace& interval, chrome::ChromeTraceWriter& writer) {
    for (const auto& [a, b] : writer.host_rows().sorted()) host.add(a, b);
    for (const auto& [a, b] : writer.device_rows().sorted()) device.add(a, b);
    for (const auto& [tid, name] : interval.process.thread_names) thread_names[tid] = name;
    for (const auto& [stream, name] : interval.stream_names) stream_names[stream] = name;
  }
};


PartialTrace::PartialTrace(std::unique_ptr<OutputDir> dir, const std::string& stem, uint64_t head_room, bool gzip)
    : dir_(std::move(dir)), name_(stem + (gzip ? ".trace.json.gz.partial" : ".trace.json.partial")), files_(*dir_, name_),
      rows_(std::make_unique<Rows>()), gzip_(gzip ? std::make_unique<GzipParts>() : nullptr),
      head_room_(gzip ? 0 : head_room) {}

PartialTrace::~PartialTrace() = default;

// The interval's events (after the head, for the first), with the first interval's base time
// and fresh ids that continue the previous interval's.
bool PartialTrace::write_events(const Trace& interval, OutputStream& out) {
  if (gzip_) gzip_->to(&out);
  JsonWriter w(gzip_ ? *gzip_ : out);
  chrome::ChromeTraceWriter events(interval, w, uint32_t(std::min<uint64_t>(next_fresh_id_, UINT32_MAX)));
  if (intervals_ == 0) {
    base_ = events.base();
    events.write_head(/*with_window_keys=*/!gzip_);
    // Room for finish() to write the final head over this one (whitespace inside the array).
    if (head_room_ > 0) w.raw(std::string(head_room_ - 1, ' ') + "\n");
    head_end_ = w.bytes_written();
  }
  events.set_base(base_);
  events.write_events();
  rows_->add(interval, events);
  fresh_after_append_ = events.next_fresh_id();
  // Compressed: all of it out, up to a byte boundary, so that the tail can end the member.
  const bool ok = w.flush() && (!gzip_ || gzip_->sync());
  if (gzip_) gzip_->to(nullptr);
  return ok;
}

// Row names of every interval so far, the closing instant, stackFrames, profagent_partial and traceName.
bool PartialTrace::write_tail(const Trace& interval, OutputStream& out) {
  Trace tail;
  tail.process.pid = interval.process.pid;
  tail.process.exe_name = interval.process.exe_name;
  tail.process.thread_names.assign(rows_->thread_names.begin(), rows_->thread_names.end());
  tail.stream_names.assign(rows_->stream_names.begin(), rows_->stream_names.end());
  tail.unix_offset_ns = interval.unix_offset_ns;
  tail.start_ns = tail.end_ns = interval.end_ns;
  // A streamed window's intervals carry its stacks so far, one numbering (collector/stack_symbols.h
  // StreamedStacks): the closing stackFrames is the last interval's, which every "sf" before names.
  tail.stacks = interval.stacks;
  const std::string keys = partial_trace_keys(interval, intervals_ + 1, host_events_ + interval.host.size());
  // Compressed, the tail ends a copy of the gzip stream (GzipParts), and holds the keys a
  // head written once cannot have (the last interval's, or the window's at its end).
  std::string text;
  StringStream text_out(text);
  JsonWriter w(gzip_ ? static_cast<OutputStream&>(text_out) : out, 1 << 16);
  const std::string top_keys = (gzip_ ? window_keys(interval) : std::string()) + (final_name_.empty() ? keys : final_keys_);
  chrome::ChromeTraceWriter closing(tail, w);
  closing.set_base(base_);
  for (const auto& [a, b] : rows_->host.sorted()) closing.host_rows().add(a, b);
  for (const auto& [a, b] : rows_->device.sorted()) closing.device_rows().add(a, b);
  closing.write_tail(final_name_.empty() ? name_.substr(0, name_.size() - std::string_view(".partial").size()) : final_name_,
                     top_keys);
  if (!w.flush()) return false;
  return !gzip_ || gzip_->end_copy(text, out);
}

// What `write` makes a trace writer of `t` (with the file's base time) write, as text.
template <typename Write>
std::string PartialTrace::text_of(const Trace& t, Write write) const {
  std::string text;
  StringStream out(text);
  JsonWriter w(out, 1 << 14);
  chrome::ChromeTraceWriter writer(t, w);
  writer.set_base(base_);
  write(writer);
  w.flush();
  return text;
}

// The keys only known at the window's end (ChromeTraceWriter::write_window_keys) as `t` has them.
std::string PartialTrace::window_keys(const Trace& t) const {
  return text_of(t, [](chrome::ChromeTraceWriter& writer) { writer.write_window_keys(); });
}

std::string PartialTrace::append(Trace& interval, bool publish) {
  if (!error_.empty()) return error_;
  if (intervals_ == 0) unix_offset_ns_ = interval.unix_offset_ns;
  interval.unix_offset_ns = unix_offset_ns_;
  try {
    error_ = files_.append([&](OutputStream& out) { return write_events(interval, out); },
                           [&](OutputStream& out) { return write_tail(interval, out); }, publish);
    if (!error_.empty()) return error_;
    ++intervals_;
    host_events_ += interval.host.size();
    device_records_ += interval.device.size();
    next_fresh_id_ = fresh_after_append_;
    return {};
  } catch (const std::bad_alloc&) {
    return error_ = "out of memory while writing " + location();
  }
}

// The final head (the window's drops, span, CPU times, memory and cost, known at its end) over
// the first interval's, in the room kept after it: the same base time, padded with spaces.
std::string PartialTrace::write_final_head(const Trace& tail) {
  std::string head = text_of(tail, [](chrome::ChromeTraceWriter& writer) { writer.write_head(); });
  if (head_room_ == 0 || head.size() + 1 > head_end_) return "its head did not fit the room kept for it";
  head.append(head_end_ - head.size() - 1, ' ');
  head += '\n';
  return files_.write_at(0, head);
}

std::string PartialTrace::finish(Trace& tail, const std::string& final_name, const std::string& final_keys) {
  if (!error_.empty()) return error_;
  final_name_ = final_name;
  final_keys_ = final_keys;
  std::string error = append(tail);
  final_name_.clear();
  if (!error.empty()) return error;
  if (!gzip_) {
    if (std::string head_error = write_final_head(tail); !head_error.empty()) return error_ = head_error;
  }
  if (std::string rename_error = files_.rename(final_name); !rename_error.empty()) return error_ = rename_error;
  finished_ = true;  // remove() leaves the trace
  error_ = "the trace was finished";  // later appends change nothing
  return {};
}

void PartialTrace::remove() noexcept {
  if (!finished_) files_.remove();
}


std::string partial_trace_keys(const Trace& last, uint64_t intervals, uint64_t host_events) {
  const uint64_t through_unix = uint64_t(std::max<int64_t>(0, int64_t(last.end_ns) + last.unix_offset_ns));
  return "  \"" + std::string(schema::kPartial) + "\": {\"" + std::string(schema::partial::kIntervals) +
         "\":" + std::to_string(intervals) + ",\"" + std::string(schema::partial::kHostEvents) +
         "\":" + std::to_string(host_events) + ",\"" + std::string(schema::partial::kThroughNs) +
         "\":" + std::to_string(through_unix) + "},\n";
}

std::string streamed_trace_keys(const Trace& tail) {
  std::string text;
  StringStream out(text);
  JsonWriter w(out, 1 << 12);
  const StreamedWindow& s = tail.streamed;
  w.raw("  \""), w.raw(schema::kStreamed), w.raw("\": {\"");
  w.raw(schema::streamed::kSegments), w.raw("\":"), w.u64(s.segments);
  w.raw(",\""), w.raw(schema::streamed::kHostEvents), w.raw("\":"), w.u64(s.host_events);
  w.raw(",\""), w.raw(schema::streamed::kDeviceRecords), w.raw("\":"), w.u64(s.device_records);
  w.raw(",\""), w.raw(schema::streamed::kTailHostEvents), w.raw("\":"), w.u64(tail.host.size());
  w.raw(",\""), w.raw(schema::streamed::kTailDeviceRecords), w.raw("\":"), w.u64(tail.device.size());
  w.raw(",\""), w.raw(schema::streamed::kWrittenBeforeScopeEnd), w.raw("\":"), w.u64(s.written_before_scope_end);
  w.raw(",\""), w.raw(schema::streamed::kWrittenWithoutDeviceRecord), w.raw("\":"), w.u64(s.written_without_device_record);
  w.raw("},\n");
  w.flush();
  return text;
}

}  // namespace profagent::exporters
