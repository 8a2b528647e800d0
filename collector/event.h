// The host event: what every hook stores, by value, into its thread's buffer.
//
// Fixed size (48 bytes), trivially copyable, no pointers to owned memory: the hot path is a
// store (no locks, no strings, no syscalls). Strings are interned NameIds; timestamps are raw
// agent clock ticks, converted to nanoseconds only when a window is frozen.
#pragma once

#include <cstdint>
#include <type_traits>

namespace profagent {

using NameId = uint32_t;
inline constexpr NameId kNoName = 0;

// What a host event is. The payload words arg0/arg1 mean different things per kind.
enum class EventKind : uint8_t {
  Launch = 1,  // kernel launch of any form. arg0 = host function / cudaKernel_t, arg1 = stream
  GraphLaunch, // cudaGraphLaunch. arg0 = graph exec, arg1 = stream; flags: kFlagGraphWithoutWork
  Memcpy,      // arg0 = bytes, arg1 = stream; flags & kMemcpyKindMask = cudaMemcpyKind
  Memset,      // arg0 = bytes, arg1 = stream
  Alloc,       // arg0 = bytes, arg1 = returned pointer (0 on failure)
  Free,        // arg0 = pointer
  Sync,        // device / stream / event synchronisation, cudaStreamWaitEvent. arg1 = handle
  Runtime,     // any other hooked runtime call (event record, profiler start/stop, ...)
  Operator,    // a vendor operator (DIOPI). arg0 = shape record index + 1, or 0
  Range,       // a user range (profagent_range_push/pop, NVTX)
  Step,        // ProfilerStep#N. arg0 = step number
  // Not a call: the call stack of the event with the same id, recorded right after it on the
  // same thread, only when stacks are on (PROFAGENT_WITH_STACK), so that events stay 48 bytes
  // for everyone. arg0 = interned stack id (collector/stack_table.h). The join folds it into
  // its event's record.
  StackTag,
};

// Operators, user ranges and steps: the host records that enclose others (and that device work
// is attributed to as self time, torch's way).
constexpr bool is_scope(EventKind kind) {
  return kind == EventKind::Operator || kind == EventKind::Range || kind == EventKind::Step;
}

// A CUDA runtime call (hooked, recorded by CUPTI's callback, or a DRIVER record's): what CUPTI
// does its own work in when the device is traced. Not operators, ranges, steps or stack tags.
constexpr bool is_cuda_call(EventKind kind) { return kind >= EventKind::Launch && kind <= EventKind::Runtime; }

// On equal times the wider scope is the parent: a step encloses a range encloses an operator
// encloses a call. The join nests records by it, and the report rebuilds that nesting from a
// trace file by the same rule.
constexpr int nesting_rank(EventKind kind) {
  switch (kind) {
    case EventKind::Step: return 0;
    case EventKind::Range: return 1;
    case EventKind::Operator: return 2;
    default: return 3;
  }
}

enum EventFlags : uint8_t {
  kMemcpyKindMask = 0x07,  // cudaMemcpyKind for Memcpy events
  // GraphLaunch events (these bits mean the copy kind of Memcpy events only): the graph has
  // no kernel, copy or set node, so its launch yields no device record (hooks/graph_work.h).
  kFlagGraphWithoutWork = 0x01,
  // Operator events: an NCCL call; arg1 is the handle of its communication arguments
  // (collector::record_collective, api.h), which the join turns into a CollectiveArgs.
  kFlagCollective = 0x02,   // (an Operator bit: Range events use 0x02 for start/end below)
  // Range events from NVTX (hooks/nvtx): these bits mean the copy kind of Memcpy events only.
  kFlagRangeMark = 0x01,      // an NVTX mark: an instant (start == end)
  kFlagRangeStartEnd = 0x02,  // an NVTX start/end range: it may end on another thread than it began
  // Range and Operator events whose arg0/arg1 say more than the name (hooks/nvtx):
  // Range: arg0 = NVTX domain NameId | category << 32, arg1 = handle of its details words
  // (collector/annotations.h); Operator: a torch operator named by torch's emit_nvtx,
  // arg0 = shape record as for DIOPI operators, arg1 = handle of its operator words.
  kFlagAnnotated = 0x04,
  kFlagAsync = 0x08,       // the call only enqueued work (…Async forms, launches)
  kFlagCaptured = 0x10,    // issued while its stream was being captured into a graph
  kFlagFailed = 0x20,      // the real call returned an error (result holds it)
  // A driver API call (cuLaunchKernel, cuMemcpy...) that no hook saw: recorded by the CUPTI
  // callback (with kFlagCallback), or added at the join from the device backend's DRIVER
  // records (a library bypassing the runtime). Never set by hooks.
  kFlagDriverApi = 0x40,
  // Recorded by the CUPTI callback (collector/cupti_callbacks.h), not by a hook: a call the
  // hooks cannot interpose (driver API, a statically linked runtime). arg0 holds CUPTI's
  // correlation id of the call, which the device records it enqueued carry; arg1 the byte
  // count of a copy, set or allocation (the join moves it to arg0, where hooks put it).
  kFlagCallback = 0x80,
};

// Where an allocation lives (PROFAGENT_PROFILE_MEMORY): device memory from cudaMalloc and its
// pitched/3D forms, stream-ordered memory from a pool (cudaMallocAsync, cudaMallocFromPoolAsync),
// managed memory, page-locked host memory the runtime allocated (cudaMallocHost,
// cudaHostAlloc) or pinned in place (cudaHostRegister).
enum class MemoryKind : uint8_t { Device = 0, Pool, Managed, Pinned, Registered };
// The device of host memory in allocation records (torch's CPU device id is -1 too).
inline constexpr int32_t kHostDevice = -1;
inline bool is_host_memory(MemoryKind kind) {
  return kind == MemoryKind::Pinned || kind == MemoryKind::Registered;
}

// The communication arguments of one NCCL call or group, what Kineto writes on a collective's
// CPU op and its kernel (`Collective name`, `In msg nelems`, ...), plus the communicator's
// hash (equal on every rank of the communicator) and the call's sequence number on it, which
// together name one collective across ranks. Strings are static (the hooks' literals).
struct CollectiveArgs {
  const char* collective = "";  // "allreduce", "broadcast", ..., "coalesced" for a group
  const char* dtype = "";       // "Float", "Half", ... (torch's scalar type names)
  uint64_t in_nelems = 0;
  uint64_t out_nelems = 0;
  uint64_t bytes = 0;           // what this rank sends (in elements times the type size)
  uint64_t comm_hash = 0;
  uint64_t seq = 0;             // per communicator, from 0; a group counts once per communicator
  int32_t group_size = 0;       // ranks of the communicator
  int32_t rank = -1;            // this process's rank in it
  int32_t root = -1;            // broadcast, reduce
  int32_t peer = -1;            // send, recv
  int32_t calls = 1;            // a group: the calls it holds
  int32_t world_communicator = 0;  // 1: its ranks are 0..group_size-1 of the job
};

struct HostEvent {
  uint64_t start;   // agent clock ticks (collector/clock.h)
  uint64_t end;
  uint64_t id;      // process-unique; pushed as the CUPTI external correlation id
  uint64_t arg0;
  uint64_t arg1;
  NameId name;      // API, operator or range name
  int16_t result;   // the real call's return value (cudaError_t, diopiError_t), clamped
  uint8_t kind;     // EventKind
  uint8_t flags;    // EventFlags
};

static_assert(sizeof(HostEvent) == 48, "host events must stay 48 bytes (the buffer budget per event)");
static_assert(std::is_trivially_copyable_v<HostEvent>);

}  // namespace profagent
