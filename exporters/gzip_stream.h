// An OutputStream that gzip-compresses what is written through it into another stream, as it
// comes: one gzip member (RFC 1952), never the whole file in memory (a 256 KiB output buffer).
//
// zlib's deflate at level 1 (kTraceGzipLevel): measured on real traces (docs/trace-formats.md)
// it compresses the trace 12-16x at several times the speed the JSON is written, so the .gz
// costs less time than the disk writes it saves. Higher levels gain a few percent of size for
// 2-4x the time; libdeflate compresses only whole buffers (a streamed file would need a
// member per chunk or the whole trace in memory); zstd is not read by Perfetto UI,
// chrome://tracing or HTA. Every reader of .json.gz (Python's gzip, zcat, Perfetto UI,
// `profagent report`) reads the file.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "exporters/output_stream.h"

namespace profagent::exporters {

inline constexpr int kTraceGzipLevel = 1;

// Compresses into `inner`; commit() ends the member and commits `inner`. A failure of zlib (also:
// libz.so.1 cannot be loaded) or of `inner` is sticky and reported by commit(), as for any stream:
// the file is then not published, and the window's other files are still written.
std::unique_ptr<OutputStream> gzip_stream(std::unique_ptr<OutputStream> inner, int level = kTraceGzipLevel);

// One gzip member written in parts to a file that must be a whole gzip file after each part (a
// streamed window's json.gz: partial_trace.h). What is written goes, compressed, to the stream
// to() names; sync() pushes it all out up to a byte boundary (Z_SYNC_FLUSH), so the next part
// goes on from there; end_copy() compresses a closing text and ends the member (its CRC and
// length) on a copy of the stream (deflateCopy), leaving the stream itself open for more parts.
// So "every part so far + that ending" is one complete member, and the next part's bytes are
// written over the ending. commit(): zlib's first error, "" if none.
class GzipParts final : public OutputStream {
 public:
  explicit GzipParts(int level = kTraceGzipLevel);
  ~GzipParts() override;
  void to(OutputStream* sink);
  bool write(const char* data, std::size_t size) override;
  bool sync();
  bool end_copy(std::string_view text, OutputStream& out);
  std::string commit() override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace profagent::exporters
