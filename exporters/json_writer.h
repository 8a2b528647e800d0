// A streaming JSON byte writer: a large buffer in front of an OutputStream, hand-written
// number formatting and string escaping. No DOM, no printf per field, no iostream: the trace
// writer must reach millions of events per second.
//
// The writer does not track JSON structure; callers emit punctuation themselves. That keeps
// the hot path to a bounds check and a few stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

#include "exporters/output_stream.h"

namespace profagent::exporters {

// Appends `text` as a quoted JSON string to `out`, valid for ANY bytes: `"` and `\` escaped,
// control bytes as \u00XX, each invalid UTF-8 sequence (maximal subpart, Unicode §3.9)
// replaced by U+FFFD; valid UTF-8 is copied unchanged. Returns the end of what was written.
// `out` must have room for escaped_size_bound(text.size()).
char* write_json_string(char* out, std::string_view text);
inline constexpr std::size_t escaped_size_bound(std::size_t n) { return 6 * n + 2; }

// Decimal digits of v; returns the end. At most 20 bytes.
char* write_u64(char* out, uint64_t v);
// Shortest text that reads back as the same float, non-finite values as 0; returns the end. At
// most 32 bytes.
char* write_real(char* out, float v);
// Nanoseconds as microseconds with exactly three decimals ("12.345"), Kineto's fmtTs.
char* write_us3(char* out, uint64_t ns);

// write_us3 for times written one after the other, mostly close together (a trace's
// timestamps): the digits above the last four of the microseconds change seldom, so they are
// formatted when they change and copied otherwise. The same text as write_us3.
class NearTimeText {
 public:
  char* write(char* out, uint64_t ns);  // `out` needs 28 bytes of room

 private:
  uint64_t high_ = UINT64_MAX;  // microseconds / 10^4 that text_ holds
  char text_[24] = {};
  std::size_t size_ = 0;
};

class JsonWriter {
 public:
  explicit JsonWriter(OutputStream& out, std::size_t capacity = std::size_t{1} << 20);
  ~JsonWriter();
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  // Punctuation and keys written verbatim (callers pass literals such as ",\"pid\":").
  void raw(std::string_view text) {
    if (text.size() > room()) return raw_slow(text);
    std::memcpy(pos_, text.data(), text.size());
    pos_ += text.size();
  }
  void u64(uint64_t v) { reserve(24); pos_ = write_u64(pos_, v); }
  void i64(int64_t v);
  void us3(uint64_t ns) { reserve(28); pos_ = times_.write(pos_, ns); }
  // Value with three decimals (bandwidths); negative and non-finite values become 0.
  void fixed3(double v);
  // Shortest text that reads back as the same float (Kineto's float args, e.g. "blocks per SM");
  // non-finite values become 0.
  void real(float v);
  void string(std::string_view text);
  void boolean(bool v) { raw(v ? "true" : "false"); }

  // Pushes the buffer to the stream; false once any write failed.
  bool flush();
  bool ok() const { return ok_; }
  uint64_t bytes_written() const { return flushed_ + static_cast<uint64_t>(pos_ - begin_); }

 private:
  std::size_t room() const { return static_cast<std::size_t>(end_ - pos_); }
  void reserve(std::size_t n) {
    if (n > room()) flush();
  }
  void raw_slow(std::string_view text);

  OutputStream& out_;
  std::unique_ptr<char[]> buffer_;
  char* begin_;
  char* pos_;
  char* end_;
  uint64_t flushed_ = 0;
  bool ok_ = true;
  NearTimeText times_;
};

}  // namespace profagent::exporters
