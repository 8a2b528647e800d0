// Streams a Chrome/Kineto trace file (plain or gzip) without holding it whole in memory.
//
// A trace is one JSON object whose "traceEvents" array holds nearly all of its bytes. The file
// is read in chunks (zlib reads plain files as they are), a small scanner that knows JSON
// strings and escapes finds the top-level boundaries, and:
//   - the events are handed over in batches, each a complete JSON array text "[e1,e2,...]"
//     with simdjson's padding behind it, so every batch is parsed on its own;
//   - every other top-level member is kept, with "traceEvents":[] in place of the events, as one
//     small JSON object text (metadata: deviceProperties, distributedInfo, ...).
// The scanner checks only what it needs (the top-level shape, truncation, trailing bytes);
// simdjson validates each batch and the metadata fully (syntax, UTF-8).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace profagent::report {

// A gzip file that expands more than this many times is refused unless told otherwise
// (`profagent report --max-gzip-ratio`): JSON traces compress 5-30 times, a gzip bomb ~1000 times.
// Checked as it is read, against the compressed bytes read so far: a bomb is refused after its
// first kGzipRatioFloorBytes, before its events fill the memory.
inline constexpr uint64_t kDefaultMaxGzipRatio = 100;
// ... and never before it has expanded this far (a small file cannot hurt).
inline constexpr uint64_t kGzipRatioFloorBytes = 16u << 20;

struct StreamLimits {
  std::size_t chunk_bytes = 1u << 20;  // bytes read (decompressed) at once
  std::size_t batch_bytes = 1u << 20;  // events handed over at once (a batch can exceed it by one event)
  uint64_t max_gzip_ratio = kDefaultMaxGzipRatio;  // 0: no limit
};

// `on_batch(text, count, error)`: `text` is "[e1,...]", valid during the call, with at least
// kBatchPadding readable bytes after it (simdjson's padding). Returns false (with error set) to stop.
inline constexpr std::size_t kBatchPadding = 64;
using BatchFn = std::function<bool(std::string_view batch, uint64_t events, std::string& error)>;

// Reads `path`; on success `metadata` holds the top-level object without its events and the
// return value is true. On failure `error` says what is wrong (without the file name); a gzip
// file is refused as soon as it has expanded beyond limits.max_gzip_ratio times.
bool stream_trace(const std::string& path, const StreamLimits& limits, const BatchFn& on_batch,
                  std::string& metadata, uint64_t& events, std::string& error);

}  // namespace profagent::report
