// The real-time execution model: streams are FIFOs of operations, each op gets a modelled
// start and end on the host's CLOCK_MONOTONIC, one devsim thread applies the op's effect
// (moves the bytes) at its start and reports it when its end time has passed, and host waits
// block on completion.
//
// Scheduling rule: start = max(enqueue + launch latency, end of the previous
// op on the stream, ends of its event dependencies, a free kernel slot / copy engine). The
// legacy default stream also depends on every blocking stream of its device, and every
// blocking stream on the legacy stream. An op whose dependencies have no known end yet (a
// host function still running) is resolved later, when they finish.
//
// Locks: sched_mutex (scheduling state: tails, slots, dependency lists, the timeline heap)
// is never held while sleeping, running a host function, copying bytes or calling the tracer.
// done_mutex only pairs with the completion condition variable. Order: sched -> done.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "devsim.h"
#include "kernels.h"

namespace devsim {

enum class OpType : uint8_t { Kernel, Memcpy, Memset, Marker, HostFunc };

using HostFn = void (*)(void* user);
// A kernel whose times another party decides (a collective of the simulated NCCL: it ends when
// the last rank arrived). Called with the kernel's modelled start on a thread of its own (it
// may block); returns the kernel's {start, end}, start at or after the one it was given.
using KernelGate = std::function<std::pair<uint64_t, uint64_t>(uint64_t start_ns)>;
using StreamCallbackFn = void (*)(void* stream, int status, void* user);

// What an op does; copyable so graphs can replay it.
struct OpPayload {
  OpType type = OpType::Marker;
  OpRecord rec{};                     // trace fields; times are filled when scheduled
  const KernelInfo* kernel = nullptr;
  void* dst = nullptr;                // copies and sets: 2-D shape, 1-D is height 1
  const void* src = nullptr;
  size_t width = 0, height = 1, dpitch = 0, spitch = 0;
  int value = 0;
  HostFn host_fn = nullptr;           // cudaLaunchHostFunc
  StreamCallbackFn stream_cb = nullptr;  // cudaStreamAddCallback
  void* host_arg = nullptr;
  void* cb_stream_handle = nullptr;
  uint64_t duration_ns = 0;
  int copy_engine = -1;               // 0: HtoD, 1: DtoH, -1: none
  // Graph nodes with a device-side effect beyond bytes (memory nodes): run by the device
  // thread when the op completes, without scheduler locks; `effect_state` keeps its state alive.
  // It gets the op's record: the launch (correlation id) and stream it ran for.
  void (*effect)(const std::shared_ptr<void>& state, bool, const OpRecord& rec) = nullptr;
  std::shared_ptr<void> effect_state;
  bool effect_arg = false;
  std::shared_ptr<KernelGate> gate;   // gated kernels only (set_next_launch_gate)
};

struct Stream;
struct GraphNode;

struct Op {
  OpPayload p;
  Stream* stream = nullptr;
  // Guarded by sched_mutex.
  std::vector<std::shared_ptr<Op>> dependents;
  int pending = 0;
  bool end_known = false;
  std::atomic<bool> done{false};
};
using OpRef = std::shared_ptr<Op>;

struct Stream {
  uint32_t id = 0;                   // CUPTI stream id
  int device = 0;
  unsigned flags = 0;                // cudaStreamNonBlocking = 1
  int priority = 0;
  bool legacy = false;
  bool per_thread = false;
  // Guarded by sched_mutex.
  OpRef tail;
  bool live = true;
  Graph* capture = nullptr;          // non-null while capturing
  int capture_mode = 0;
  uint64_t capture_id = 0;
  std::vector<GraphNode*> capture_deps;  // what the next captured operation depends on

  bool blocking() const { return (flags & 1u) == 0; }
};

struct Event {
  unsigned flags = 0;                // cudaEventDisableTiming = 2
  uint32_t id = 0;
  int device = 0;
  // Guarded by sched_mutex.
  OpRef marker;                      // the recorded position, or null before the first record
  uint64_t record_id = CUPTI_SYNCHRONIZATION_INVALID_VALUE;  // of the latest record, unique
  Graph* captured_in = nullptr;      // recorded inside a capture (fork/join across streams)
  std::vector<GraphNode*> captured_deps;  // the capture position it recorded
  bool live = true;

  bool timing() const { return (flags & 2u) == 0; }
};

// Streams.
Stream* legacy_stream(int device);
Stream* per_thread_stream(int device);     // this thread's default stream on that device
Stream* create_stream(int device, unsigned flags, int priority);
// A cudaStream_t / CUstream on the calling thread's current device: 0, the legacy (0x1) and
// per-thread (0x2) handles, or a created stream. per_thread_default: the entry point is a
// _ptsz/_ptds one, so 0 means the per-thread stream. nullptr for a dead or bogus handle.
Stream* stream_from_handle(const void* handle, bool per_thread_default);
Status destroy_stream(Stream* s);
bool stream_live(const Stream* s);
Status stream_synchronize(Stream* s);
Status stream_query(Stream* s);            // Ok or NotReady
void device_synchronize(int device);
// Every device's work: what frees of memory any device may use (pinned host memory) wait for.
void synchronize_all_devices();

// Ops. enqueue() takes ownership; when the stream is capturing the op goes into the graph.
OpRef make_op(OpType type, Stream* s, uint32_t correlation_id);
Status enqueue(Stream* s, const OpRef& op);
void wait_done(const OpRef& op);

// Events.
Event* create_event(int device, unsigned flags);
Status destroy_event(Event* e);
bool event_live(const Event* e);
Status record_event(Event* e, Stream* s, uint32_t correlation_id);
Status query_event(Event* e);
Status synchronize_event(Event* e);
// The unique id of the event's latest record (CUPTI's cudaEventSyncId), or
// CUPTI_SYNCHRONIZATION_INVALID_VALUE before the first record or for a dead event.
uint64_t event_record_id(Event* e);
Status elapsed_ms(Event* start, Event* end, float* ms);
Status stream_wait_event(Stream* s, Event* e, uint32_t correlation_id);

// Capture state used by graph.cpp (sched_mutex held by the caller of *_locked).
std::mutex& sched_mutex();

}  // namespace devsim
