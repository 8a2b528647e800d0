// The collector API: all that hooks/ may see, kept narrow. Every function is noexcept
// and safe to call from any thread, before or after the agent is initialised, and from a
// forked child. Unit tests drive the collector through exactly this header.
//
// A runtime hook does:
//   if (no hook_work()) return real(args...);  // idle: one load, then the real function
//   cuda_in_use();                           // first CUDA use starts the device backend
//   RuntimeGuard guard;                      // per-thread re-entrancy guard
//   if (!guard.should_record()) return real(args...);
//   id = new_event_id(); start = now();
//   push_external_id(id);  result = real(args...);  pop_external_id();
//   end = now(); if (HostEvent* e = begin_record()) { ...fill e...; commit_record(); }
// (hooks/hook.h wraps this in one template.) The per-call steps are inline below, always: tests/bench
// counted ~50 instructions of call frames when they were out of line, and GCC stops inlining
// them by itself once a hook has two recording paths (with and without stacks).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include "collector/cpu_counter.h"
#include "collector/event.h"

namespace profagent::collector {

// ---- recording state -------------------------------------------------------------------
// What the hooks should do right now. Written by the session (step schedule), read with a
// relaxed load on every hooked call.
enum class RecordState : uint8_t {
  Off = 0,        // not recording (idle step, agent disabled, after the final flush)
  Warmup = 1,     // recording, data will be discarded
  Record = 2,     // recording into the current window
};
extern std::atomic<uint8_t> g_record_state;
extern std::atomic<bool> g_device_tracing;  // true while a device backend wants external ids

inline bool recording() noexcept {
  return g_record_state.load(std::memory_order_relaxed) != uint8_t(RecordState::Off);
}

// Everything that makes a hook do more than forward its call, in one byte: the not-recording
// path of every hook is this load, a test and a jump to the real function (at most 3 ns).
// kHookFirstUse is set until the hooks have run their first-use steps (hooks/hook.h clears
// it); the session keeps kHookRecording equal to recording(); step markers set kHookMarking.
// kHookStacks goes with kHookRecording while call stacks are on (PROFAGENT_WITH_STACK): a
// recording hook tells the two cases apart by the byte it reads anyway, so stacks off add no
// instruction to its path.
enum HookWorkBits : uint8_t { kHookRecording = 1, kHookMarking = 2, kHookFirstUse = 4, kHookStacks = 8 };
extern std::atomic<uint8_t> g_hook_work;
inline uint8_t hook_work() noexcept { return g_hook_work.load(std::memory_order_relaxed); }

// ---- re-entrancy guard -----------------------------------------------------------------
// Per-thread words in initial-exec TLS (no thread_local objects: their destructors run late and
// in surprising orders, and general-dynamic TLS may allocate on first touch).
// - tls_agent_busy: the agent itself (its threads, CUPTI callbacks, its own CUDA/DIOPI calls)
//   is running on this thread: every hook passes straight through.
// - tls_runtime_depth: CUDA runtime hooks active on this thread (16 bits: see the layout note
//   below). Only the outermost runtime
//   call is recorded, so one runtime function reaching another is one event.
// Operators and ranges nest freely (a DIOPI operator calling another is two events), and a
// runtime call inside an operator is recorded: that is how kernels get their operator.
//
// The guard heals itself. A thread that leaves a hooked call without returning from it
// (a signal handler that siglongjmps out of a blocking cudaStreamSynchronize) never runs the
// guard's destructor: its depth would stay raised and every later call of the thread go
// unrecorded, silently. So the outermost guard also keeps tls_runtime_sp, the program's stack
// pointer at the call into the hook (the hook's CFA, noted by the hook just before its guard:
// the same for every hook called from one function of the program, whatever the hook's own
// frame size). A nested call — the runtime reaching another hooked function — always enters
// below that frame (the stack grows down), so a guard entered at or above it proves the old
// frame is gone: the depth goes back to 0 for good. Not detected: after the jump, the thread's
// next calls come from deeper down the stack than the abandoned one (they stay unrecorded until
// a call from at least as high up heals the guard). A call from a signal handler on an
// alternate stack mapped above the thread's stack would be taken for outermost (then the
// interrupted call's own end leaves a depth that the thread's next call heals the same way).
// The order of these declarations, reversed, is the layout GCC gives the words: the 1- and
// 2-byte words share one 8-byte slot with tls_agent_busy, so the agent's static TLS block
// stays under its 64-byte budget (it may be dlopen'ed as an injection library into a process
// whose static TLS surplus is small; tests/preload/check_exports.py checks the size).
extern __thread uint32_t tls_agent_busy __attribute__((tls_model("initial-exec")));
// 1 while the CUPTI callback records a call on this thread (collector/cupti_callbacks.cpp):
// calls reported inside it are part of it and are never recorded themselves, so it never nests.
extern __thread uint8_t tls_callback_depth __attribute__((tls_model("initial-exec")));
// A hook is inside its real function on this thread without a RuntimeGuard (first calls,
// step markers while not recording): the CUPTI callback must not record that call again.
// Hooks nest only when a runtime reaches another hooked export, a few levels at most.
extern __thread uint8_t tls_hook_forwarding __attribute__((tls_model("initial-exec")));
extern __thread uint16_t tls_runtime_depth __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t tls_runtime_sp __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t tls_hook_entry __attribute__((tls_model("initial-exec")));

class HookForwarding {  // what hooks hold around a real call they forward on their slow path
 public:
  HookForwarding() noexcept { ++tls_hook_forwarding; }
  ~HookForwarding() { --tls_hook_forwarding; }
  HookForwarding(const HookForwarding&) = delete;
  HookForwarding& operator=(const HookForwarding&) = delete;
};

// Called by the hook (inlined into the exported function) with __builtin_dwarf_cfa(): the
// program's stack pointer at the call. Taken by the next RuntimeGuard of the thread.
inline void note_hook_entry(void* cfa) noexcept { tls_hook_entry = reinterpret_cast<uintptr_t>(cfa); }

__attribute__((always_inline)) inline uintptr_t stack_pointer() noexcept {
#if defined(__x86_64__)
  uintptr_t sp;
  asm volatile("mov %%rsp, %0" : "=r"(sp));
  return sp;
#elif defined(__aarch64__)
  uintptr_t sp;
  asm volatile("mov %0, sp" : "=r"(sp));
  return sp;
#else
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
#endif
}

class RuntimeGuard {  // wrap every CUDA runtime hook
 public:
  RuntimeGuard() noexcept {
    uintptr_t entry = tls_hook_entry;  // the hook's note, else (unit tests) our own frame
    tls_hook_entry = 0;
    if (entry == 0) entry = stack_pointer();
    if (tls_runtime_depth != 0 && entry >= tls_runtime_sp) tls_runtime_depth = 0;  // stale: heal
    if (tls_runtime_depth == 0) tls_runtime_sp = entry;
    ++tls_runtime_depth;
  }
  ~RuntimeGuard() { --tls_runtime_depth; }
  RuntimeGuard(const RuntimeGuard&) = delete;
  RuntimeGuard& operator=(const RuntimeGuard&) = delete;
  bool should_record() const noexcept { return outermost_of_program() && recording(); }
  // The program's own call, not one runtime function reaching another nor the agent's.
  bool outermost_of_program() const noexcept { return tls_runtime_depth == 1 && tls_agent_busy == 0; }
};

inline bool operator_should_record() noexcept {  // DIOPI operators, user ranges
  return tls_agent_busy == 0 && tls_runtime_depth == 0 && recording();
}

class AgentBusy {  // the agent calls CUDA, CUPTI or DIOPI itself: do not record that
 public:
  AgentBusy() noexcept { ++tls_agent_busy; }
  ~AgentBusy() { --tls_agent_busy; }
  AgentBusy(const AgentBusy&) = delete;
  AgentBusy& operator=(const AgentBusy&) = delete;
};

// ---- clock ----------------------------------------------------------------------------
// Raw agent clock ticks (the CPU's counter where its rate is constant: TSC, CNTVCT_EL0; else
// CLOCK_MONOTONIC ns). Converted to nanoseconds when a window is frozen (collector/clock.h).
// Inline: the TSC read is most of a recorded call's cost already (11.7 ns on the AMD EPYC
// the benchmarks ran on); a call frame around it should not add more.
extern std::atomic<uint8_t> g_clock_is_cpu_counter;  // set once the counter is chosen (clock.cpp)
uint64_t now_slow() noexcept;  // source not decided yet, or CLOCK_MONOTONIC
inline uint64_t now() noexcept {
  if (cpu_counter::kPresent &&
      __builtin_expect(g_clock_is_cpu_counter.load(std::memory_order_relaxed) != 0, 1)) {
    return cpu_counter::read();
  }
  return now_slow();
}

// ---- events ---------------------------------------------------------------------------
// A process-unique id (< 2^53, so JSON readers keep it exact). No atomics: thread slot in
// the high bits, a per-thread counter in the low bits.
//
// The writer's position in this thread's buffer: the leading fields of the thread's
// ThreadBuffer (collector/thread_buffer.h), reached through one initial-exec TLS word so the
// hot path is inline without the hooks seeing the registry. Only the owning thread touches it.
struct EventCursor {
  HostEvent* slots = nullptr;                  // the current chunk's events
  std::atomic<uint32_t>* committed = nullptr;  // the chunk's published count (release)
  uint32_t used = 0;                           // events written to the chunk (== *committed)
  uint32_t capacity = 0;                       // 0 until the thread has a chunk
  uint64_t id_base = 0;                        // thread slot << 32
  uint64_t id_counter = 0;
  // Scopes (operators, ranges) open on this thread, and when the outermost began: a streamed
  // window (collector/segment_stream.h) holds back the events an open scope may still enclose.
  uint32_t open_scopes = 0;                    // the owning thread only
  std::atomic<uint64_t> outermost_scope_start{~uint64_t{0}};  // ~0: none open (read by the agent)
  // 1 while a call is being recorded on this thread (from before its start is read until its
  // event is committed) or a scope's start is being read and published: see call_entered().
  std::atomic<uint32_t> in_call{0};
};
extern __thread EventCursor* tls_cursor __attribute__((tls_model("initial-exec")));

uint64_t new_event_id_slow() noexcept;  // registers the thread first
__attribute__((always_inline)) inline uint64_t new_event_id() noexcept {
  EventCursor* cursor = tls_cursor;
  if (__builtin_expect(cursor == nullptr, 0)) return new_event_id_slow();
  return cursor->id_base | (++cursor->id_counter & 0xffffffffu);
}

// Appending without a copy: begin_record() gives this thread's next slot (nullptr: the event
// is dropped and counted — a full arena), the caller fills all its fields, commit_record()
// publishes it. Never blocks, never allocates after the thread's first chunk. Nothing else
// may be recorded on this thread between the two calls.
HostEvent* begin_record_slow() noexcept;  // registers the thread or takes the next chunk
__attribute__((always_inline)) inline HostEvent* begin_record() noexcept {
  EventCursor* cursor = tls_cursor;
  if (__builtin_expect(cursor != nullptr && cursor->used < cursor->capacity, 1)) {
    return &cursor->slots[cursor->used];
  }
  return begin_record_slow();
}
__attribute__((always_inline)) inline void commit_record() noexcept {
  EventCursor* cursor = tls_cursor;
  cursor->committed->store(++cursor->used, std::memory_order_release);
}

// An operator or range opens and closes on this thread: the outermost one's start is published
// (one store at its begin and one at its end, no fence; scopes are rare next to calls).
// scope_opened() once the scope has read its start, before anything inside it is recorded;
// scope_closed() after its event is committed. The agent reads it after taking the thread's
// events (thread_buffer.h take_closed_chunks): having seen an event committed after this store,
// it sees the store too.
inline void scope_opened(uint64_t start) noexcept {
  EventCursor* cursor = tls_cursor;
  if (cursor != nullptr && cursor->open_scopes++ == 0) {
    cursor->outermost_scope_start.store(start, std::memory_order_release);
  }
}
inline void scope_closed() noexcept {
  EventCursor* cursor = tls_cursor;
  if (cursor == nullptr || cursor->open_scopes == 0) return;
  if (--cursor->open_scopes == 0) cursor->outermost_scope_start.store(~uint64_t{0}, std::memory_order_release);
}

// A call is being recorded on this thread: set before the call's start is read, cleared once
// its event is committed. With scope_opened(), this gives a streamed window the earliest start
// of whatever a thread has not committed yet (thread_buffer.h TakenThread::mark): a call in
// flight started after the thread's last committed event ended (no recorded call nests in
// another: RuntimeGuard, the CUPTI callback's depth), a scope open is published, and anything
// later starts after the agent's own clock reading. Two plain stores per call (release: on
// x86 a mov). The thread must be registered first (new_event_id() does it).
inline void call_entered() noexcept {
  if (EventCursor* cursor = tls_cursor) cursor->in_call.store(1, std::memory_order_release);
}
inline void call_left() noexcept {
  if (EventCursor* cursor = tls_cursor) cursor->in_call.store(0, std::memory_order_release);
}
class InCall {  // around a recorded call: from before its start is read until after its commit
 public:
  InCall() noexcept { call_entered(); }
  ~InCall() { call_left(); }
  InCall(const InCall&) = delete;
  InCall& operator=(const InCall&) = delete;
};
// An operator or range (not an NVTX start/end range) begins now: its start, read and published
// (scope_opened) inside call_entered()/call_left(), so a scope whose start the agent has not
// seen published yet is a call in flight to it.
inline uint64_t open_scope() noexcept {
  call_entered();
  const uint64_t start = now();
  scope_opened(start);
  call_left();
  return start;
}

// Appends a whole event (operators, ranges, steps: not the per-call hot path).
inline void record(const HostEvent& event) noexcept {
  if (HostEvent* slot = begin_record()) {
    *slot = event;
    commit_record();
  }
}

// ---- call stacks (PROFAGENT_WITH_STACK; collector/stacks.h) -----------------------------------
// While stacks are on, a recorded event is followed by a StackTag event naming its interned
// stack (event.h). Off, this costs the hooks one relaxed load of a flag that never changes.
extern std::atomic<bool> g_stacks_on;
inline bool stacks_on() noexcept { return g_stacks_on.load(std::memory_order_relaxed); }
// This thread's call stack here, the agent's own frames removed, interned; 0 when none could be
// taken (counted). Return addresses only: symbols are looked up at export.
uint32_t capture_stack() noexcept;
// Records the StackTag of event `event_id` (time `at`, the event's end: it stays in the event's
// window). Nothing for stack 0.
void record_stack(uint64_t event_id, uint32_t stack, uint64_t at) noexcept;
inline void record_call_stack(uint64_t event_id, uint64_t at) noexcept {
  if (__builtin_expect(stacks_on(), 0)) record_stack(event_id, capture_stack(), at);
}

// Interns a name (not for the hot path: hooks intern their API name once).
NameId intern(std::string_view name) noexcept;

// ---- device correlation ---------------------------------------------------------------
// Called by every CUDA hook before the real call. The first call in the process starts the
// device backend (CUPTI activities must be enabled before the first module loads, and never
// in processes that do not use CUDA); later calls are one relaxed load.
void cuda_in_use() noexcept;
// nvcc's modules: the hooks count registrations and call this when the last one is about to
// be unregistered (at exit, or when a plugin holding the only module is unloaded), before the
// runtime tears itself down (DeviceBackend::runtime_tearing_down).
void cuda_runtime_tearing_down() noexcept;

// Push/pop the host event id as the device backend's external correlation id around a call
// that may enqueue device work. No-ops (one load) when no device backend is active.
void push_external_id_slow(uint64_t id) noexcept;
void pop_external_id_slow() noexcept;
inline void push_external_id(uint64_t id) noexcept {
  if (g_device_tracing.load(std::memory_order_relaxed)) push_external_id_slow(id);
}
inline void pop_external_id() noexcept {
  if (g_device_tracing.load(std::memory_order_relaxed)) pop_external_id_slow();
}

// ---- operator input shapes (PROFAGENT_RECORD_SHAPES) ---------------------------------------
// One argument of an operator: a tensor (rank >= 0, `dims` valid only during the call) or
// something else (rank < 0). `type` is an interned dtype or argument-type name.
inline constexpr int32_t kMaxShapeRank = 8;
struct ShapeArg {
  int32_t rank = -1;
  NameId type = kNoName;
  const int64_t* dims = nullptr;
};
// Copies the shapes into the collector's side store (no allocation; collector/shapes.h) and
// returns a handle for HostEvent::arg0 of the Operator event, or 0 if not stored.
uint64_t record_shapes(const ShapeArg* args, uint32_t count) noexcept;
// An operator whose shapes could not be taken whole (more inputs than its recorder keeps): it
// is recorded without shapes, and counted with the shape records dropped.
void shapes_not_recorded() noexcept;

// ---- NCCL collectives (collector/collectives.h) --------------------------------------------
// Keeps one NCCL call's communication arguments for the join; the handle goes into
// HostEvent::arg1 of its Operator event, flagged kFlagCollective (0 when not kept: counted).
// Takes one leaf lock: NCCL calls cost microseconds already.
uint64_t record_collective(const CollectiveArgs& args) noexcept;
// A communicator was made: this process is rank `rank` of `nranks` of it. The first such
// communicator gives the trace its rank when no launcher variable did, and the backend "nccl".
void note_communicator(int rank, int nranks) noexcept;

// ---- allocations (PROFAGENT_PROFILE_MEMORY; collector/memory_ledger.h) ---------------------
// Set once by the agent when memory is profiled. Only allocation hooks read it: with it set
// they keep the allocation bookkeeping also while nothing is recorded (idle steps), so every
// window starts from the true totals. No other hook pays anything for it.
extern std::atomic<bool> g_memory_tracking;
inline bool memory_tracking() noexcept { return g_memory_tracking.load(std::memory_order_relaxed); }

// One allocation call, as its hook saw it after the real call returned.
// FailedAlloc: out of memory. Refused: an allocation or registration that failed for another
// reason (already registered, invalid value): it changes nothing and is no OOM.
// FailedFree: a free that returned an error (the memory stays allocated if it was ours).
enum class MemoryOpType : uint8_t { Alloc, Free, FailedAlloc, FailedFree, Refused };
struct MemoryOp {
  MemoryOpType type = MemoryOpType::Alloc;
  MemoryKind kind = MemoryKind::Device;
  int32_t device = -1;    // Alloc/FailedAlloc/Refused: the current device; -1 for host memory
  uint64_t address = 0;   // the pointer made or freed (0 for a failed allocation)
  uint64_t bytes = 0;     // Alloc/FailedAlloc/Refused: the size asked for
  NameId api = kNoName;   // the hooked function's name (where a leak was made)
  int32_t error = 0;      // FailedAlloc/Refused: the call's error code
  uint64_t call_ns = 0;   // memory_call_starts() at the call's start (0: not taken)
};
// An allocation hook calls it at its call's start while recording, and passes what it returned
// in MemoryOp::call_ns to note_memory(), which every such call must reach. While the device's
// allocation records are on it is the time on their clock (monotonic ns): the ledger tells the
// record of that very call from another allocation's at the same address by it, and holds a
// record read while the call is still in flight for the call to claim. Else 0.
uint64_t memory_call_starts() noexcept;
// Books the call (totals per device, live allocations) and, while recording, keeps an
// allocation record for the window, linked to the call's host event `event_id` (0 if none).
// Never calls CUDA; takes one leaf lock (allocation calls cost microseconds already).
void note_memory(const MemoryOp& op, uint64_t event_id) noexcept;

// ---- work given up ---------------------------------------------------------------------
// A catch-all that keeps an exception (out of memory, mostly) from reaching the program: the
// agent gives up that one piece of work. Each such place has one site, so what was lost is said
// once (a warning with the exception's what()) and never floods stderr:
//   static SwallowedSite site{"interning a name failed: the event has no name"};
//   try { ... } catch (...) { note_swallowed(site); }
// Only inside a catch block (the current exception is inspected), and not in the logger itself
// or where logging may not allocate (those count into the agent's dropped lines instead).
struct SwallowedSite {
  const char* consequence;  // what was lost, for the one log line
  std::atomic<bool> said{false};
};
void note_swallowed(SwallowedSite& site) noexcept;

// Something the program did that the agent could not keep (outside of an exception), said once
// per site: static LostSite site{"..."}; note_lost(site).
struct LostSite {
  const char* what;
  std::atomic<bool> said{false};
};
void note_lost(LostSite& site) noexcept;

// ---- what is recorded ------------------------------------------------------------------
// One rule, whichever way the agent came in (interposition or CUDA injection): every CUDA
// runtime and driver API call the program makes is recorded, except the few runtime calls
// torch.profiler's Kineto also leaves out of its traces as too frequent to be worth an event
// (cudaGetDevice, cudaSetDevice, cudaGetLastError, cudaEventCreate, cudaEventCreateWithFlags,
// cudaEventDestroy: isBlockListedRuntimeCbid in
// https://github.com/pytorch/kineto/blob/main/libkineto/src/CuptiActivityProfiler.cpp).
// `api` is the plain runtime function name (no _ptsz or ABI suffix).
bool left_out_of_traces(std::string_view api) noexcept;

// ---- facts hooks learn ----------------------------------------------------------------
// __cudaRegisterFunction: the host stub (or kernel handle) and its mangled device name, so
// kernels have names even when no device records come.
void note_kernel_name(const void* host_function, const char* device_name) noexcept;

// ---- user ranges (collector/user_ranges.cpp) --------------------------------------------------
// profagent_range_push/pop and NVTX's push/pop (hooks/nvtx) share one per-thread stack of open
// ranges. A recorded range pushes its id as the external correlation id, so device work issued
// inside it (also by libraries that call the driver directly) is attributed to it; its event is
// recorded at its pop. What one open range will be recorded as:
struct RangeInfo {
  NameId name = kNoName;
  EventKind kind = EventKind::Range;  // Range, or Operator (a torch operator from NVTX)
  uint8_t flags = 0;                  // EventFlags (kFlagAnnotated)
  uint64_t arg0 = 0;
  uint64_t arg1 = 0;
};
// Opens a range of `domain` (kNoName: profagent's own ranges and NVTX's default domain).
// `info` nullptr: the range is not recorded (not recording now), only counted so that pops
// stay balanced. Returns the 0-based depth of the new range on this thread, -1 without a stack.
int push_range(NameId domain, const RangeInfo* info) noexcept;
// Closes the innermost open range of `domain` on this thread and records it. Returns the
// depth it had, -1 when none was open (an unbalanced pop: ignored).
int pop_range(NameId domain) noexcept;
// True when a range opened now would be recorded (the cost of naming it is worth paying).
inline bool range_records() noexcept { return operator_should_record(); }

// Interns a name the program passes on a hot path (NVTX messages): a lock-free cache keyed by
// the text answers repeated names without intern()'s lock and allocation.
NameId intern_cached(std::string_view name) noexcept;

// ---- names the program gives (NVTX naming calls; collector/labels.h) ----------------------
// Kept for the process; each window's trace uses the names given so far.
void name_os_thread(uint32_t tid, std::string_view name) noexcept;
void name_category(NameId domain, uint32_t category, std::string_view name) noexcept;
void name_stream(uint64_t stream, std::string_view name) noexcept;  // a cudaStream_t / CUstream

// The words behind arg1 of an annotated event (EventFlags::kFlagAnnotated), written by
// hooks/nvtx and read by the join, which turns them into the trace's Annotation.
// NVTX range or mark: [kRangeColor] ARGB | 1 << 32 when a colour was given, [kRangeStartTid]
// the thread that started a start/end range (0: the recording thread), [kRangePayloadBytes] the
// size of the decoded payload (JSON text), then its bytes, 8 per word.
enum RangeWord : uint32_t { kRangeColor = 0, kRangeStartTid = 1, kRangePayloadBytes = 2, kRangePayload = 3 };
// torch operator: [kOpSequence] torch's sequence number (-1: none), [kOpHandle] its
// RecordFunction handle, then per input the (op handle, output index) that produced it.
enum TorchOpWord : uint32_t { kOpSequence = 0, kOpHandle = 1, kOpInputs = 2 };

// ---- side words (collector/shapes.h) ----------------------------------------------------------
// Copies `count` words into the side store that also keeps operator shapes (no lock, no
// allocation) and returns a handle for an event's arg, or 0 when the store is full (counted
// with the shape records).
uint64_t record_words(const uint64_t* words, uint32_t count) noexcept;

// ---- step markers (PROFAGENT_STEP_ON; collector/step_markers.h) ------------------------------
// Non-zero once the agent configured a step marker: only then do hooks report their calls.
enum StepMarkerBits : uint8_t { kMarkApi = 1, kMarkKernel = 2, kMarkRange = 4, kMarkProfilerApi = 8 };
extern std::atomic<uint8_t> g_step_markers;
inline bool step_markers_armed() noexcept {
  return g_step_markers.load(std::memory_order_relaxed) != 0;
}
// After a hooked call returned (recorded or not): `symbol` is its interposed name, `kernel`
// the kernel handle of a launch (else nullptr). May end the step (the call belongs to it).
void hooked_call_ended(const char* symbol, const void* kernel) noexcept;
// After a user range was pushed (profagent_range_push, NVTX ranges as `name` or `domain::name`).
void range_pushed(const char* name) noexcept;

}  // namespace profagent::collector
