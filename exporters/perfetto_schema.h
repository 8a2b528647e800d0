// Perfetto's protobuf trace as profagent writes it: the field numbers it uses, from Perfetto's
// public protos (https://github.com/google/perfetto/tree/main/protos/perfetto/trace:
// trace_packet.proto, track_event/track_event.proto, track_event/track_descriptor.proto,
// interned_data/interned_data.proto, track_event/debug_annotation.proto, clock_snapshot.proto,
// trace_packet_defaults.proto, chrome/chrome_trace_event.proto), and profagent's conventions. The
// writer (perfetto_trace.h) and `profagent report`'s reader share them; docs/trace-formats.md
// says which trace field maps to what.
#pragma once

#include <cstdint>
#include <string_view>

#include "exporters/trace_schema.h"

namespace profagent::exporters::perfetto {

// message Trace { repeated TracePacket packet = 1; }
inline constexpr uint32_t kTracePacket = 1;

namespace packet {  // TracePacket
inline constexpr uint32_t kTimestamp = 8;
inline constexpr uint32_t kTimestampClockId = 58;
inline constexpr uint32_t kTrustedPacketSequenceId = 10;
inline constexpr uint32_t kSequenceFlags = 13;
inline constexpr uint32_t kInternedData = 12;
inline constexpr uint32_t kTracePacketDefaults = 59;
inline constexpr uint32_t kTrackEvent = 11;
inline constexpr uint32_t kTrackDescriptor = 60;
inline constexpr uint32_t kClockSnapshot = 6;
inline constexpr uint32_t kChromeEvents = 5;
inline constexpr uint32_t kSeqIncrementalStateCleared = 1;  // SequenceFlags
inline constexpr uint32_t kSeqNeedsIncrementalState = 2;
}  // namespace packet

namespace defaults {  // TracePacketDefaults, TrackEventDefaults
inline constexpr uint32_t kTimestampClockId = 58;
inline constexpr uint32_t kTrackEventDefaults = 11;
inline constexpr uint32_t kTrackUuid = 11;
}  // namespace defaults

namespace clock {  // ClockSnapshot, ClockSnapshot.Clock
inline constexpr uint32_t kClocks = 1;
inline constexpr uint32_t kClockId = 1;
inline constexpr uint32_t kTimestamp = 2;
inline constexpr uint32_t kIsIncremental = 3;
inline constexpr uint32_t kRealtime = 1;  // BuiltinClocks
inline constexpr uint32_t kBoottime = 6;
// A sequence-scoped clock (ids 64..127): each packet's timestamp is the delta from the previous
// packet's on the sequence, in ns. Its ClockSnapshot sets where it starts (again whenever a
// sequence's time would go backwards).
inline constexpr uint32_t kIncrementalNs = 64;
}  // namespace clock

namespace event {  // TrackEvent
inline constexpr uint32_t kCategoryIids = 3;
inline constexpr uint32_t kNameIid = 10;
inline constexpr uint32_t kType = 9;
inline constexpr uint32_t kTrackUuid = 11;
inline constexpr uint32_t kCounterValue = 30;
inline constexpr uint32_t kExtraCounterTrackUuids = 31;
inline constexpr uint32_t kExtraCounterValues = 12;
inline constexpr uint32_t kFlowIds = 47;             // fixed64
inline constexpr uint32_t kTerminatingFlowIds = 48;  // fixed64
inline constexpr uint32_t kDebugAnnotations = 4;
inline constexpr uint32_t kTypeSliceBegin = 1;
inline constexpr uint32_t kTypeSliceEnd = 2;
inline constexpr uint32_t kTypeInstant = 3;
inline constexpr uint32_t kTypeCounter = 4;
}  // namespace event

namespace annotation {  // DebugAnnotation
inline constexpr uint32_t kNameIid = 1;
inline constexpr uint32_t kUintValue = 3;
inline constexpr uint32_t kIntValue = 4;
inline constexpr uint32_t kDoubleValue = 5;
inline constexpr uint32_t kStringValue = 6;
inline constexpr uint32_t kStringValueIid = 17;
inline constexpr uint32_t kArrayValues = 12;
}  // namespace annotation

namespace interned {  // InternedData; EventCategory, EventName, DebugAnnotationName, InternedString
inline constexpr uint32_t kEventCategories = 1;
inline constexpr uint32_t kEventNames = 2;
inline constexpr uint32_t kDebugAnnotationNames = 3;
inline constexpr uint32_t kDebugAnnotationStringValues = 29;
inline constexpr uint32_t kIid = 1;
inline constexpr uint32_t kName = 2;  // EventCategory.name, EventName.name, DebugAnnotationName.name
inline constexpr uint32_t kString = 2;  // InternedString.str (bytes)
}  // namespace interned

namespace track {  // TrackDescriptor, ProcessDescriptor, ThreadDescriptor, CounterDescriptor
inline constexpr uint32_t kUuid = 1;
inline constexpr uint32_t kParentUuid = 5;
inline constexpr uint32_t kName = 2;
inline constexpr uint32_t kProcess = 3;
inline constexpr uint32_t kThread = 4;
inline constexpr uint32_t kCounter = 8;
inline constexpr uint32_t kProcessPid = 1;
inline constexpr uint32_t kProcessName = 6;
inline constexpr uint32_t kProcessLabels = 8;
inline constexpr uint32_t kThreadPid = 1;
inline constexpr uint32_t kThreadTid = 2;
inline constexpr uint32_t kThreadName = 5;
inline constexpr uint32_t kCounterUnit = 3;
inline constexpr uint32_t kUnitSizeBytes = 3;
}  // namespace track

namespace chrome_metadata {  // ChromeEventBundle, ChromeMetadata
inline constexpr uint32_t kMetadata = 2;
inline constexpr uint32_t kMetadataName = 1;
inline constexpr uint32_t kMetadataJsonValue = 5;
}  // namespace chrome_metadata

// ---- profagent's conventions -------------------------------------------------------------------

// The trace's top-level JSON object without its events (deviceProperties, distributedInfo,
// profagent_*, baseTimeNanoseconds, stackFrames, traceName: what chrome_trace.h writes around
// "traceEvents") as one ChromeMetadata json_value under this name.
inline constexpr std::string_view kMetadataName = "profagent_trace_metadata";

// Track kinds, told apart by their descriptors:
//   row track      ThreadDescriptor{pid, tid}: a host thread (OS pid/tid) or a device stream row
//                  (pid = device, tid as the JSON trace's rows: chrome_trace.h)
//   lane track     parent_uuid = a row track, the same name: slices of that row that do not nest in
//                  the row's other slices, or come out of time order
//   async track    parent_uuid = a process track, name kAsyncTrackName: NVTX start/end ranges
//   counter track  CounterDescriptor, name "<memory track> allocated|reserved"
inline constexpr std::string_view kAsyncTrackName = "NVTX start/end ranges";
inline constexpr std::string_view kAllocatedSuffix = " allocated";
inline constexpr std::string_view kReservedSuffix = " reserved";

// The JSON event's "sf" (its leaf in "stackFrames", kept in the metadata) as a debug annotation.
inline constexpr std::string_view kStackFrameArg = "sf";
// The closing "Record Window End" instant has no category in the JSON trace: an empty one here.
inline constexpr std::string_view kNoCategory = "";

// Annotations whose text is the JSON trace's value as JSON, interned (few distinct values): a
// kernel's grid and block ("[x,y,z]"), an operator's input shapes and types, NVTX's texts and
// payload, torch's input op ids (strings keep their quotes).
constexpr bool is_json_text_arg(std::string_view name) {
  namespace arg = schema::arg;
  return name == arg::kGrid || name == arg::kBlock || name == arg::kInputDims || name == arg::kInputType ||
         name == arg::kDomain || name == arg::kCategoryName || name == arg::kColor || name == arg::kPayload ||
         name == arg::kInputOpIds;
}

// Flow ids: Perfetto's are global, the JSON trace's are per category. The ac2g arrows (call ->
// device work) keep their id; torch's fwdbwd links (forward op -> backward function) get this bit.
inline constexpr uint64_t kFwdBwdFlowBit = uint64_t(1) << 62;

}  // namespace profagent::exporters::perfetto
