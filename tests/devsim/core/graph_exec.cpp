// Executable graphs: instantiation, whole-graph and per-node updates, and replay as a DAG on
// the launch stream. Also the graph-memory accounting and the tracer notices.
#include <cupti_callbacks.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "api_scope.h"
#include "device.h"
#include "graph.h"
#include "graph_internal.h"
#include "memory_report.h"
#include "timeline_internal.h"

namespace devsim {
namespace {

std::atomic<uint32_t> g_next_exec_id{1};

// Kahn's order; false when the edges make a cycle.
bool topological_order(const Graph& g, std::vector<GraphNode*>* order) {
  std::map<const GraphNode*, size_t> pending;
  std::vector<GraphNode*> ready;
  for (const auto& n : g.nodes) {
    pending[n.get()] = n->deps.size();
    if (n->deps.empty()) ready.push_back(n.get());
  }
  while (!ready.empty()) {
    GraphNode* n = ready.back();
    ready.pop_back();
    order->push_back(n);
    for (GraphNode* d : n->dependents) {
      if (--pending[d] == 0) ready.push_back(d);
    }
  }
  return order->size() == g.nodes.size();
}

bool acyclic(const Graph& g) {
  std::vector<GraphNode*> order;
  if (!topological_order(g, &order)) return false;
  for (const auto& n : g.nodes) {
    if (n->child && !acyclic(*n->child)) return false;
  }
  return true;
}

// What CUPTI reports of a graph's memory (MEMORY2): an ALLOCATION when an alloc node runs and
// a RELEASE when a free node runs or the program frees it outside the graph, as a stream-ordered
// operation (isAsync, the stream) of the launch or free call that did it, from the device's
// graph memory pool (LOCAL: the pool has no handle a program sees, so no pool address), with
// the pool's reserved and used bytes after it. Creating the node reports nothing.
MemoryRecord graph_memory_record(const GraphMemory& m, bool in_use, const OpRecord& rec) {
  MemoryRecord r = memory_record(in_use ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
                                 MemKind::Device, reinterpret_cast<uintptr_t>(m.ptr), m.size, m.device, rec.correlation_id);
  r.stream_id = rec.stream_id;
  r.is_async = 1;
  r.pool_type = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  const GraphMemStats stats = graph_mem_stats(m.device);
  r.pool_size = stats.reserved;
  r.pool_utilized_size = stats.used;
  return r;
}

void memory_effect(const std::shared_ptr<void>& state, bool in_use, const OpRecord& rec) {
  auto* m = static_cast<GraphMemory*>(state.get());
  if (m->in_use.exchange(in_use) == in_use) return;
  use_graph_memory(*m, in_use);
  report_memory(graph_memory_record(*m, in_use, rec));
}

struct LaunchContext {
  Stream* stream;
  uint32_t correlation_id;
  uint32_t graph_id;
};

// The op a node becomes at launch. Disabled nodes and nodes without device work are markers,
// so their edges still order the graph.
OpRef node_op_locked(const GraphNode& n, const LaunchContext& ctx) {
  bool work = n.enabled && (n.kind == NodeKind::Kernel || n.kind == NodeKind::Memcpy ||
                            n.kind == NodeKind::Memset || n.kind == NodeKind::Host);
  OpRef op = make_op(work ? n.op.type : OpType::Marker, ctx.stream, ctx.correlation_id);
  if (work) {
    op->p = n.op;
    OpRecord& r = op->p.rec;
    r.correlation_id = ctx.correlation_id;
    r.device_id = static_cast<uint32_t>(ctx.stream->device);
    r.context_id = ctx.stream->device + 1;
  }
  op->p.rec.graph_id = ctx.graph_id;
  op->p.rec.graph_node_id = n.id;
  if (n.enabled && (n.kind == NodeKind::MemAlloc || n.kind == NodeKind::MemFree)) {
    op->p.effect = memory_effect;
    op->p.effect_state = n.memory;
    op->p.effect_arg = n.kind == NodeKind::MemAlloc;
  }
  return op;
}

// Enqueues the ops of g: each node after its dependencies' exit ops (roots after `entry`);
// returns the exit ops of g's sinks. A child graph's roots start after the child node's
// dependencies and its sinks are the child node's exits.
Status enqueue_graph_locked(const Graph& g, const LaunchContext& ctx, const std::vector<OpRef>& entry,
                            std::vector<OpRef>* sinks) {
  std::vector<GraphNode*> order;
  topological_order(g, &order);
  std::map<const GraphNode*, std::vector<OpRef>> exits;
  for (GraphNode* n : order) {
    std::vector<OpRef> deps;
    for (GraphNode* d : n->deps) deps.insert(deps.end(), exits[d].begin(), exits[d].end());
    if (n->deps.empty()) deps = entry;
    if (n->kind == NodeKind::Child && n->enabled) {
      Status st = enqueue_graph_locked(*n->child, ctx, deps, &exits[n]);
      if (st != Status::Ok) return st;
      if (exits[n].empty()) exits[n] = deps;  // an empty child passes its dependencies on
      continue;
    }
    OpRef op = node_op_locked(*n, ctx);
    if (n->kind == NodeKind::EventWait && n->enabled && n->event->live && n->event->marker) {
      deps.push_back(n->event->marker);
    }
    Status st = enqueue_node_locked(ctx.stream, op, deps, false);
    if (st != Status::Ok) return st;
    if (n->kind == NodeKind::EventRecord && n->enabled && n->event->live) {
      n->event->marker = op;
      n->event->captured_in = nullptr;
    }
    exits[n] = {op};
  }
  for (const auto& n : g.nodes) {
    if (n->dependents.empty()) sinks->insert(sinks->end(), exits[n.get()].begin(), exits[n.get()].end());
  }
  return Status::Ok;
}

// Finds the node of `body` (or its child graphs) cloned from `original`.
GraphNode* find_origin_locked(const Graph& body, const GraphNode* original) {
  for (const auto& n : body.nodes) {
    if (n.get() == original || n->origin == original) return n.get();
    if (n->child) {
      if (GraphNode* found = find_origin_locked(*n->child, original)) return found;
    }
  }
  return nullptr;
}

void copy_update(GraphNode& to, const GraphNode& from) {
  to.op = from.op;
  to.event = from.event;
  to.api_params = from.api_params;
  to.attributes = from.attributes;
}

int update_body_locked(Graph& body, const Graph& g, UpdateResult* result);

// Nodes are paired by position (creation order), as cudaGraphExecUpdate pairs them for graphs
// built the same way; kinds and edges must match.
int compare_node_locked(GraphNode& target, const GraphNode& source, const Graph& body, const Graph& g,
                        UpdateResult* result) {
  if (target.kind != source.kind) return 3;  // cudaGraphExecUpdateErrorNodeTypeChanged
  if (target.deps.size() != source.deps.size()) return 2;
  for (size_t d = 0; d < source.deps.size(); ++d) {
    size_t si = size_t(std::find_if(g.nodes.begin(), g.nodes.end(),
                                    [&](const auto& p) { return p.get() == source.deps[d]; }) - g.nodes.begin());
    if (si >= body.nodes.size() ||
        std::find(target.deps.begin(), target.deps.end(), body.nodes[si].get()) == target.deps.end()) {
      result->error_from = source.deps[d];
      return 2;
    }
  }
  if (source.kind == NodeKind::MemAlloc || source.kind == NodeKind::MemFree) {
    return target.memory->size == source.memory->size ? 0 : 6;  // memory nodes cannot change
  }
  if (source.kind == NodeKind::Child) return update_body_locked(*target.child, *source.child, result);
  return 0;
}

int update_body_locked(Graph& body, const Graph& g, UpdateResult* result) {
  if (body.nodes.size() != g.nodes.size()) return 2;  // cudaGraphExecUpdateErrorTopologyChanged
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    int r = compare_node_locked(*body.nodes[i], *g.nodes[i], body, g, result);
    if (r != 0) {
      if (!result->error_node) result->error_node = g.nodes[i].get();
      return r;
    }
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i]->kind != NodeKind::Child) copy_update(*body.nodes[i], *g.nodes[i]);
  }
  return 0;
}

struct MemStats {
  std::mutex mutex;  // leaf
  GraphMemStats device[kMaxDevices];
  uint64_t reset_epoch[kMaxDevices] = {};
};

MemStats& mem_stats() {
  static MemStats* s = new MemStats;
  return *s;
}

void adjust(uint64_t& current, uint64_t& high, uint64_t size, bool add) {
  current = add ? current + size : current - std::min(current, size);
  high = std::max(high, current);
}

Status launch_graph_locked(GraphExec* e, Stream* s, uint32_t correlation_id);

}  // namespace

void notify(const std::vector<GraphNotice>& notices) {
  Tracer* t = tracer();
  if (t == nullptr) return;
  for (const GraphNotice& n : notices) {
    GraphEvent e{};
    e.cbid = n.cbid;
    e.graph = n.graph;
    e.original_graph = n.original_graph;
    e.node = n.node;
    e.original_node = n.original_node;
    e.node_type = n.node ? static_cast<int>(n.node->kind) : 0;
    e.exec = n.exec;
    e.context_id = context_id(current_device());
    t->on_graph_event(e);
  }
}

Status instantiate(Graph* g, unsigned long long flags, GraphExec** out) {
  if (out == nullptr) return Status::InvalidValue;
  auto* e = new GraphExec;
  e->id = g_next_exec_id.fetch_add(1);
  e->flags = flags;
  std::vector<GraphNotice> notices;
  {
    std::lock_guard lock(sched_mutex());
    if (!graph_handle_live_locked(g) || !acyclic(*g)) {
      delete e;
      return Status::InvalidValue;
    }
    e->graph_id = g->id;
    e->body = clone_for_exec_locked(*g, &notices);
    e->body->id = g->id;  // records of its launches name the graph that was instantiated
    live().execs.insert(e);
  }
  for (GraphNotice& n : notices) n.exec = e;
  notices.push_back({CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, g, nullptr, nullptr, nullptr, e});
  notify(notices);
  *out = e;
  return Status::Ok;
}

GraphExec* exec_from_handle(const void* handle) {
  std::lock_guard lock(sched_mutex());
  auto* e = static_cast<GraphExec*>(const_cast<void*>(handle));
  return live().execs.count(e) ? e : nullptr;
}

Status destroy_exec(GraphExec* e) {
  std::unique_ptr<GraphExec> owned;
  {
    std::lock_guard lock(sched_mutex());
    if (!live().execs.erase(e)) return Status::InvalidHandle;
    forget_nodes_locked(*e->body);
    owned.reset(e);
  }
  return Status::Ok;
}

// A start marker orders the graph after the stream's earlier work; a join marker depending on
// every sink becomes the stream's tail, so later work and synchronisation wait for all of it.
Status launch_graph(GraphExec* e, Stream* s, uint32_t correlation_id) {
  Status st = launch_graph_locked(e, s, correlation_id);
  flush_capture_notices();  // a launch into a capture made a child-graph node
  return st;
}

namespace {

Status launch_graph_locked(GraphExec* e, Stream* s, uint32_t correlation_id) {
  Status st = Status::Ok;
  std::lock_guard lock(sched_mutex());
  if (!live().execs.count(e)) return Status::InvalidHandle;
  if (!s->live) return Status::InvalidHandle;
  if (s->capture) {
    capture_graph_locked(s, *e->body);
    return Status::Ok;
  }
  LaunchContext ctx{s, correlation_id, e->graph_id};
  OpRef start = make_op(OpType::Marker, s, correlation_id);
  st = enqueue_node_locked(s, start, {}, true);
  if (st != Status::Ok) return st;
  std::vector<OpRef> sinks;
  st = enqueue_graph_locked(*e->body, ctx, {start}, &sinks);
  if (st != Status::Ok) return st;
  if (sinks.empty()) sinks.push_back(start);
  OpRef join = make_op(OpType::Marker, s, correlation_id);
  st = enqueue_node_locked(s, join, sinks, false);
  if (st == Status::Ok) s->tail = join;
  return st;
}

}  // namespace

Status update_exec(GraphExec* e, Graph* g, UpdateResult* result) {
  std::lock_guard lock(sched_mutex());
  if (!live().execs.count(e) || !graph_handle_live_locked(g) || result == nullptr) return Status::InvalidValue;
  *result = UpdateResult{};
  result->result = update_body_locked(*e->body, *g, result);
  if (result->result == 2 && !result->error_node && !g->nodes.empty()) result->error_node = g->nodes.back().get();
  return result->result == 0 ? Status::Ok : Status::GraphExecUpdateFailure;
}

Status update_exec_child(GraphExec* e, GraphNode* n, Graph* child) {
  std::lock_guard lock(sched_mutex());
  if (!live().execs.count(e) || !graph_handle_live_locked(child)) return Status::InvalidValue;
  GraphNode* target = find_origin_locked(*e->body, n);
  if (target == nullptr || target->kind != NodeKind::Child) return Status::InvalidValue;
  UpdateResult r;
  return update_body_locked(*target->child, *child, &r) == 0 ? Status::Ok : Status::GraphExecUpdateFailure;
}

GraphNode* exec_node(GraphExec* e, const GraphNode* n) {
  std::lock_guard lock(sched_mutex());
  if (!live().execs.count(e)) return nullptr;
  return find_origin_locked(*e->body, n);
}

Status set_exec_node_params(GraphExec* e, GraphNode* n, const GraphNode& prototype) {
  std::lock_guard lock(sched_mutex());
  if (!live().execs.count(e)) return Status::InvalidValue;
  GraphNode* target = find_origin_locked(*e->body, n);
  if (target == nullptr || target->kind != prototype.kind) return Status::InvalidValue;
  copy_update(*target, prototype);
  return Status::Ok;
}

Status set_node_enabled(GraphExec* e, GraphNode* n, bool enabled) {
  std::lock_guard lock(sched_mutex());
  if (!live().execs.count(e)) return Status::InvalidValue;
  GraphNode* target = find_origin_locked(*e->body, n);
  if (target == nullptr) return Status::InvalidValue;
  NodeKind k = target->kind;
  if (k != NodeKind::Kernel && k != NodeKind::Memcpy && k != NodeKind::Memset) return Status::InvalidValue;
  target->enabled = enabled;
  return Status::Ok;
}

Status node_enabled(GraphExec* e, GraphNode* n, bool* enabled) {
  std::lock_guard lock(sched_mutex());
  if (!live().execs.count(e) || enabled == nullptr) return Status::InvalidValue;
  GraphNode* target = find_origin_locked(*e->body, n);
  if (target == nullptr) return Status::InvalidValue;
  *enabled = target->enabled;
  return Status::Ok;
}

void reserve_graph_memory(const GraphMemory& m, bool reserve) {
  MemStats& s = mem_stats();
  std::lock_guard lock(s.mutex);
  GraphMemStats& d = s.device[m.device];
  adjust(d.reserved, d.reserved_high, m.size, reserve);
}

void use_graph_memory(const GraphMemory& m, bool in_use) {
  MemStats& s = mem_stats();
  std::lock_guard lock(s.mutex);
  GraphMemStats& d = s.device[m.device];
  adjust(d.used, d.used_high, m.size, in_use);
}

// Alloc nodes' memory by address, for frees made outside the graph. Its own leaf lock.
struct GraphMemoryIndex {
  std::mutex mutex;
  std::map<const void*, std::weak_ptr<GraphMemory>> by_ptr;
};

GraphMemoryIndex& graph_memory_index() {
  static GraphMemoryIndex* index = new GraphMemoryIndex;
  return *index;
}

void index_graph_memory(const std::shared_ptr<GraphMemory>& m) {
  GraphMemoryIndex& index = graph_memory_index();
  std::lock_guard lock(index.mutex);
  index.by_ptr[m->ptr] = m;
}

void unindex_graph_memory(const GraphMemory& m) {
  GraphMemoryIndex& index = graph_memory_index();
  std::lock_guard lock(index.mutex);
  auto it = index.by_ptr.find(m.ptr);
  if (it != index.by_ptr.end() && it->second.expired()) index.by_ptr.erase(it);
}

std::shared_ptr<GraphMemory> find_graph_memory(const void* ptr) {
  if (!ptr) return nullptr;
  GraphMemoryIndex& index = graph_memory_index();
  std::lock_guard lock(index.mutex);
  auto it = index.by_ptr.find(ptr);
  return it == index.by_ptr.end() ? nullptr : it->second.lock();
}

bool free_graph_memory_now(void* ptr, uint32_t correlation_id, Status* st) {
  std::shared_ptr<GraphMemory> m = find_graph_memory(ptr);
  if (!m) return false;
  if (!m->in_use.load()) {  // never allocated by a launch, or freed already
    *st = Status::InvalidValue;
    return true;
  }
  OpRecord call{};  // a synchronous free: the call's, on no stream
  call.correlation_id = correlation_id;
  call.stream_id = CUPTI_INVALID_STREAM_ID;
  memory_effect(m, false, call);
  *st = Status::Ok;
  return true;
}

bool free_graph_memory_async(void* ptr, Stream* s, uint32_t correlation_id, Status* st) {
  std::shared_ptr<GraphMemory> m = find_graph_memory(ptr);
  if (!m) return false;
  // In stream order the launch that allocates may still be queued, so in_use cannot be
  // checked here: the free takes effect when the stream reaches it, like a free node.
  OpRef free_point = make_op(OpType::Marker, s, correlation_id);
  free_point->p.effect = memory_effect;
  free_point->p.effect_state = m;
  free_point->p.effect_arg = false;
  *st = enqueue(s, free_point);
  return true;
}

void forget_graph_memory(int device) {
  MemStats& s = mem_stats();
  std::lock_guard lock(s.mutex);
  s.device[device] = GraphMemStats{};
  ++s.reset_epoch[device];
}

uint64_t graph_memory_epoch(int device) {
  MemStats& s = mem_stats();
  std::lock_guard lock(s.mutex);
  return s.reset_epoch[device];
}

GraphMemStats graph_mem_stats(int device) {
  MemStats& s = mem_stats();
  std::lock_guard lock(s.mutex);
  return s.device[device];
}

void reset_graph_mem_high(int device, bool used, bool reserved) {
  MemStats& s = mem_stats();
  std::lock_guard lock(s.mutex);
  GraphMemStats& d = s.device[device];
  if (used) d.used_high = d.used;
  if (reserved) d.reserved_high = d.reserved;
}

}  // namespace devsim

namespace devsim {

bool graph_id_of(const void* graph, uint32_t* id) {
  std::lock_guard lock(sched_mutex());
  auto* g = static_cast<const Graph*>(graph);
  bool exec_body = false;
  for (const GraphExec* e : live().execs) exec_body |= e->body.get() == g;
  if (!exec_body && !graph_handle_live_locked(g)) return false;
  *id = g->id;
  return true;
}

bool graph_node_id_of(const void* node, uint64_t* id) {
  std::lock_guard lock(sched_mutex());
  auto* n = static_cast<const GraphNode*>(node);
  if (!live().nodes.count(n)) return false;
  *id = n->id;
  return true;
}

bool graph_exec_id_of(const void* exec, uint32_t* id) {
  std::lock_guard lock(sched_mutex());
  auto* e = static_cast<const GraphExec*>(exec);
  if (!live().execs.count(e)) return false;
  *id = e->id;
  return true;
}

}  // namespace devsim
