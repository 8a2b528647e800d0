// The small definitions every reader of a Trace shares, so that a table, a summary, the folded
// stacks and the trace's own annotations count a record the same way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collector/trace.h"

namespace profagent::exporters {

// A record's length; a record that ends before it starts (a clock step) lasts 0, never 2^64.
inline uint64_t span_ns(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

// `part` as a percentage of `base`; 0 when the base is empty.
inline double percent(uint64_t part, uint64_t base) { return base ? 100.0 * double(part) / double(base) : 0.0; }

// Whether `i` indexes a vector of `n` (links in a trace read back from a file may point anywhere).
inline bool valid_index(int64_t i, std::size_t n) { return i >= 0 && static_cast<std::size_t>(i) < n; }

// Kernels, copies and sets: the device records that take device time (sync records are waits);
// the collector's table of device kinds says which (collector/trace.h).
inline bool is_device_work(DeviceKind k) { return about(k).work; }

}  // namespace profagent::exporters
