// The trace.json format, named once. The writer (chrome_trace*.cpp, memory_events.cpp,
// summary_json.cpp) and the reader (`profagent report`: agent/report/event_reader.cpp,
// trace_metadata.cpp, trace_builder.cpp) both take every key, category and event name from
// here, and the members of the metadata objects from the field lists below: a key the writer
// adds to a list is read back without a second edit, and a key cannot be spelled two ways.
//
// The layout is Kineto's (pytorch/kineto libkineto/src/output_json.cpp) with profagent's own
// top-level objects and args added; chrome_trace.h says where each thing goes. The event
// members Chrome's Trace Event Format itself defines (ph, cat, name, pid, tid, ts, dur, id, bp,
// s, args) are written as part of fixed text on the per-event path and read by name.
//
// The drop counters have their own list, with what each says on stderr (drop_counters.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "collector/trace.h"

namespace profagent::exporters::schema {

// ---- top-level members, in the order they are written ----------------------------------------
inline constexpr std::string_view kSchemaVersion = "schemaVersion";
inline constexpr std::string_view kDeviceProperties = "deviceProperties";
inline constexpr std::string_view kConfig = "profagent_config";
inline constexpr std::string_view kCuptiVersion = "cupti_version";
inline constexpr std::string_view kCudaRuntimeVersion = "cuda_runtime_version";
inline constexpr std::string_view kCudaDriverVersion = "cuda_driver_version";
inline constexpr std::string_view kHostName = "host_name";
inline constexpr std::string_view kDeviceBackend = "device_backend";
inline constexpr std::string_view kDrops = "profagent_drops";    // drop_counters.h
inline constexpr std::string_view kMemory = "profagent_memory";  // PROFAGENT_PROFILE_MEMORY only
inline constexpr std::string_view kWindow = "profagent_window";
inline constexpr std::string_view kCpuTimes = "profagent_cpu_times";  // when both ends were read
inline constexpr std::string_view kOverhead = "profagent_overhead";   // what profagent cost (when measured)
inline constexpr std::string_view kDistributedInfo = "distributedInfo";
inline constexpr std::string_view kDisplayTimeUnit = "displayTimeUnit";
inline constexpr std::string_view kBaseTimeNanoseconds = "baseTimeNanoseconds";
inline constexpr std::string_view kTraceEvents = "traceEvents";
inline constexpr std::string_view kStackFrames = "stackFrames";  // with stacks only
inline constexpr std::string_view kPartial = "profagent_partial";  // <stem>.trace.json.partial only
inline constexpr std::string_view kTraceName = "traceName";
// A streamed window's trace (collector/segment_stream.h): what its segments and tail wrote.
inline constexpr std::string_view kStreamed = "profagent_streamed";

// distributedInfo's members. "rank" is written as `"rank": R` (with the space HTA's regex needs).
inline constexpr std::string_view kBackend = "backend";  // "nccl" once a communicator was made
inline constexpr std::string_view kRank = "rank";
inline constexpr std::string_view kLocalRank = "local_rank";
inline constexpr std::string_view kWorldSize = "world_size";

// ---- categories ("cat") ----------------------------------------------------------------------
namespace cat {
inline constexpr std::string_view kCpuOp = "cpu_op";                    // operators
inline constexpr std::string_view kUserAnnotation = "user_annotation";  // ranges and steps
inline constexpr std::string_view kCudaRuntime = "cuda_runtime";
inline constexpr std::string_view kCudaDriver = "cuda_driver";
inline constexpr std::string_view kGpuUserAnnotation = "gpu_user_annotation";
inline constexpr std::string_view kFlow = "ac2g";                       // also the flows' name
inline constexpr std::string_view kCpuInstant = "cpu_instant_event";    // memory instants
inline constexpr std::string_view kFwdBwd = "fwdbwd";  // forward op -> its backward function (also the name)
inline constexpr std::string_view kProfagent = "profagent";  // the agent's own work (its track)
}  // namespace cat

// Device records' categories: one row per DeviceKind (DriverApi records are host-side calls).
struct DeviceCategory {
  DeviceKind kind;
  std::string_view cat;
};
inline constexpr DeviceCategory kDeviceCategories[] = {
    {DeviceKind::Kernel, "kernel"},
    {DeviceKind::Memcpy, "gpu_memcpy"},
    {DeviceKind::Memset, "gpu_memset"},
    {DeviceKind::Sync, "cuda_sync"},
    {DeviceKind::DriverApi, cat::kCudaDriver},
};
constexpr std::string_view device_category(DeviceKind kind) {
  for (const DeviceCategory& c : kDeviceCategories) {
    if (c.kind == kind) return c.cat;
  }
  return kDeviceCategories[0].cat;
}
// The device record kind of a category; false for one that names none (DriverApi excluded:
// its records read back as host calls).
constexpr bool device_kind_of(std::string_view cat, DeviceKind* kind) {
  for (const DeviceCategory& c : kDeviceCategories) {
    if (c.cat == cat && c.kind != DeviceKind::DriverApi) return *kind = c.kind, true;
  }
  return false;
}

// ---- event names -----------------------------------------------------------------------------
namespace name {
inline constexpr std::string_view kStepPrefix = "ProfilerStep#";        // + the step number
inline constexpr std::string_view kWindowEnd = "Record Window End";     // the closing instant
inline constexpr std::string_view kMemory = "[memory]";                 // an allocation or free
inline constexpr std::string_view kOutOfMemory = "[OutOfMemory]";       // a failed allocation
inline constexpr std::string_view kFailedMemoryCall = "[FailedMemoryCall]";  // failed otherwise
// Metadata ('M') events: row names, labels and order.
inline constexpr std::string_view kProcessName = "process_name";
inline constexpr std::string_view kProcessLabels = "process_labels";
inline constexpr std::string_view kProcessSortIndex = "process_sort_index";
inline constexpr std::string_view kThreadName = "thread_name";
inline constexpr std::string_view kThreadSortIndex = "thread_sort_index";
}  // namespace name

// A host thread row's name: "thread <tid>", with " (<native name>)" when the thread has one.
inline std::string thread_row_name(uint64_t tid, std::string_view native) {
  std::string row = "thread " + std::to_string(tid);
  if (!native.empty()) row.append(" (").append(native).append(")");
  return row;
}
// The native name in a thread row's name; "" when it has none.
inline std::string_view native_thread_name(std::string_view row) {
  const std::size_t open = row.find(" (");
  if (open == std::string_view::npos || row.back() != ')') return {};
  return row.substr(open + 2, row.size() - open - 3);
}

// CUpti_ActivitySynchronizationType values and the names Kineto prints for them (the name of a
// cuda_sync event and its `cuda_sync_kind` arg).
inline constexpr uint32_t kSyncEventSynchronize = 1;
inline constexpr uint32_t kSyncStreamWaitEvent = 2;
inline constexpr uint32_t kSyncStreamSynchronize = 3;
inline constexpr uint32_t kSyncContextSynchronize = 4;
struct SyncName {
  uint32_t type;
  std::string_view name;
};
inline constexpr SyncName kSyncNames[] = {
    {kSyncEventSynchronize, "Event Sync"},
    {kSyncStreamWaitEvent, "Stream Wait Event"},
    {kSyncStreamSynchronize, "Stream Sync"},
    {kSyncContextSynchronize, "Context Sync"},
};
inline constexpr std::string_view kUnknownSync = "Unknown Sync";
constexpr std::string_view sync_name(uint32_t type) {
  for (const SyncName& s : kSyncNames) {
    if (s.type == type) return s.name;
  }
  return kUnknownSync;
}
// 0 for a name that is none of them.
constexpr uint32_t sync_type_of(std::string_view name) {
  for (const SyncName& s : kSyncNames) {
    if (s.name == name) return s.type;
  }
  return 0;
}

// The profagent track: a process row of its own, named "profagent", one thread row per thread
// that did agent work. Its pid is the process's plus 2^22 (Linux's largest pid_max), so it is
// no real process's and stays distinct when the traces of several processes are merged.
inline constexpr std::string_view kAgentTrackName = "profagent";
inline constexpr uint64_t agent_track_pid(uint64_t pid) { return pid + (uint64_t(1) << 22); }

// ---- args ------------------------------------------------------------------------------------
namespace arg {
// Every event that belongs to an operator, range or step, and those scopes themselves.
inline constexpr std::string_view kExternalId = "External id";
// Runtime and driver calls.
inline constexpr std::string_view kCbid = "cbid";
inline constexpr std::string_view kCorrelation = "correlation";  // device records too
inline constexpr std::string_view kEntryPoint = "entry point";   // when it is not the API name
inline constexpr std::string_view kCudaError = "cuda_error";
inline constexpr std::string_view kCaptured = "captured";        // issued into a graph capture
inline constexpr std::string_view kBytes = "bytes";              // copies, sets, allocations
inline constexpr std::string_view kKernel = "kernel";            // a launch's kernel name
inline constexpr std::string_view kCallSite = "Call site";       // with stacks (memory too)
// Operators with PROFAGENT_RECORD_SHAPES.
inline constexpr std::string_view kInputDims = "Input Dims";
inline constexpr std::string_view kInputType = "Input type";
// torch operators from torch's NVTX ranges (Kineto's names), and NVTX ranges' own args.
inline constexpr std::string_view kRecordFunctionId = "Record function id";
inline constexpr std::string_view kSequenceNumber = "Sequence number";
inline constexpr std::string_view kFwdThreadId = "Fwd thread id";
inline constexpr std::string_view kInputOpIds = "Input op ids";
inline constexpr std::string_view kDomain = "domain";
inline constexpr std::string_view kCategory = "category";
inline constexpr std::string_view kCategoryName = "category name";
inline constexpr std::string_view kColor = "color";
inline constexpr std::string_view kPayload = "payload";
inline constexpr std::string_view kStartThread = "start thread";  // a start/end range's first thread
// Steps.
inline constexpr std::string_view kStep = "step";
// Device records, in Kineto's order per kind (chrome_trace_device.cpp).
inline constexpr std::string_view kDevice = "device";
inline constexpr std::string_view kContext = "context";
inline constexpr std::string_view kStream = "stream";            // -1: none applies
inline constexpr std::string_view kBandwidth = "memory bandwidth (GB/s)";
inline constexpr std::string_view kQueued = "queued";            // Unix ns, 0 unknown
inline constexpr std::string_view kRegistersPerThread = "registers per thread";
inline constexpr std::string_view kSharedMemory = "shared memory";
inline constexpr std::string_view kBlocksPerSm = "blocks per SM";
inline constexpr std::string_view kWarpsPerSm = "warps per SM";
inline constexpr std::string_view kGrid = "grid";
inline constexpr std::string_view kBlock = "block";
inline constexpr std::string_view kOccupancy = "est. achieved occupancy %";
inline constexpr std::string_view kGraphId = "graph id";
inline constexpr std::string_view kGraphNodeId = "graph node id";
inline constexpr std::string_view kSyncKind = "cuda_sync_kind";
inline constexpr std::string_view kWaitOnStream = "wait_on_stream";
inline constexpr std::string_view kWaitOnRecordCorrelation = "wait_on_cuda_event_record_corr_id";
inline constexpr std::string_view kWaitOnEventId = "wait_on_cuda_event_id";
// Memory instants, torch's (memory_events.h) and then profagent's.
inline constexpr std::string_view kTotalReserved = "Total Reserved";
inline constexpr std::string_view kTotalAllocated = "Total Allocated";
inline constexpr std::string_view kMemoryBytes = "Bytes";        // negative for a free
inline constexpr std::string_view kAddress = "Addr";
inline constexpr std::string_view kDeviceId = "Device Id";
inline constexpr std::string_view kDeviceType = "Device Type";   // torch's c10::DeviceType
inline constexpr std::string_view kEventIndex = "Ev Idx";
inline constexpr std::string_view kMemoryKind = "Kind";
inline constexpr std::string_view kAllocatedTs = "Allocated ts";
inline constexpr std::string_view kError = "Error";
// Memory counters ('C').
inline constexpr std::string_view kAllocated = "Allocated";
inline constexpr std::string_view kReserved = "Reserved";
// Metadata events: the row's name or labels, or its sort index.
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kLabels = "labels";
inline constexpr std::string_view kSortIndex = "sort_index";
// NCCL calls and their kernels (exporters/collective_args.h): Kineto's communication args, then
// profagent's communicator hash, the call's bytes and a group's call count.
inline constexpr std::string_view kCollectiveName = "Collective name";
inline constexpr std::string_view kInMsgNelems = "In msg nelems";
inline constexpr std::string_view kOutMsgNelems = "Out msg nelems";
inline constexpr std::string_view kGroupSize = "Group size";
inline constexpr std::string_view kDtype = "dtype";
inline constexpr std::string_view kInSplitSize = "In split size";
inline constexpr std::string_view kOutSplitSize = "Out split size";
inline constexpr std::string_view kProcessGroupName = "Process Group Name";
inline constexpr std::string_view kProcessGroupDescription = "Process Group Description";
inline constexpr std::string_view kProcessGroupRanks = "Process Group Ranks";
inline constexpr std::string_view kCommRank = "Rank";
inline constexpr std::string_view kRoot = "Root";
inline constexpr std::string_view kDstRank = "Dst Rank";
inline constexpr std::string_view kSrcRank = "Src Rank";
inline constexpr std::string_view kSeq = "Seq";
inline constexpr std::string_view kCommHash = "Comm hash";
inline constexpr std::string_view kCalls = "Calls";
}  // namespace arg

// torch's c10::DeviceType values of a memory instant's `Device Type`.
inline constexpr int64_t kTorchCpu = 0;
inline constexpr int64_t kTorchCuda = 1;

// ---- numeric members of the metadata objects -------------------------------------------------
// One list per object, in the order they are written; the reader looks each key up in the same
// list. A member without `set` is derived from the rest when read (written for other readers).
enum class FieldType : uint8_t { Unsigned, Signed, Flag, Text };

template <typename Owner>
struct Field {
  std::string_view key;
  FieldType type = FieldType::Unsigned;
  int64_t (*get)(const Owner&) = nullptr;              // the value's bits (Unsigned/Signed/Flag)
  void (*set)(Owner&, int64_t) = nullptr;              // nullptr: not read back
  std::string_view (*text)(const Owner&) = nullptr;    // FieldType::Text
};

template <typename T>
struct MemberOf;
template <typename O, typename T>
struct MemberOf<T O::*> {
  using Owner = O;
  using Type = T;
};

// A member written and read back as it is.
template <auto Member>
constexpr Field<typename MemberOf<decltype(Member)>::Owner> field(std::string_view key) {
  using O = typename MemberOf<decltype(Member)>::Owner;
  using T = typename MemberOf<decltype(Member)>::Type;
  constexpr FieldType type = std::is_same_v<T, bool> ? FieldType::Flag
                             : std::is_signed_v<T>   ? FieldType::Signed
                                                     : FieldType::Unsigned;
  return {key, type, [](const O& o) { return int64_t(o.*Member); }, [](O& o, int64_t v) { o.*Member = T(v); }};
}

// A member written but not read back: `get` derives it.
template <typename Owner>
constexpr Field<Owner> derived(std::string_view key, int64_t (*get)(const Owner&)) {
  return {key, FieldType::Unsigned, get, nullptr};
}

// The field of `fields` named `key`, nullptr when none is.
template <typename Owner>
constexpr const Field<Owner>* find_field(std::type_identity_t<std::span<const Field<Owner>>> fields, std::string_view key) {
  for (const Field<Owner>& f : fields) {
    if (f.key == key) return &f;
  }
  return nullptr;
}

// deviceProperties[i]: "id" and "name" first, then these (Kineto's names).
namespace device {
inline constexpr std::string_view kId = "id";
inline constexpr std::string_view kName = "name";
}  // namespace device
inline constexpr Field<DeviceInfo> kDeviceFields[] = {
    field<&DeviceInfo::total_global_mem>("totalGlobalMem"),
    field<&DeviceInfo::compute_major>("computeMajor"),
    field<&DeviceInfo::compute_minor>("computeMinor"),
    field<&DeviceInfo::max_threads_per_block>("maxThreadsPerBlock"),
    field<&DeviceInfo::max_threads_per_multiprocessor>("maxThreadsPerMultiprocessor"),
    field<&DeviceInfo::regs_per_block>("regsPerBlock"),
    field<&DeviceInfo::warp_size>("warpSize"),
    field<&DeviceInfo::shared_mem_per_block>("sharedMemPerBlock"),
    field<&DeviceInfo::num_sms>("numSms"),
    field<&DeviceInfo::regs_per_multiprocessor>("regsPerMultiprocessor"),
    field<&DeviceInfo::shared_mem_per_block_optin>("sharedMemPerBlockOptin"),
    field<&DeviceInfo::shared_mem_per_multiprocessor>("sharedMemPerMultiprocessor"),
    // The same figure under the name HTA's occupancy code looks for.
    field<&DeviceInfo::shared_mem_per_multiprocessor>("maxSharedMemoryPerMultiProcessor"),
};

// profagent_cpu_times: {"start": {...}, "end": {...}}, each "ns" (Unix ns, the clock of
// baseTimeNanoseconds + ts) and then these.
namespace cpu_times {
inline constexpr std::string_view kStart = "start";
inline constexpr std::string_view kEnd = "end";
inline constexpr std::string_view kNs = "ns";
}  // namespace cpu_times
inline constexpr Field<CpuTimes> kCpuTimesFields[] = {
    field<&CpuTimes::process_ns>("process_ns"),
    field<&CpuTimes::system_busy_ns>("system_busy_ns"),
    field<&CpuTimes::system_idle_ns>("system_idle_ns"),
    field<&CpuTimes::cpus>("cpus"),
};

// profagent_overhead: what profagent itself cost during the window (collector/trace.h AgentCost).
inline constexpr Field<AgentCost> kOverheadFields[] = {
    field<&AgentCost::record_cost_ps>("record_cost_ps"),
    field<&AgentCost::hooked_calls>("hooked_calls"),
    field<&AgentCost::boundary_ns>("boundary_ns"),
    field<&AgentCost::cupti_call_cost_ps>("cupti_call_cost_ps"),
    field<&AgentCost::cupti_calls>("cupti_calls"),
    derived<AgentCost>("cupti_ns", [](const AgentCost& c) { return int64_t(c.cupti_ns()); }),
    derived<AgentCost>("program_ns", [](const AgentCost& c) { return int64_t(c.program_ns()); }),
    field<&AgentCost::agent_cpu_ns>("agent_cpu_ns"),
    field<&AgentCost::memory_bytes>("memory_bytes"),
    field<&AgentCost::slices_left_out>("slices_left_out"),
};

// profagent_window: the window's number, steps and bounds.
namespace window {
inline constexpr std::string_view kWindow = "window";
inline constexpr std::string_view kWholeRun = "whole_run";
inline constexpr std::string_view kFirstStep = "first_step";
inline constexpr std::string_view kLastStep = "last_step";
inline constexpr std::string_view kJoinWaitMs = "join_wait_ms";  // not read back
inline constexpr std::string_view kStartNs = "start_ns";         // Unix ns
inline constexpr std::string_view kEndNs = "end_ns";
}  // namespace window

// profagent_partial (partial_trace.h): how much of the window the partial trace holds.
namespace partial {
inline constexpr std::string_view kIntervals = "intervals";      // intervals appended
inline constexpr std::string_view kHostEvents = "host_events";  // host events they held
inline constexpr std::string_view kThroughNs = "through_ns";    // Unix ns every one had ended by
}  // namespace partial

// profagent_streamed's members.
namespace streamed {
inline constexpr std::string_view kSegments = "segments";
inline constexpr std::string_view kHostEvents = "host_events";        // written by the segments
inline constexpr std::string_view kDeviceRecords = "device_records";  // written by the segments
inline constexpr std::string_view kTailHostEvents = "tail_host_events";  // written at the window's end
inline constexpr std::string_view kTailDeviceRecords = "tail_device_records";
inline constexpr std::string_view kWrittenBeforeScopeEnd = "written_before_scope_end";
inline constexpr std::string_view kWrittenWithoutDeviceRecord = "written_without_device_record";
}  // namespace streamed

// profagent_memory: these figures, then "start" and "end" (per device [device, allocated,
// reserved]) and "live" (one row per listed live allocation, columns below).
uint64_t failed_allocations(const MemoryReport& memory, bool refused);  // memory_events.cpp
inline constexpr Field<MemoryReport> kMemoryFields[] = {
    derived<MemoryReport>("records", [](const MemoryReport& m) { return int64_t(m.records.size()); }),
    field<&MemoryReport::record_capacity>("record_capacity"),
    field<&MemoryReport::dropped_records>("dropped_records"),
    derived<MemoryReport>("failed_allocations", [](const MemoryReport& m) { return int64_t(failed_allocations(m, false)); }),
    derived<MemoryReport>("failed_calls", [](const MemoryReport& m) { return int64_t(failed_allocations(m, true)); }),
    field<&MemoryReport::unknown_frees>("unknown_frees"),
    field<&MemoryReport::null_frees>("null_frees"),
    field<&MemoryReport::live_count>("live_allocations"),
    field<&MemoryReport::live_bytes>("live_bytes"),
    field<&MemoryReport::bookkeeping_bytes>("bookkeeping_bytes"),
};
namespace memory {
inline constexpr std::string_view kStart = "start";
inline constexpr std::string_view kEnd = "end";
inline constexpr std::string_view kLive = "live";
}  // namespace memory
enum TotalsColumn : std::size_t { kTotalsDevice, kTotalsAllocated, kTotalsReserved, kTotalsColumns };
enum LiveColumn : std::size_t {
  kLiveAddress,
  kLiveBytes,
  kLiveUnixNs,      // when it was made
  kLiveDevice,
  kLiveKind,        // MemoryKind's number
  kLiveTid,
  kLiveApi,         // the allocating function
  kLiveCallUnixNs,  // the start of the allocating call when in the window, else 0
  kLiveCallSite,    // its call site, "" without stacks
  kLiveColumns,
};

}  // namespace profagent::exporters::schema
