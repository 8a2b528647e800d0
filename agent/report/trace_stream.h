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

namespace profagent::report {

struct StreamLimits {
  std::size_t chunk_bytes = 8u << 20;  // read() / gzread() size
  std::size_t batch_bytes = 8u << 20;  // events handed over at once (a batch can exceed it by one event)
};

// `on_batch(text, count, padded_capacity)`: `text` is "[e1,...]", valid during the call, with
// at least simdjson's padding of readable bytes after it. Returns false (with error set) to stop.
using BatchFn = std::function<bool(const std::string& batch, uint64_t events, std::string& error)>;

// Reads `path`; on success `metadata` holds the top-level object without its events and the
// return value is true. On failure `error` says what is wrong (without the file name).
bool stream_trace(const std::string& path, const StreamLimits& limits, const BatchFn& on_batch,
                  std::string& metadata, uint64_t& events, std::string& error);

}  // namespace profagent::report
