// Trace: one frozen window, the only thing exporters read.
//
// The collector builds it when a window ends (or at exit): host events converted to ns,
// device records joined to the host events that issued them, names resolved, metadata and
// drop counters attached. Exporters never see raw buffers, ticks or CUPTI structs.
//
// Time: every *_ns field is nanoseconds on the agent clock (CLOCK_MONOTONIC domain);
// unix_ns = ns + Trace::unix_offset_ns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collector/event.h"
#include "collector/interned_name.h"

namespace profagent {

inline constexpr int64_t kNoIndex = -1;

// A runtime function's name without the per-thread default stream suffix (`_ptsz`, `_ptds`):
// `cudaMemcpyAsync_ptsz` -> `cudaMemcpyAsync`. Other names come back unchanged. Host records
// keep the name the program called; exporters use this to find the API it implements.
inline std::string_view without_stream_suffix(std::string_view name) noexcept {
  for (std::string_view suffix : {"_ptsz", "_ptds"}) {
    // Not ends_with(): CUDA sources of the tests include this header as C++17.
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
      return name.substr(0, name.size() - suffix.size());
    }
  }
  return name;
}

// Laid out with no padding between fields (104 bytes, result as narrow as HostEvent's). A window's
// joined host records are the exit flush's largest fresh memory (each page the kernel zeroes).
struct HostRecord {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t id = 0;             // host event id (the external correlation id pushed)
  uint32_t pid = 0;
  uint32_t tid = 0;            // OS thread id
  InternedName name;           // API, operator or range name; for Launch the API name
  InternedName kernel_name;    // Launch: demangled kernel name from registration, if known
  uint64_t arg0 = 0;           // payload as in event.h
  uint64_t arg1 = 0;
  uint64_t external_id = 0;    // innermost enclosing Operator/Range id; else own id
  int64_t parent = kNoIndex;   // index of the innermost enclosing host record on the thread
  uint32_t correlation = 0;    // CUPTI correlation id of this call (0 if none known)
  uint32_t stack = 0;          // PROFAGENT_WITH_STACK: 1 + index into Trace::stacks.stacks; 0 none
  int32_t collective = -1;     // Operator of an NCCL call: index into Trace::collectives
  uint32_t annotation = 0;     // NVTX range or torch operator: 1 + index into Trace::annotations
  uint32_t shapes = 0;         // Operator with record_shapes: 1 + index into Trace::shapes; 0 none
  int16_t result = 0;          // the real call's return value, clamped as in HostEvent (event.h)
  EventKind kind = EventKind::Runtime;
  uint8_t flags = 0;           // EventFlags
};
static_assert(sizeof(HostRecord) == 104 || sizeof(void*) != 8, "host records stay unpadded");

// PROFAGENT_RECORD_SHAPES: an operator's inputs, kept aside so that host records stay small
// (most records are calls, which have none).
struct InputShapes {
  std::vector<std::vector<int64_t>> dims;  // one list per input ([] for a scalar)
  std::vector<std::string> types;          // one type per input
};

// What an NVTX range or mark, or a torch operator named by torch's emit_nvtx, said beyond its
// name (hooks/nvtx): kept aside so that host records stay small for everyone else.
struct Annotation {
  std::string domain;           // NVTX domain ("" for the default domain)
  uint32_t category = 0;        // NVTX category (0: none)
  std::string category_name;    // as named by nvtxNameCategory / nvtxDomainNameCategory
  uint32_t color = 0;           // ARGB, valid when has_color
  bool has_color = false;
  std::string payload;          // the decoded payload as a JSON value ("" none)
  uint32_t start_tid = 0;       // start/end ranges: the thread that started it (tid: the ender's)
  // torch operators: torch's sequence number (-1 none), RecordFunction handle, and per input
  // the (op handle, output index) of the operator that produced it ((0,-1): not an op's output).
  int64_t sequence = -1;
  uint64_t op_id = 0;
  std::vector<std::pair<uint64_t, int64_t>> input_op_ids;
};

// One symbolised frame of a call stack.
struct StackFrame {
  bool python = false;   // a Python frame: file/line/function are the Python source's
  uint64_t address = 0;  // native: the return address (0 for Python frames)
  std::string function;  // demangled C++ name, or the Python function ("" when unknown)
  std::string module;    // native: the shared object's path (the executable's too)
  std::string file;      // source file ("" without debug info)
  int line = 0;          // 0 without debug info
};

// The window's distinct call stacks, each written once (exporters refer to them by index).
struct CallStacks {
  std::vector<StackFrame> frames;                 // distinct frames
  std::vector<std::vector<uint32_t>> stacks;      // frame indexes, innermost first
  bool empty() const noexcept { return stacks.empty(); }
};

enum class DeviceKind : uint8_t { Kernel, Memcpy, Memset, Sync, DriverApi };

// What each DeviceKind is, in one table, so that code asks the table instead of listing kinds:
// a new kind (a communication library's collectives, say) is one row here.
struct DeviceKindInfo {
  // Work the device does (a kernel, a copy, a set): it occupies the device's timeline, has a
  // host call that issued it, and counts as device time. Sync and driver-call records do not.
  bool work;
  // The kind of host call that issues work (a kernel: a launch); Runtime for the others.
  EventKind issued_by;
};
inline constexpr DeviceKindInfo kDeviceKinds[] = {
    /* Kernel    */ {true, EventKind::Launch},
    /* Memcpy    */ {true, EventKind::Memcpy},
    /* Memset    */ {true, EventKind::Memset},
    /* Sync      */ {false, EventKind::Runtime},
    /* DriverApi */ {false, EventKind::Runtime},
};
static_assert(std::size(kDeviceKinds) == size_t(DeviceKind::DriverApi) + 1, "one row per DeviceKind");
inline constexpr const DeviceKindInfo& about(DeviceKind kind) noexcept { return kDeviceKinds[size_t(kind)]; }

struct DeviceRecord {
  DeviceKind kind = DeviceKind::Kernel;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t device = 0;
  uint32_t context = 0;
  uint32_t stream = 0;
  uint32_t correlation = 0;     // CUPTI correlation id
  uint64_t external_id = 0;     // as HostRecord::external_id of the launching host record
  int64_t host = kNoIndex;      // index into Trace::host of the call that issued it
  InternedName name;            // kernel: demangled; memcpy: "Memcpy HtoD (Pageable -> Device)"
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  uint32_t registers_per_thread = 0;
  uint32_t shared_memory = 0;   // static + dynamic
  uint64_t bytes = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
  uint64_t queued_ns = 0;       // 0 when unknown
  // Sync records: what was waited on.
  uint32_t sync_type = 0;       // CUpti_ActivitySynchronizationType
  uint32_t event_id = 0;
  // DriverApi: CUPTI driver API record of a launch no hook saw (cuLaunchKernel from a library).
  uint32_t tid = 0;
  uint32_t pid = 0;
  uint32_t cbid = 0;
};

struct DeviceInfo {
  uint32_t id = 0;
  std::string name;
  uint64_t total_global_mem = 0;
  int compute_major = 0;
  int compute_minor = 0;
  int max_threads_per_block = 0;
  int max_threads_per_multiprocessor = 0;
  int regs_per_block = 0;
  int regs_per_multiprocessor = 0;
  int warp_size = 0;
  uint64_t shared_mem_per_block = 0;
  uint64_t shared_mem_per_multiprocessor = 0;
  uint64_t shared_mem_per_block_optin = 0;
  int num_sms = 0;
  uint64_t reserved_shared_mem_per_block = 0;  // held back by the driver in every block (sm_80+)
};

struct StepSpan {
  uint64_t number = 0;          // step number as counted by the schedule (from 0)
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

struct DropCounters {
  uint64_t host_events = 0;     // events dropped because a thread buffer was full
  uint64_t device_records = 0;  // CUPTI reported dropped records / no buffer available
  // Device work the window issued whose record had not come when its join stopped waiting
  // (PROFAGENT_WINDOW_WAIT_MS): counted here, and dropped when it comes.
  uint64_t late_device_records = 0;
  uint64_t unmatched_device_records = 0;  // no host event found for their correlation
  // CUDA graph replays (collector/graph_captures.h): device records whose node's capture is
  // unknown (made while nothing was recorded), which keep their cudaGraphLaunch's External id;
  // and graph nodes the capture-time map could not keep so far in the process (it was full).
  uint64_t graph_replays_without_capture = 0;
  uint64_t graph_nodes_not_kept = 0;
  // Host event memory asked for (PROFAGENT_BUFFER_MB) and reserved. Less reserved means an
  // address-space limit (RLIMIT_AS) is why host events were dropped, not the buffer size.
  uint64_t host_buffer_requested_bytes = 0;
  uint64_t host_buffer_reserved_bytes = 0;
  bool address_space_limited() const noexcept {
    return host_buffer_reserved_bytes < host_buffer_requested_bytes;
  }
  // Agent stderr lines not printed before the files were written: fd 2 closed or replaced by
  // another file (the program's data), a broken pipe (filled in by the agent).
  uint64_t log_lines = 0;
  bool stderr_replaced = false;  // fd 2 is no longer the process's stderr: nothing more is printed
  // dlopen calls the agent could not make as their caller (hooks/call_as_caller.h): for those,
  // $ORIGIN and RUNPATH were resolved as the agent's.
  uint64_t plain_dlopen_calls = 0;
  // Operators recorded without their input shapes (PROFAGENT_RECORD_SHAPES): the shape store
  // was full, or an argument did not fit a record (collector/shapes.h).
  uint64_t shape_records = 0;
  // NCCL calls recorded without their communication arguments so far in the process: the side
  // store of calls not yet joined was full (collector/collectives.h).
  uint64_t collective_args = 0;
  // PROFAGENT_WITH_STACK: stacks the unwinder could not follow to the thread's first frame (the
  // event has the frames found), and events left without a stack (the stack table was full, or
  // a window cut fell between a call and its stack tag).
  uint64_t stacks_truncated = 0;
  uint64_t stacks_lost = 0;
  // Python frames left out of stacks so far in the process (python_frames.h counters: a frame
  // that failed the layout checks, code objects after the intern table filled, captures while
  // support was still being decided).
  uint64_t python_frames_lost = 0;
  // PROFAGENT_STEP_ON=time:MS: periods the timer thread skipped so far in the process because
  // it woke too late (agent/step_timer.h): no step was marked for them.
  uint64_t timer_periods_missed = 0;
  // A window whose join and writing would not fit in the memory its limits leave (`ulimit -v`,
  // `ulimit -d`: collector/memory_room.h): its latest host events and device records are left
  // out, so that what fits is written. The room seen and what writing all would have needed.
  uint64_t left_out_host_events = 0;
  uint64_t left_out_device_records = 0;
  uint64_t memory_room_bytes = 0;
  uint64_t memory_needed_bytes = 0;
  // Size limits the user set (collector/window_limits.h): host events shorter than
  // PROFAGENT_MIN_DURATION_US left out, and the host events and device records after the
  // window's first PROFAGENT_MAX_EVENTS host events.
  uint64_t shorter_than_min_duration = 0;
  uint64_t over_max_events = 0;
  uint64_t over_max_events_device_records = 0;
};

// Why host events were dropped, for the trace and the stderr line: "" (none were),
// "address space limit" or "buffers full".
inline const char* host_drop_cause(const DropCounters& drops) noexcept {
  if (drops.host_events == 0) return "";
  return drops.address_space_limited() ? "address space limit" : "buffers full";
}

struct ProcessInfo {
  uint32_t pid = 0;
  std::string host_name;
  std::string exe_name;         // basename of /proc/self/exe
  std::string command_line;
  int rank = 0;                 // launcher variables (process_info.h), else the first NCCL communicator
  int world_size = 1;
  int local_rank = 0;           // LOCAL_RANK / SLURM_LOCALID / OMPI_COMM_WORLD_LOCAL_RANK / MPI_LOCALRANKID
  std::string backend;          // "nccl" once a communicator was made, else ""
  bool rank_from_environment = false;  // a launcher variable named the rank
  std::vector<std::pair<uint32_t, std::string>> thread_names;  // tid -> name
};

// ---- memory (PROFAGENT_PROFILE_MEMORY) ----------------------------------------------------
// One allocation, free or failed allocation, with the totals of its device right after it.
struct MemoryRecord {
  uint64_t ns = 0;
  uint64_t address = 0;
  int64_t bytes = 0;              // > 0 allocated, < 0 freed; failed: the size asked for
  int64_t total_allocated = 0;    // live allocations of the device after this record
  int64_t total_reserved = 0;     // what the device's pools and allocations hold after it
  uint64_t event_id = 0;          // the hooked call's host event id (0: none recorded)
  int64_t host = kNoIndex;        // index into Trace::host of that call, if in this window
  uint64_t allocated_ns = 0;      // a free: when the freed allocation was made (0: unknown)
  uint64_t allocation = 0;        // the ledger's number of the allocation made or freed
  uint32_t tid = 0;
  int32_t device = kHostDevice;
  MemoryKind kind = MemoryKind::Device;
  bool failed = false;            // an allocation that returned an error
  int32_t error = 0;              // failed: the call's error; out of memory unless refused
  bool refused = false;           // failed for another reason than memory (already registered)
  bool from_device = false;       // from the device's allocation records (a driver-level
                                  // allocation no hook saw: event_id 0, tid 0)
  bool allocated_by_device = false;  // a free: allocated_ns is ns already (device-booked)
  uint32_t correlation = 0;       // from_device: the CUPTI correlation id of the driver call
  uint32_t call_site = 0;         // read back from a trace: 1 + index into MemoryReport::call_sites
};

struct MemoryTotals {
  int32_t device = kHostDevice;
  int64_t allocated = 0;
  int64_t reserved = 0;
};

// An allocation live when the window ended (at exit: a leak).
struct LiveAllocation {
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t ns = 0;                // when it was made
  uint64_t event_id = 0;          // the call that made it (links to Trace::host when in the window)
  uint32_t tid = 0;               // 0: unknown (made outside windows by a thread that never recorded)
  int32_t device = kHostDevice;
  MemoryKind kind = MemoryKind::Device;
  std::string api;                // the allocating function ("driver" when no hook saw it)
  std::string call_site;          // read back from a trace: the allocating call's call site
  // A streamed window's tail: the allocating call's start when an earlier segment wrote that
  // call (it is not among this Trace's host records); 0 otherwise.
  uint64_t call_ns = 0;
};

inline constexpr size_t kMaxLiveListed = 10000;  // live allocations listed per window

struct MemoryReport {
  bool enabled = false;                 // PROFAGENT_PROFILE_MEMORY was on
  std::vector<MemoryRecord> records;    // sorted by ns
  std::vector<MemoryTotals> start;      // per device with any memory, at the window's start
  std::vector<MemoryTotals> end;        // ... and at its end
  std::vector<LiveAllocation> live;     // largest first, at most kMaxLiveListed
  uint64_t live_count = 0;              // all live allocations (listed or not)
  uint64_t live_bytes = 0;
  uint64_t unknown_frees = 0;           // frees of pointers never allocated (or already freed)
  uint64_t null_frees = 0;              // frees of a null pointer (a no-op)
  uint64_t dropped_records = 0;         // records beyond record_capacity (totals stay exact)
  uint64_t record_capacity = 0;         // records one window keeps at most
  uint64_t bookkeeping_bytes = 0;       // what the agent's allocation bookkeeping holds now
  // Read back from a trace (profagent report): the call sites its memory events name. The
  // agent's own records find theirs through their call's stack instead, but for a streamed
  // window's tail whose calls earlier segments wrote (agent/streamed_table.h).
  std::vector<std::string> call_sites;
};

// /proc CPU times read at a window's start and end: the Device Summary's CPU utilisation.
struct CpuTimes {
  bool valid = false;             // read (Linux /proc was readable)
  uint64_t ns = 0;                // agent clock when read
  uint64_t process_ns = 0;        // this process's user + system time (/proc/self/stat)
  uint64_t system_busy_ns = 0;    // all CPUs' time not idle (/proc/stat "cpu" line)
  uint64_t system_idle_ns = 0;    // all CPUs' idle + iowait time
  uint32_t cpus = 0;              // online CPUs
};

// One piece of the agent's own work (joining a window, writing its files, polling the device,
// measuring the record cost): drawn as a slice on the trace's profagent track.
struct AgentSlice {
  std::string name;             // "join window", "write window 2", "poll device", ...
  uint32_t tid = 0;             // the thread that did it (an agent thread, or the exiting one)
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// What profagent itself cost during the window (agent/agent_cost.h measures it; the overhead
// line under the table, exporters/summaries/overhead_line.h, says it).
struct AgentCost {
  bool measured = false;        // false: a trace another tool wrote, or one from before this
  uint64_t record_cost_ps = 0;  // one recorded call's cost to its thread, measured at start-up
  uint64_t hooked_calls = 0;    // the window's host records and the host events it lost
  uint64_t boundary_ns = 0;     // time the program's threads were held at step boundaries
  uint64_t agent_cpu_ns = 0;    // CPU time of the agent's own threads between the window's edges
  uint64_t memory_bytes = 0;    // host event buffers committed and the window's joined form
  uint64_t slices_left_out = 0; // agent work beyond kMaxAgentSlices: in agent_cpu_ns, not drawn
  // CUPTI's own work inside each traced CUDA call (collector/cupti_call_cost.h): its cost per
  // call, measured once (0: not measured, or no device tracing), and the window's CUDA calls
  // (counted by the join, also when PROFAGENT_ACTIVITIES leaves the host side out).
  uint64_t cupti_call_cost_ps = 0;
  uint64_t cupti_calls = 0;
  std::vector<AgentSlice> slices;
  uint64_t cupti_ns() const noexcept { return cupti_calls * cupti_call_cost_ps / 1000; }
  // Time on the program's threads: each hooked call's recording, CUPTI's work in the CUDA
  // calls, and the boundaries.
  uint64_t program_ns() const noexcept { return hooked_calls * record_cost_ps / 1000 + cupti_ns() + boundary_ns; }
};
inline constexpr std::size_t kMaxAgentSlices = 10000;  // per window

// A window written while it was recorded (collector/segment_stream.h): what its segments
// wrote before the window ended. The Trace of such a window holds its tail only.
struct StreamedWindow {
  uint64_t segments = 0;              // 0: the window was joined whole
  // Host events and device records the segments were given (counted as they are taken); the
  // agent sets what its trace file holds instead (they differ only where an append failed).
  uint64_t host_events = 0;
  uint64_t device_records = 0;
  // Events held for an open scope beyond StreamLimits::held_events, written before that scope
  // ended: the scope does not enclose them in the trace (their External id is their own).
  uint64_t written_before_scope_end = 0;
  // Launches, copies and sets written without their device record after waiting
  // StreamLimits::device_wait_segments segments (also counted in late_device_records).
  uint64_t written_without_device_record = 0;
  // In a segment: every host record of the window that is not in it or an earlier segment
  // (steps and stack tags aside) starts at or after complete_before_ns (the recording threads'
  // marks, thread_buffer.h TakenThread); complete_but_scopes_before_ns is the same, not waiting
  // for the scopes open (and the events held for them), which may stay open for long.
  uint64_t complete_before_ns = 0;
  uint64_t complete_but_scopes_before_ns = 0;
};

struct Trace {
  uint32_t window = 0;          // 1-based window number
  StepSpan first_step;          // steps covered (both 0 when the whole run is one window)
  StepSpan last_step;
  bool whole_run = true;        // no schedule: the whole run is this window
  uint64_t start_ns = 0;        // window start/end on the agent clock
  uint64_t end_ns = 0;
  uint64_t join_wait_ns = 0;    // how long the join waited for the window's device work
  int64_t unix_offset_ns = 0;   // add to an agent-clock ns value to get Unix epoch ns
  ProcessInfo process;
  std::vector<DeviceInfo> devices;
  std::vector<HostRecord> host;      // sorted by (tid, start_ns)
  std::vector<CollectiveArgs> collectives;  // of NCCL calls: HostRecord::collective refers to these
  std::vector<DeviceRecord> device;  // sorted by start_ns
  std::vector<StepSpan> steps;       // recorded steps (ProfilerStep#N ranges)
  std::vector<Annotation> annotations;  // HostRecord::annotation refers to these
  std::vector<InputShapes> shapes;      // HostRecord::shapes refers to these
  // Device stream id -> the name the program gave its stream (nvtxNameCudaStream), sorted.
  std::vector<std::pair<uint32_t, std::string>> stream_names;
  CallStacks stacks;                 // HostRecord::stack and MemoryRecord::stack refer to these
  MemoryReport memory;
  CpuTimes cpu_start;           // at the window's start and end (Device Summary)
  CpuTimes cpu_end;
  DropCounters drops;
  AgentCost agent_cost;
  StreamedWindow streamed;
  std::vector<std::pair<std::string, std::string>> config;  // effective PROFAGENT_* config
  std::string device_backend;   // "cupti", "none", ... and why, e.g. "none (CUPTI refused: ...)"
  std::string cupti_version;
  int cuda_runtime_version = 0;
  int cuda_driver_version = 0;
};

// A record's input shapes (nullptr: none recorded), and giving a record its shapes.
inline const InputShapes* shapes_of(const Trace& trace, const HostRecord& record) noexcept {
  return record.shapes == 0 || record.shapes > trace.shapes.size() ? nullptr : &trace.shapes[record.shapes - 1];
}
inline void set_shapes(Trace& trace, HostRecord& record, InputShapes shapes) {
  trace.shapes.push_back(std::move(shapes));
  record.shapes = uint32_t(trace.shapes.size());
}

}  // namespace profagent
