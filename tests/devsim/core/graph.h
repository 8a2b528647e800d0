// CUDA graphs: built node by node (cudaGraphAdd*Node) or by stream capture, instantiated into
// executable graphs, and replayed as a DAG.
//
// A graph is a set of nodes and dependency edges. Capture records the edges a real capture
// records: each captured operation depends on the capturing stream's current position, and an
// event recorded inside the capture carries that position to the streams that wait on it
// (fork/join). Instantiation clones the graph with fresh node ids (what CUPTI's records carry,
// and what its GRAPHNODE_CLONED callback maps back to the original nodes). A launch turns each
// enabled node into an op that starts when all of its dependencies (and, for root nodes, the
// launch stream's earlier work) have ended; independent branches therefore overlap, limited by
// the device's kernel slots and copy engines, and the launch completes on the stream when every
// sink has ended.
//
// Locks: all graph state is guarded by sched_mutex (the scheduler's), so capture can append
// nodes while it enqueues; the tracer is never called with it held.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "timeline.h"

namespace devsim {

// cudaGraphNodeType / CUgraphNodeType values.
enum class NodeKind : uint8_t {
  Kernel = 0, Memcpy = 1, Memset = 2, Host = 3, Child = 4, Empty = 5, EventWait = 6,
  EventRecord = 7, MemAlloc = 10, MemFree = 11,
};

// Memory of a MemAlloc node: its address is fixed when the node is added (as CUDA guarantees),
// the bytes are "in use" from the alloc node's execution until a free node's.
struct GraphMemory {
  void* ptr = nullptr;
  size_t size = 0;
  int device = 0;
  uint64_t reset_epoch = 0;      // the device's cudaDeviceReset count when it was taken
  std::atomic<bool> in_use{false};  // between an alloc node's execution and a free node's
  ~GraphMemory();                // returns the reservation
};

struct Graph;

struct GraphNode {
  uint64_t id = 0;               // what cuptiGetGraphNodeId and the records' graphNodeId say
  Graph* graph = nullptr;        // owner
  NodeKind kind = NodeKind::Empty;
  OpPayload op;                  // Kernel, Memcpy, Memset, Host
  Event* event = nullptr;        // EventRecord, EventWait
  std::unique_ptr<Graph> child;  // Child: the node's own copy of the graph it was given
  std::shared_ptr<GraphMemory> memory;  // MemAlloc: its memory; MemFree: the memory it frees
  void* free_ptr = nullptr;      // MemFree: the address as given
  std::vector<GraphNode*> deps;        // incoming edges
  std::vector<GraphNode*> dependents;  // outgoing edges
  const GraphNode* origin = nullptr;   // the node this one was cloned from
  bool enabled = true;           // executable graphs only (cudaGraphNodeSetEnabled)
  // The front end's own parameter struct and kernel-node attributes, kept for *GetParams.
  std::vector<uint8_t> api_params;
  std::map<int, std::vector<uint8_t>> attributes;
};

// References a graph holds on a runtime user object (cudaGraphRetainUserObject). The runtime
// owns user objects; the graph only calls back to retain (clones, instantiation) and release
// (when it is destroyed, outside any devsim lock).
struct UserObjectRef {
  void* object = nullptr;
  unsigned count = 0;
  void (*retain)(void* object, unsigned count) = nullptr;
  void (*release)(void* object, unsigned count) = nullptr;
};

struct Graph {
  uint32_t id = 0;
  std::vector<std::unique_ptr<GraphNode>> nodes;
  std::vector<Stream*> capturing;  // origin stream first
  GraphNode* parent = nullptr;     // the child-graph node that owns this graph, if any
  bool made_by_capture = false;    // created by cudaStreamBeginCapture, not given to it
  std::vector<UserObjectRef> user_objects;
  ~Graph();
};

struct GraphExec {
  uint32_t id = 0;
  uint32_t graph_id = 0;           // the graph it was instantiated from (records' graphId)
  unsigned long long flags = 0;
  std::unique_ptr<Graph> body;     // a clone: node ids are the exec's own
};

// What the CUPTI resource callbacks need to hear (CUpti_CallbackIdResource values).
struct GraphNotice {
  uint32_t cbid = 0;
  Graph* graph = nullptr;
  Graph* original_graph = nullptr;
  GraphNode* node = nullptr;
  GraphNode* original_node = nullptr;
  GraphExec* exec = nullptr;
};
// Reports notices to the tracer; call without sched_mutex held.
void notify(const std::vector<GraphNotice>& notices);

// Graphs and nodes. Handles are validated: a bogus pointer gives nullptr / InvalidValue.
Graph* create_graph();
Status destroy_graph(Graph* g);
bool graph_live(const Graph* g);
GraphNode* node_from_handle(const void* handle);      // a live node of a graph or exec
Graph* graph_from_handle(const void* handle);         // a live user graph or child graph
GraphExec* exec_from_handle(const void* handle);

// Adds a node with the given dependencies (all in g). The node is filled by `fill` under the
// lock before it becomes visible; child graphs are cloned into the node.
Status add_node(Graph* g, const std::vector<GraphNode*>& deps, NodeKind kind, const GraphNode& prototype,
                GraphNode** out);
Status add_child_node(Graph* g, const std::vector<GraphNode*>& deps, Graph* child, GraphNode** out);
Status add_mem_alloc_node(Graph* g, const std::vector<GraphNode*>& deps, int device, size_t size,
                          GraphNode** out);
Status add_mem_free_node(Graph* g, const std::vector<GraphNode*>& deps, void* ptr, GraphNode** out);
Status destroy_node(GraphNode* n);
Status add_edges(Graph* g, const std::vector<GraphNode*>& from, const std::vector<GraphNode*>& to);
Status remove_edges(Graph* g, const std::vector<GraphNode*>& from, const std::vector<GraphNode*>& to);
// Replaces a node's parameters (payload, event, api_params) keeping its edges and id.
Status set_node_params(GraphNode* n, const GraphNode& prototype);
Status clone_graph(Graph* g, Graph** out);
GraphNode* find_in_clone(const GraphNode* original, Graph* clone);
// Copies of node lists under the lock (the front ends write them to the caller's arrays).
std::vector<GraphNode*> graph_nodes(Graph* g);
std::vector<GraphNode*> root_nodes(Graph* g);
std::vector<std::pair<GraphNode*, GraphNode*>> graph_edges(Graph* g);
std::vector<GraphNode*> node_deps(GraphNode* n, bool dependents);
Status write_dot(Graph* g, const char* path);
// cudaGraphRetainUserObject / ReleaseUserObject: the graph's own count per object.
Status retain_user_object(Graph* g, const UserObjectRef& ref);
Status release_user_object(Graph* g, void* object, unsigned count);

// Capture.
Status begin_capture(Stream* s, int mode);
// cudaStreamBeginCaptureToGraph: capture into an existing graph, after `deps`.
Status begin_capture_to(Stream* s, Graph* g, const std::vector<GraphNode*>& deps, int mode);
// cudaStreamUpdateCaptureDependencies: replace (set) or extend the stream's capture position.
Status update_capture_deps(Stream* s, const std::vector<GraphNode*>& deps, bool replace);
// Ends the capture started on s (the origin stream) and returns the graph.
Status end_capture(Stream* s, Graph** out);
// 0: none, 1: active (cudaStreamCaptureStatus values); id: the capture's unique id; graph and
// deps: the graph being built and the stream's current capture dependencies.
int capture_status(Stream* s, uint64_t* id, Graph** graph = nullptr, std::vector<GraphNode*>* deps = nullptr);

// Executable graphs.
Status instantiate(Graph* g, unsigned long long flags, GraphExec** out);
Status destroy_exec(GraphExec* e);
Status launch_graph(GraphExec* e, Stream* s, uint32_t correlation_id);
// cudaGraphExecUpdate: the result is a cudaGraphExecUpdateResult value; on failure error_node
// (and error_from for an edge) name the offending node of g.
struct UpdateResult {
  int result = 0;
  GraphNode* error_node = nullptr;
  GraphNode* error_from = nullptr;
};
Status update_exec(GraphExec* e, Graph* g, UpdateResult* result);
// cudaGraphExecChildGraphNodeSetParams: the same rules for one child-graph node.
Status update_exec_child(GraphExec* e, GraphNode* n, Graph* child);
// The exec's clone of a node of the graph it was instantiated from (or the node itself when it
// belongs to the exec), or nullptr.
GraphNode* exec_node(GraphExec* e, const GraphNode* n);
Status set_exec_node_params(GraphExec* e, GraphNode* n, const GraphNode& prototype);
Status set_node_enabled(GraphExec* e, GraphNode* n, bool enabled);
Status node_enabled(GraphExec* e, GraphNode* n, bool* enabled);

// Graph memory per device (cudaDeviceGetGraphMemAttribute): in use now and its high-water
// mark, reserved by alloc nodes now and its high-water mark.
struct GraphMemStats {
  uint64_t used = 0, used_high = 0, reserved = 0, reserved_high = 0;
};
GraphMemStats graph_mem_stats(int device);
// cudaDeviceReset frees all of a device's memory, graph memory included: reservations taken
// before it are not given back a second time (the address may belong to a newer allocation).
void forget_graph_memory(int device);
uint64_t graph_memory_epoch(int device);
void reset_graph_mem_high(int device, bool used, bool reserved);

// Graph memory freed outside its graph (cudaFree, cudaFreeAsync), which CUDA allows: the
// allocation stops being in use and stays reserved at its address for the graph's next
// launch, whose alloc node takes it again. False when ptr is no alloc node's memory; else *st
// is the result (InvalidValue for a synchronous free of memory no launch allocated, or freed).
bool free_graph_memory_now(void* ptr, uint32_t correlation_id, Status* st);
bool free_graph_memory_async(void* ptr, Stream* s, uint32_t correlation_id, Status* st);

// Used by the scheduler with sched_mutex held.
void capture_append_locked(Stream* s, const OpPayload& payload);
void capture_graph_locked(Stream* s, const Graph& body);
void capture_record_event_locked(Event* e, Stream* s);
Status capture_wait_event_locked(Stream* s, Event* e);

}  // namespace devsim
