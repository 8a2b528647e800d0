// The Chrome/Perfetto trace.json writer, in the shape Kineto writes (pytorch/kineto
// libkineto/src/output_json.cpp) so that Perfetto UI, chrome://tracing and tools written for
// PyTorch profiler traces (HolisticTraceAnalysis) read it.
//
// Layout decisions:
// - Top-level keys in Kineto's order: schemaVersion, deviceProperties, metadata keys
//   (profagent_config, cupti_version, cuda_runtime_version, cuda_driver_version, host_name,
//   device_backend, profagent_drops, profagent_window, profagent_cpu_times), distributedInfo, displayTimeUnit,
//   baseTimeNanoseconds, traceEvents, traceName. `"rank": R` (with the space after the colon
//   HTA's rank regex needs) appears once, in distributedInfo, and nothing before it matches
//   that regex: every other key is written compactly ("k":v). profagent_cpu_times (the
//   window's CPU times, Unix ns) is left out when they were not read.
// - baseTimeNanoseconds = the Unix ns of the trace's earliest timestamp floored to Kineto's
//   7889238 s interval; every ts/dur is (unix ns - base) in µs with 3 decimals, ≥ 0.
// - Host rows: pid/tid of the OS. Device rows: pid = device, tid = stream, except stream 0
//   whose tid is kStreamZeroTid (Perfetto rewrites tid 0 to the pid when pid ≠ 0, which would
//   merge the row with another); stream synchronisations on tid = stream + 1000000
//   (kSyncStreamTidOffset, row "stream <s> (sync)"); synchronisations without a stream (event,
//   context) on Kineto's device-wide row, tid kDeviceRowTid ("Device <d>"), with "stream": -1.
//   Every pid and tid fits in 32 bits (Perfetto reads larger ones as 0). Row names:
//   process_name/process_labels "GPU <d>", process_sort_index d + 5000000, thread_name
//   "stream <s>", thread_sort_index the stream id.
// - Every cuda_runtime / cuda_driver event has `cbid` and a `correlation` of its own
//   (trace_links.h); kernels carry Kineto's occupancy args (occupancy.h); each operator, range
//   and step with device work gets gpu_user_annotation slices on the stream rows it used.
// - Flows: one `s` per launching call (the hooked runtime call, or the CUPTI driver record of
//   a launch no hook saw) at its start, one `f` (bp "e") per device record at the device
//   record's start; id = CUPTI correlation id (a fresh 32-bit id when it is unknown).
// - The closing "Record Window End" global instant carries the host pid/tid instead of
//   Kineto's empty strings: Perfetto treats string pids as a brittle special case.
#pragma once

#include <cstdint>
#include <string_view>

#include "collector/trace.h"
#include "exporters/json_writer.h"

namespace profagent::exporters {

inline constexpr uint64_t kSyncStreamTidOffset = 1000000;
inline constexpr uint64_t kDeviceRowTid = 1;          // Kineto's tid for its resource id -1
inline constexpr uint32_t kNoStream = 0xFFFFFFFFu;    // CUPTI_SYNCHRONIZATION_INVALID_VALUE
inline constexpr uint64_t kStreamZeroTid = 2000000;
inline constexpr uint64_t kGpuSortIndexOffset = 5000000;
inline constexpr uint64_t kBaseTimeIntervalNs = 7889238ull * 1000000000ull;

// Unix-epoch ns that every ts of `trace` is relative to, given the earliest start of its host
// and device records (UINT64_MAX: none; TraceLinks finds it on its pass over them).
uint64_t base_time_ns(const Trace& trace, uint64_t earliest_record_ns);

// Writes the whole trace.json; false if the output failed (the writer's error is sticky).
// Returns the number of trace events written through *events when not null.
bool write_chrome_trace(const Trace& trace, std::string_view trace_name, JsonWriter& out,
                        uint64_t* events = nullptr);

}  // namespace profagent::exporters
