#include "exporters/partial_trace.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <new>

#include "exporters/chrome_trace.h"
#include "exporters/chrome_trace_writer.h"
#include "exporters/json_writer.h"
#include "exporters/quiet_write.h"
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

namespace {

std::string system_error(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Writes at a file offset, through write_without_signals (no SIGXFSZ, no SIGPIPE).
class FileAt final : public OutputStream {
 public:
  FileAt(int fd, uint64_t offset) : fd_(fd), offset_(offset) {}
  bool write(const char* data, std::size_t size) override {
    if (!ok_ || lseek(fd_, off_t(offset_), SEEK_SET) < 0) return ok_ = false;
    while (size > 0) {
      const ssize_t n = write_without_signals(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ok_ = false;
      data += n, size -= size_t(n), offset_ += uint64_t(n);
    }
    return true;
  }
  std::string commit() override { return {}; }
  uint64_t offset() const { return offset_; }
  bool ok() const { return ok_; }

 private:
  int fd_;
  uint64_t offset_;
  bool ok_ = true;
};

class TextStream final : public OutputStream {
 public:
  explicit TextStream(std::string& text) : text_(text) {}
  bool write(const char* data, std::size_t size) override {
    text_.append(data, size);
    return true;
  }
  std::string commit() override { return {}; }

 private:
  std::string& text_;
};


// Copies [from, to) of `in` to the same offsets of `out`.
bool copy_range(int in, int out, uint64_t from, uint64_t to) {
  constexpr size_t kChunk = 1 << 20;
  std::unique_ptr<char[]> buffer(new char[kChunk]);
  FileAt sink(out, from);
  while (from < to) {
    const ssize_t n = pread(in, buffer.get(), std::min<uint64_t>(kChunk, to - from), off_t(from));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || !sink.write(buffer.get(), size_t(n))) return false;
    from += uint64_t(n);
  }
  return true;
}

// The published and swap names change places atomically. Where renameat2's exchange is not
// supported, three steps that each leave a complete file under `published`.
bool exchange_names(int dir, const std::string& swap, const std::string& published) {
  if (renameat2(dir, swap.c_str(), dir, published.c_str(), RENAME_EXCHANGE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) return false;
  const std::string old = swap + ".old";
  unlinkat(dir, old.c_str(), 0);
  return linkat(dir, published.c_str(), dir, old.c_str(), 0) == 0 &&
         renameat(dir, swap.c_str(), dir, published.c_str()) == 0 &&
         renameat(dir, old.c_str(), dir, swap.c_str()) == 0;
}

}  // namespace

PartialTrace::PartialTrace(std::unique_ptr<OutputDir> dir, const std::string& stem, uint64_t head_room)
    : dir_(std::move(dir)), name_(stem + ".trace.json.partial"), swap_name_("." + name_ + ".swap"),
      rows_(std::make_unique<Rows>()), head_room_(head_room) {}

PartialTrace::~PartialTrace() {
  for (int fd : {published_.fd, swap_.fd}) {
    if (fd >= 0) close(fd);
  }
}

// The swap file brought to the published one's events, then this interval's events and a tail.
std::string PartialTrace::write_swap(const Trace& interval, uint64_t& events_end) {
  const std::string swap_path = dir_->location(swap_name_);
  if (swap_.fd < 0) {
    swap_.fd = openat(dir_->fd(), swap_name_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (swap_.fd < 0) return system_error("cannot create", swap_path);
    swap_.end = 0;
  }
  if (published_.fd >= 0 && !copy_range(published_.fd, swap_.fd, swap_.end, published_.end)) {
    return system_error("cannot write", swap_path);
  }
  FileAt out(swap_.fd, published_.fd >= 0 ? published_.end : 0);
  if (!write_events(interval, out)) return system_error("cannot write", swap_path);
  events_end = out.offset();
  if (!write_tail(interval, out) || ftruncate(swap_.fd, off_t(out.offset())) != 0 || fsync(swap_.fd) != 0) {
    return system_error("cannot write", swap_path);
  }
  return {};
}

// The interval's events (after the head, for the first), with the first interval's base time
// and fresh ids that continue the previous interval's.
bool PartialTrace::write_events(const Trace& interval, OutputStream& out) {
  JsonWriter w(out);
  chrome::ChromeTraceWriter events(interval, w, uint32_t(std::min<uint64_t>(next_fresh_id_, UINT32_MAX)));
  if (intervals_ == 0) {
    base_ = events.base();
    events.write_head();
    // Room for finish() to write the final head over this one (whitespace inside the array).
    if (head_room_ > 0) w.raw(std::string(head_room_ - 1, ' ') + "\n");
    head_end_ = w.bytes_written();
  }
  events.set_base(base_);
  events.write_events();
  rows_->add(interval, events);
  fresh_after_append_ = events.next_fresh_id();
  return w.flush();
}

// Row names of every interval so far, the closing instant, profagent_partial and traceName.
bool PartialTrace::write_tail(const Trace& interval, OutputStream& out) {
  Trace tail;
  tail.process.pid = interval.process.pid;
  tail.process.exe_name = interval.process.exe_name;
  tail.process.thread_names.assign(rows_->thread_names.begin(), rows_->thread_names.end());
  tail.stream_names.assign(rows_->stream_names.begin(), rows_->stream_names.end());
  tail.unix_offset_ns = interval.unix_offset_ns;
  tail.start_ns = tail.end_ns = interval.end_ns;
  const uint64_t through_unix = uint64_t(std::max<int64_t>(0, int64_t(interval.end_ns) + interval.unix_offset_ns));
  const std::string keys = "  \"" + std::string(schema::kPartial) + "\": {\"" +
                           std::string(schema::partial::kIntervals) + "\":" + std::to_string(intervals_ + 1) +
                           ",\"" + std::string(schema::partial::kHostEvents) +
                           "\":" + std::to_string(host_events_ + interval.host.size()) + ",\"" +
                           std::string(schema::partial::kThroughNs) + "\":" + std::to_string(through_unix) + "},\n";
  JsonWriter w(out, 1 << 16);
  chrome::ChromeTraceWriter closing(tail, w);
  closing.set_base(base_);
  for (const auto& [a, b] : rows_->host.sorted()) closing.host_rows().add(a, b);
  for (const auto& [a, b] : rows_->device.sorted()) closing.device_rows().add(a, b);
  if (!final_name_.empty()) {
    closing.write_tail(final_name_, final_keys_);
    return w.flush();
  }
  closing.write_tail(name_.substr(0, name_.size() - std::string_view(".partial").size()), keys);
  return w.flush();
}

std::string PartialTrace::publish() {
  const int dir = dir_->fd();
  const bool first = published_.fd < 0;
  const bool moved = first ? renameat(dir, swap_name_.c_str(), dir, name_.c_str()) == 0
                           : exchange_names(dir, swap_name_, name_);
  if (!moved) return system_error("cannot publish", location());
  fsync(dir);  // the new name survives a power loss too (best effort: some file systems refuse)
  std::swap(published_, swap_);
  return {};
}

std::string PartialTrace::append(Trace& interval) {
  if (!error_.empty()) return error_;
  if (intervals_ == 0) unix_offset_ns_ = interval.unix_offset_ns;
  interval.unix_offset_ns = unix_offset_ns_;
  try {
    uint64_t events_end = 0;
    error_ = write_swap(interval, events_end);
    if (error_.empty()) error_ = publish();
    if (!error_.empty()) return error_;
    // The file now published holds everything; the other one lacks this interval.
    published_.end = events_end;
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
  std::string head;
  TextStream text(head);
  JsonWriter w(text, 1 << 14);
  chrome::ChromeTraceWriter writer(tail, w);
  writer.set_base(base_);
  writer.write_head();
  w.flush();
  if (head_room_ == 0 || head.size() + 1 > head_end_) return "its head did not fit the room kept for it";
  head.append(head_end_ - head.size() - 1, ' ');
  head += '\n';
  FileAt out(published_.fd, 0);
  if (!out.write(head.data(), head.size()) || fsync(published_.fd) != 0) return system_error("cannot write", location());
  return {};
}

std::string PartialTrace::finish(Trace& tail, const std::string& final_name, const std::string& final_keys) {
  if (!error_.empty()) return error_;
  final_name_ = final_name;
  final_keys_ = final_keys;
  std::string error = append(tail);
  final_name_.clear();
  if (!error.empty()) return error;
  if (std::string head_error = write_final_head(tail); !head_error.empty()) return error_ = head_error;
  if (renameat(dir_->fd(), name_.c_str(), dir_->fd(), final_name.c_str()) != 0) {
    return error_ = system_error("cannot rename " + location() + " to", dir_->location(final_name));
  }
  fsync(dir_->fd());
  name_ = final_name;  // location() names the trace now
  finished_ = true;    // and remove() leaves it
  for (File* file : {&published_, &swap_}) {
    if (file->fd >= 0) close(file->fd);
    file->fd = -1;
  }
  unlinkat(dir_->fd(), swap_name_.c_str(), 0);
  error_ = "the trace was finished";  // later appends change nothing
  return {};
}

void PartialTrace::remove() noexcept {
  for (File* file : {&published_, &swap_}) {
    if (file->fd >= 0) close(file->fd);
    file->fd = -1;
  }
  if (!finished_) unlinkat(dir_->fd(), name_.c_str(), 0);
  unlinkat(dir_->fd(), swap_name_.c_str(), 0);
}


std::string streamed_trace_keys(const Trace& tail) {
  std::string text;
  TextStream out(text);
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
