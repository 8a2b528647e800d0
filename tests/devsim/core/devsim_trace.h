// The seam between the simulated device (libdevsim.so, used by the simulated libcudart.so.13
// and libcuda.so.1) and the simulated CUPTI (libcupti.so.13).
//
// Real CUPTI learns about API calls and device work from inside the driver. In devsim the
// device model plays the driver: it reports every public runtime/driver API call (enter and
// exit, with a CUPTI-style correlation id) and every finished device operation to at most one
// Tracer, which libcupti.so.13 installs when a client enables activities or subscribes.
//
// Record fields use CUPTI's own enums and meanings (cupti_activity.h), so the CUPTI side only
// copies them into the real CUDA 13 record structs.
//
// Time: every *_ns value here is CLOCK_MONOTONIC nanoseconds (devsim::now_ns()). The CUPTI
// side converts to its own timestamp domain (or the client's timestamp callback).
#pragma once

#include <cstdint>

#include <cupti_activity.h>

namespace devsim {

uint64_t now_ns();  // CLOCK_MONOTONIC in ns

enum class ApiDomain : uint8_t { Runtime, Driver };

// One public API call as CUPTI's callback and RUNTIME/DRIVER activity see it. Calls the
// runtime makes internally (a runtime function reaching the driver) are not reported, as
// CUPTI does not report them either.
struct ApiCall {
  ApiDomain domain;
  uint32_t cbid;             // CUPTI_RUNTIME_TRACE_CBID_* or CUPTI_DRIVER_TRACE_CBID_*
  const char* name;          // "cudaLaunchKernel", "cuLaunchKernel", ... (static storage)
  const char* symbol_name;   // launches: kernel's mangled name; else nullptr
  uint32_t correlation_id;   // unique per process, shared by the device work this call enqueues
  uint32_t process_id;
  uint32_t thread_id;        // OS tid (gettid)
  uint32_t device_id;
  uint32_t context_id;       // contextUid
  uint64_t start_ns;
  uint64_t end_ns;           // 0 on enter
  int32_t result;            // cudaError_t / CUresult; valid on exit
  const void* params;        // generated_cuda_runtime_api_meta.h params struct, or nullptr
};

enum class OpKind : uint8_t { Kernel, Memcpy, Memset };

// One finished device operation. Reported once, from a devsim-owned thread, after end_ns has
// passed on the host clock.
struct OpRecord {
  OpKind kind;
  uint32_t correlation_id;   // of the API call that enqueued it (cudaGraphLaunch for replays)
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;        // CUPTI stream id: 7 for the legacy default stream, then 13, 14, ...
  int32_t priority;
  uint64_t queued_ns;        // when the host enqueued it
  uint64_t submitted_ns;     // when it was handed to the device
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t graph_id;         // 0 unless replayed from a graph
  uint64_t graph_node_id;    // 0 unless replayed from a graph

  // Kernel
  const char* name;          // mangled name, static storage (registration lifetime)
  int32_t grid[3];
  int32_t block[3];
  uint16_t registers_per_thread;
  int32_t static_shared_memory;
  int32_t dynamic_shared_memory;
  uint8_t launch_type;       // CUpti_ActivityLaunchType

  // Memcpy / memset
  uint64_t bytes;
  uint8_t copy_kind;         // CUpti_ActivityMemcpyKind
  uint8_t src_kind;          // CUpti_ActivityMemoryKind
  uint8_t dst_kind;          // CUpti_ActivityMemoryKind
  uint32_t memset_value;
  uint8_t memory_kind;       // memset target: CUpti_ActivityMemoryKind
  uint8_t is_async;          // flags: CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC / MEMSET_ASYNC
  // Peer copies (copy_kind PTOP): the devices the bytes leave and reach.
  uint32_t src_device_id;
  uint32_t dst_device_id;
};

// One host synchronisation (stream, event, context sync, stream wait event), reported on the
// calling thread when it returns.
struct SyncRecord {
  CUpti_ActivitySynchronizationType type;
  uint32_t correlation_id;
  uint32_t context_id;
  uint32_t stream_id;        // CUPTI_SYNCHRONIZATION_INVALID_VALUE when not applicable
  uint32_t event_id;         // CUPTI_SYNCHRONIZATION_INVALID_VALUE when not applicable
  uint64_t start_ns;
  uint64_t end_ns;
  // Which record of the event was waited for (cudaEventSyncId): unique per cudaEventRecord,
  // as an event may be recorded many times. Not applicable without an event.
  uint64_t event_sync_id = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
};

// One allocation or release of device, pinned, managed or pool memory, reported on the
// calling thread by the API call that did it (CUPTI_ACTIVITY_KIND_MEMORY2).
struct MemoryRecord {
  CUpti_ActivityMemoryOperationType operation;  // ALLOCATION or RELEASE
  CUpti_ActivityMemoryKind memory_kind;
  uint64_t address;
  uint64_t bytes;
  uint64_t timestamp_ns;
  uint32_t correlation_id;   // of the API call
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;        // CUPTI_INVALID_STREAM_ID unless the call is stream-ordered
  uint8_t is_async;          // 1 for cudaMallocAsync / cudaFreeAsync / cudaMallocFromPoolAsync
  // Pool allocations only (pool_type INVALID otherwise); sizes after the operation.
  CUpti_ActivityMemoryPoolType pool_type;
  uint64_t pool_address;
  uint64_t pool_release_threshold;
  uint64_t pool_size;
  uint64_t pool_utilized_size;
};

// Creation, destruction or trimming of a memory pool (CUPTI_ACTIVITY_KIND_MEMORY_POOL).
struct MemoryPoolRecord {
  CUpti_ActivityMemoryPoolOperationType operation;
  CUpti_ActivityMemoryPoolType pool_type;
  uint64_t address;
  uint64_t release_threshold;
  uint64_t size;             // reserved bytes after the operation
  uint64_t utilized_size;
  uint64_t min_bytes_to_keep;  // TRIMMED only
  uint64_t timestamp_ns;
  uint32_t correlation_id;
  uint32_t device_id;
};

// A graph, graph node or executable graph was created or cloned (CUPTI's resource callbacks
// CUPTI_CBID_RESOURCE_GRAPH_CREATED, _GRAPH_CLONED, _GRAPHNODE_CREATED, _GRAPHNODE_CLONED,
// _GRAPHEXEC_CREATED). Handles are the runtime's cudaGraph_t / cudaGraphNode_t /
// cudaGraphExec_t values; reported on the calling thread inside the API call that did it.
struct GraphEvent {
  uint32_t cbid;             // CUpti_CallbackIdResource
  const void* graph;
  const void* original_graph;  // clones: the graph cloned from
  const void* node;
  const void* original_node;   // clones: the node cloned from
  int node_type;             // cudaGraphNodeType of node
  const void* exec;
  uint32_t context_id;
};

// Graph ids as CUPTI reports them (cuptiGetGraphId / GraphNodeId / GraphExecId); false for a
// handle that is no live graph, node or executable graph.
bool graph_id_of(const void* graph, uint32_t* id);
bool graph_node_id_of(const void* node, uint64_t* id);
bool graph_exec_id_of(const void* exec, uint32_t* id);

// Installed by libcupti.so.13. Callbacks may come from any thread and must not call back into
// the runtime. on_api_enter runs before the call does any work, on the calling thread, so a
// tracer can read per-thread state such as the external correlation stack.
class Tracer {
 public:
  virtual void on_api_enter(const ApiCall& call) = 0;
  virtual void on_api_exit(const ApiCall& call) = 0;
  virtual void on_op_done(const OpRecord& op) = 0;
  virtual void on_sync(const SyncRecord& sync) = 0;
  // Called on the allocating/freeing thread, after the model's locks are released.
  virtual void on_memory(const MemoryRecord&) {}
  virtual void on_memory_pool(const MemoryPoolRecord&) {}
  virtual void on_graph_event(const GraphEvent&) {}
  // The runtime is tearing itself down (core/device.h): its queued work is done.
  virtual void on_runtime_teardown() {}

 protected:
  ~Tracer() = default;
};

// Returns false if another tracer is installed. nullptr uninstalls.
bool set_tracer(Tracer* tracer);
// True once the runtime tore itself down (its last nvcc module unregistered: core/device.h).
bool runtime_torn_down();

}  // namespace devsim
