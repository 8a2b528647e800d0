#include "agent/report/trace_stream.h"

#include <cstdio>
#include <new>
#include <vector>

#include "agent/report/batch_buffer.h"
#include "agent/report/trace_file.h"
#include "exporters/trace_schema.h"

namespace profagent::report {
namespace {

constexpr std::size_t kPadding = kBatchPadding;
constexpr std::string_view kEventsKey = exporters::schema::kTraceEvents;

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The scanner's state survives chunk boundaries; bytes are copied in runs, not one by one.
class Scanner {
 public:
  Scanner(const StreamLimits& limits, const BatchFn& on_batch, std::string& metadata)
      : limits_(limits), on_batch_(on_batch), meta_(metadata), batch_(limits.batch_bytes + 1, kPadding) {}

  bool feed(const char* data, std::size_t size, std::string& error);
  bool finish(std::string& error);
  uint64_t events() const { return events_; }
  uint64_t pending_bytes() const { return batch_.size(); }

 private:
  enum class Mode { Before, Meta, Events, After };
  bool step(const char* p, std::size_t i, std::size_t& run, std::string& error);
  bool structural(char c, const char* p, std::size_t i, std::size_t& run, std::string& error);
  bool between_events(char c, const char* p, std::size_t i, std::size_t& run, std::string& error);
  void flush_run(const char* p, std::size_t from, std::size_t to) {
    if (to <= from) return;
    if (mode_ == Mode::Meta) meta_.append(p + from, to - from);
    if (mode_ == Mode::Events && in_event_) batch_.append(p + from, to - from);
  }
  bool end_event(std::string& error);
  bool flush_batch(std::string& error);
  // Chrome's "JSON Array Format": the file is the events array itself (torch.profiler built
  // without Kineto, e.g. Debian's torch, exports this). Read as {"traceEvents": [...]}.
  bool start_array_format(std::size_t i, std::size_t& run) {
    array_format_ = true;
    meta_.append("{\"").append(kEventsKey).append("\":[");
    mode_ = Mode::Events;
    depth_ = 2;
    run = i + 1;
    return true;
  }

  const StreamLimits& limits_;
  const BatchFn& on_batch_;
  std::string& meta_;
  BatchBuffer batch_;
  uint64_t batch_events_ = 0;
  uint64_t events_ = 0;
  Mode mode_ = Mode::Before;
  int depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
  bool in_event_ = false;
  bool array_format_ = false;
  bool key_open_ = false;   // capturing a string at depth 1 (a key, or a string value)
  std::string key_;
};

bool Scanner::feed(const char* p, std::size_t size, std::string& error) {
  std::size_t run = 0;  // start of the bytes not yet copied to the current target
  for (std::size_t i = 0; i < size; ++i) {
    if (in_string_) {
      // Inside a string only '"' and '\\' matter: skip the rest quickly.
      const char c = p[i];
      if (escape_) {
        escape_ = false;
      } else if (c == '\\') {
        escape_ = true;
      } else if (c == '"') {
        in_string_ = false;
        key_open_ = false;
      } else if (key_open_ && key_.size() < 64) {
        key_ += c;
      }
      continue;
    }
    if (!step(p, i, run, error)) return false;
  }
  flush_run(p, run, size);
  return true;
}

bool Scanner::step(const char* p, std::size_t i, std::size_t& run, std::string& error) {
  const char c = p[i];
  if (mode_ == Mode::Before || mode_ == Mode::After) {
    if (is_space(c)) return run = i + 1, true;
    if (mode_ == Mode::After) return error = "not JSON: bytes after the end of the top-level object", false;
    if (c == '[') return start_array_format(i, run);
    if (c != '{') return error = "not a trace: it does not start with a JSON object or array", false;
    mode_ = Mode::Meta;
    run = i;
  }
  if (mode_ == Mode::Events && depth_ == 2 && !in_event_) return between_events(c, p, i, run, error);
  return structural(c, p, i, run, error);
}

bool Scanner::structural(char c, const char* p, std::size_t i, std::size_t& run, std::string& error) {
  switch (c) {
    case '"':
      in_string_ = true;
      if (depth_ == 1) key_open_ = true, key_.clear();
      return true;
    case '{':
    case '[':
      ++depth_;
      if (c == '[' && depth_ == 2 && mode_ == Mode::Meta && key_ == kEventsKey) {
        flush_run(p, run, i + 1);  // the metadata keeps "traceEvents":[
        mode_ = Mode::Events;
        run = i + 1;
      }
      return true;
    case '}':
    case ']':
      if (--depth_ < 0) return error = "not JSON: unbalanced brackets", false;
      if (mode_ == Mode::Events && depth_ == 2) {
        flush_run(p, run, i + 1);
        run = i + 1;
        return end_event(error);
      }
      if (depth_ == 0) {
        flush_run(p, run, i + 1);
        run = i + 1;
        mode_ = Mode::After;
      }
      return true;
    default:
      return true;
  }
}

// At depth 2 of the events array, outside any event: whitespace, commas, the array's end, or
// the first byte of the next event.
bool Scanner::between_events(char c, const char* p, std::size_t i, std::size_t& run, std::string& error) {
  if (is_space(c) || c == ',') return run = i + 1, true;
  if (c == ']' && array_format_) {  // the end of the whole file's array
    meta_ += "]}";
    depth_ = 0;
    mode_ = Mode::After;
    run = i + 1;
    return true;
  }
  if (c == ']') {
    --depth_;
    mode_ = Mode::Meta;
    run = i;  // "]" goes to the metadata
    return true;
  }
  if (c != '{') {
    error = "traceEvents[" + std::to_string(events_) + "] is not an object";
    return false;
  }
  in_event_ = true;
  batch_.append(batch_events_ == 0 ? '[' : ',');
  run = i;
  ++depth_;
  return true;
}

bool Scanner::end_event(std::string& error) {
  in_event_ = false;
  ++events_;
  ++batch_events_;
  return batch_.size() < limits_.batch_bytes || flush_batch(error);
}

bool Scanner::flush_batch(std::string& error) {
  if (batch_events_ == 0) return true;
  batch_.append(']');
  const bool ok = on_batch_(batch_.view(), batch_events_, error);
  batch_.clear();
  batch_events_ = 0;
  return ok;
}

bool Scanner::finish(std::string& error) {
  if (mode_ == Mode::Before) return error = "empty file", false;
  if (mode_ != Mode::After) return error = "truncated: the file ends inside the top-level object", false;
  return flush_batch(error);
}

// A gzip file is refused once what it gave is past the floor and more than `ratio` times the
// compressed bytes behind it.
bool too_expanded(uint64_t expanded, uint64_t compressed, uint64_t ratio) {
  if (ratio == 0 || expanded <= kGzipRatioFloorBytes) return false;
  return compressed < expanded / ratio;
}

std::string megabytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MB", double(bytes) / 1e6);
  return text;
}

}  // namespace

bool stream_trace(const std::string& path, const StreamLimits& limits, const BatchFn& on_batch,
                  std::string& metadata, uint64_t& events, std::string& error) {
  TraceFile file;
  if (!file.open(path, error)) return false;
  std::vector<char> chunk(limits.chunk_bytes);
  Scanner scanner(limits, on_batch, metadata);
  for (uint64_t expanded = 0;;) {
    const long n = file.read(chunk.data(), chunk.size(), error);
    if (n < 0) return false;
    if (n == 0) break;
    expanded += uint64_t(n);
    if (file.gzip() && too_expanded(expanded, file.compressed_read(), limits.max_gzip_ratio)) {
      return error = "refused: this " + megabytes(file.file_bytes()) + " gzip file expands more than " +
                     std::to_string(limits.max_gzip_ratio) + " times (" + megabytes(file.compressed_read()) +
                     " gave " + megabytes(expanded) + "; a gzip bomb?); --max-gzip-ratio N raises the limit, 0 removes it",
             false;
    }
    try {
      if (!scanner.feed(chunk.data(), std::size_t(n), error)) return false;
    } catch (const std::bad_alloc&) {
      return error = "out of memory holding an event of more than " + megabytes(scanner.pending_bytes()), false;
    }
  }
  events = scanner.events();
  metadata.reserve(metadata.size() + kPadding);
  return scanner.finish(error);
}

}  // namespace profagent::report
