// The Chrome/Perfetto trace.json writer, in the shape Kineto writes (notes/trace-format.md §1)
// so that Perfetto UI, chrome://tracing and tools written for PyTorch profiler traces (HTA)
// read it.
//
// Layout decisions (each cites the note section it follows):
// - Top-level keys in Kineto's order (§1.1): schemaVersion, deviceProperties, metadata keys
//   (profagent_config, cupti_version, cuda_runtime_version, cuda_driver_version, host_name,
//   device_backend, profagent_drops, profagent_window), distributedInfo, displayTimeUnit,
//   baseTimeNanoseconds, traceEvents, traceName. `"rank": R` (space after the colon, HTA's
//   regex §2.1) appears once, in distributedInfo, and nothing before it matches the regex:
//   every other key is written compactly ("k":v), so no other text matches `"rank":\s+\d`.
// - baseTimeNanoseconds = the Unix ns of the trace's earliest timestamp floored to Kineto's
//   7889238 s interval (§1.2); every ts/dur is (unix ns - base) in µs with 3 decimals, ≥ 0.
// - Host rows: pid/tid of the OS (§1.5). Device rows: pid = device, tid = stream, except
//   stream 0 whose tid is kStreamZeroTid (Perfetto rewrites tid 0 to the pid when pid ≠ 0,
//   §3.2, which would merge the row with another); device-side sync records on
//   tid = stream + 1000000 (kSyncStreamTidOffset). Row names: process_name "GPU <d>",
//   process_labels "GPU <d>", process_sort_index d + 5000000, thread_name "stream <s>".
// - Flows (§1.7): one `s` per launching call (the hooked runtime call, or the CUPTI driver
//   record of a launch no hook saw) at its start, one `f` (bp "e") per device record at the
//   device record's start; id = CUPTI correlation id (2^32 + index when it is unknown).
// - The closing "Record Window End" global instant carries the host pid/tid instead of
//   Kineto's empty strings: Perfetto treats string pids as a brittle special case (§3.2).
#pragma once

#include <cstdint>
#include <string_view>

#include "collector/trace.h"
#include "exporters/json_writer.h"

namespace profagent::exporters {

inline constexpr uint64_t kSyncStreamTidOffset = 1000000;
inline constexpr uint64_t kStreamZeroTid = 2000000;
inline constexpr uint64_t kGpuSortIndexOffset = 5000000;
inline constexpr uint64_t kBaseTimeIntervalNs = 7889238ull * 1000000000ull;

// Unix-epoch ns that every ts of `trace` is relative to.
uint64_t base_time_ns(const Trace& trace);

// Writes the whole trace.json; false if the output failed (the writer's error is sticky).
// Returns the number of trace events written through *events when not null.
bool write_chrome_trace(const Trace& trace, std::string_view trace_name, JsonWriter& out,
                        uint64_t* events = nullptr);

}  // namespace profagent::exporters
