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

#include "exporters/output_stream.h"

namespace profagent::exporters {

inline constexpr int kTraceGzipLevel = 1;

// Compresses into `inner`; commit() ends the member and commits `inner`. A failure of zlib (also:
// libz.so.1 cannot be loaded) or of `inner` is sticky and reported by commit(), as for any stream:
// the file is then not published, and the window's other files are still written.
std::unique_ptr<OutputStream> gzip_stream(std::unique_ptr<OutputStream> inner, int level = kTraceGzipLevel);

}  // namespace profagent::exporters
