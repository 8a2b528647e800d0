// The memory part of trace.json (PROFAGENT_PROFILE_MEMORY), in the shape PyTorch's profiler
// writes through Kineto, so Perfetto and tools written for PyTorch traces read it as theirs:
// - one `[memory]` instant event per allocation and free on the thread that made it
//   ("ph":"i", "cat":"cpu_instant_event", "s":"t") with args `Total Reserved`,
//   `Total Allocated`, `Bytes` (negative for a free), `Addr`, `Device Id`, `Device Type`
//   (1 CUDA, 0 CPU: torch's c10::DeviceType; host memory has Device Id -1) and `Ev Idx`;
//   plus profagent's own args, so a reader rebuilds the memory summary from the file alone:
//   `Kind` (device, pool, managed, pinned, registered), `Allocated ts` on a free of memory made
//   in the window (when it was made, on the ts clock) and `Call site` with stacks on;
// - one `[OutOfMemory]` instant event per failed allocation, with the size asked for and the
//   call's `Error`; a call that failed for another reason (memory already registered, an
//   invalid value) is a `[FailedMemoryCall]` instant with its `Error`, never an out-of-memory;
// - a counter track per device ("ph":"C", name "Memory (GPU <d>)" or "Memory (CPU pinned)",
//   args Allocated and Reserved in bytes) with a value at the window's start, after every
//   record and at the window's end: Perfetto draws it as the memory timeline.
// - the top-level key "profagent_memory": what the bookkeeping saw and kept (bad frees, drops,
//   its own size).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "collector/trace.h"
#include "exporters/json_writer.h"

namespace profagent::exporters {

// `rel` turns an agent-clock ns value into the trace's ts base (ns); returns events written.
uint64_t write_memory_events(const Trace& trace, JsonWriter& w, const std::function<uint64_t(uint64_t)>& rel);

// `  "profagent_memory": {...},\n` (nothing when memory was not profiled).
void write_memory_metadata(const Trace& trace, JsonWriter& w);

// The counter track's name for a device.
std::string memory_track_name(int32_t device);

// The `Kind` arg's word for a memory kind, and back (false for a word that names none).
const char* memory_kind_name(MemoryKind kind);
bool memory_kind_of(std::string_view name, MemoryKind* kind);

// The instant's name of a record: [memory], [OutOfMemory] or [FailedMemoryCall].
std::string_view memory_event_name(const MemoryRecord& record);

// The call site of a record's call (its stack's, or the one read back from a trace), "" if none;
// of a live allocation, made by the call at index `host` of trace.host (kNoIndex: not in it).
std::string memory_call_site(const Trace& trace, const MemoryRecord& record);
std::string live_call_site(const Trace& trace, const LiveAllocation& allocation, int64_t host);

}  // namespace profagent::exporters
