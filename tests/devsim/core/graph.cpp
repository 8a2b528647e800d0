// Graph construction: nodes and edges added explicitly or by stream capture, cloning, queries
// and the DOT dump. Executable graphs and replay are in graph_exec.cpp.
#include "graph.h"

#include <cupti_callbacks.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>

#include "graph_internal.h"
#include "memory.h"
#include "timeline_internal.h"

namespace devsim {
namespace {

std::atomic<uint32_t> g_next_graph_id{1};
std::atomic<uint64_t> g_next_node_id{1};
std::atomic<uint64_t> g_next_capture_id{1};

// Notices of nodes created by capture while sched_mutex was held, reported by the same thread
// once it has let go (flush_capture_notices). One captured op makes at most one node.
constexpr int kMaxPendingNotices = 8;
thread_local GraphNotice t_pending[kMaxPendingNotices];
thread_local int t_pending_count = 0;

bool contains(const std::vector<GraphNode*>& v, const GraphNode* n) {
  return std::find(v.begin(), v.end(), n) != v.end();
}

void erase_one(std::vector<GraphNode*>& v, const GraphNode* n) {
  auto it = std::find(v.begin(), v.end(), n);
  if (it != v.end()) v.erase(it);
}

bool deps_belong_locked(const Graph* g, const std::vector<GraphNode*>& deps) {
  for (const GraphNode* d : deps) {
    if (!live().nodes.count(d) || d->graph != g) return false;
  }
  return true;
}

void link_locked(GraphNode* from, GraphNode* to) {
  from->dependents.push_back(to);
  to->deps.push_back(from);
}

void copy_params(GraphNode& to, const GraphNode& from) {
  to.op = from.op;
  to.event = from.event;
  to.api_params = from.api_params;
  to.attributes = from.attributes;
  to.free_ptr = from.free_ptr;
}

// A clone of `src` under a fresh id; nodes get fresh ids and `origin` links, child graphs are
// cloned recursively. Notices for the cloned nodes are appended to `notices`.
std::unique_ptr<Graph> clone_locked(const Graph& src, std::vector<GraphNotice>* notices);

std::unique_ptr<GraphNode> clone_node_locked(const GraphNode& n, Graph* owner, std::vector<GraphNotice>* notices) {
  auto c = std::make_unique<GraphNode>();
  c->id = g_next_node_id.fetch_add(1);
  c->graph = owner;
  c->kind = n.kind;
  copy_params(*c, n);
  c->memory = n.memory;
  c->enabled = n.enabled;
  c->origin = &n;
  if (n.child) {
    c->child = clone_locked(*n.child, notices);
    c->child->parent = c.get();
  }
  live().nodes.insert(c.get());
  if (notices) {
    notices->push_back({CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, owner, n.graph, c.get(),
                        const_cast<GraphNode*>(&n), nullptr});
  }
  return c;
}

std::unique_ptr<Graph> clone_locked(const Graph& src, std::vector<GraphNotice>* notices) {
  auto g = std::make_unique<Graph>();
  g->id = g_next_graph_id.fetch_add(1);
  g->user_objects = src.user_objects;  // a clone (and an exec) holds references of its own
  for (const UserObjectRef& r : g->user_objects) r.retain(r.object, r.count);
  std::map<const GraphNode*, GraphNode*> map;
  for (const auto& n : src.nodes) {
    g->nodes.push_back(clone_node_locked(*n, g.get(), notices));
    map[n.get()] = g->nodes.back().get();
  }
  for (const auto& n : src.nodes) {
    for (GraphNode* d : n->deps) link_locked(map[d], map[n.get()]);
  }
  return g;
}

void unlink_all_locked(GraphNode* n) {
  for (GraphNode* d : n->deps) erase_one(d->dependents, n);
  for (GraphNode* d : n->dependents) erase_one(d->deps, n);
  n->deps.clear();
  n->dependents.clear();
}

GraphNode* new_node_locked(Graph* g, NodeKind kind, const std::vector<GraphNode*>& deps) {
  auto n = std::make_unique<GraphNode>();
  n->id = g_next_node_id.fetch_add(1);
  n->graph = g;
  n->kind = kind;
  GraphNode* raw = n.get();
  for (GraphNode* d : deps) {
    if (!contains(raw->deps, d)) link_locked(d, raw);
  }
  g->nodes.push_back(std::move(n));
  live().nodes.insert(raw);
  return raw;
}

GraphNotice created_notice(GraphNode* n) {
  return {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, n->graph, nullptr, n, nullptr, nullptr};
}

// Adds a node after checking the graph and its dependencies; reports it once unlocked.
template <typename Fill>
Status add_checked(Graph* g, const std::vector<GraphNode*>& deps, NodeKind kind, GraphNode** out, Fill&& fill) {
  if (out == nullptr) return Status::InvalidValue;
  GraphNode* n = nullptr;
  {
    std::lock_guard lock(sched_mutex());
    if (!live().graphs.count(g) || !deps_belong_locked(g, deps)) return Status::InvalidValue;
    Status st = fill(nullptr);
    if (st != Status::Ok) return st;
    n = new_node_locked(g, kind, deps);
    fill(n);
  }
  *out = n;
  notify({created_notice(n)});
  return Status::Ok;
}

}  // namespace

Live& live() {
  static Live* l = new Live;
  return *l;
}

// Memory an alloc node handed out and no free node took back belongs to the program now
// (it frees it with cudaFree); otherwise the reservation ends with the last node using it.
GraphMemory::~GraphMemory() {
  if (ptr) unindex_graph_memory(*this);
  if (reset_epoch != graph_memory_epoch(device)) return;  // freed by cudaDeviceReset
  reserve_graph_memory(*this, false);
  if (!in_use) release(ptr, MemKind::Device);
}

void forget_nodes_locked(const Graph& g) {
  for (const auto& n : g.nodes) {
    live().nodes.erase(n.get());
    if (n->child) forget_nodes_locked(*n->child);
  }
}

std::unique_ptr<Graph> clone_for_exec_locked(const Graph& src, std::vector<GraphNotice>* notices) {
  return clone_locked(src, notices);
}

Graph::~Graph() {
  for (const UserObjectRef& r : user_objects) r.release(r.object, r.count);
}

Status retain_user_object(Graph* g, const UserObjectRef& ref) {
  std::lock_guard lock(sched_mutex());
  if (!graph_handle_live_locked(g)) return Status::InvalidValue;
  for (UserObjectRef& r : g->user_objects) {
    if (r.object == ref.object) {
      r.count += ref.count;
      return Status::Ok;
    }
  }
  g->user_objects.push_back(ref);
  return Status::Ok;
}

// The references given back are released after the lock is let go (a destructor may run).
Status release_user_object(Graph* g, void* object, unsigned count) {
  UserObjectRef released;
  {
    std::lock_guard lock(sched_mutex());
    if (!graph_handle_live_locked(g)) return Status::InvalidValue;
    auto it = std::find_if(g->user_objects.begin(), g->user_objects.end(),
                           [&](const UserObjectRef& r) { return r.object == object; });
    if (it == g->user_objects.end() || it->count < count) return Status::InvalidValue;
    released = *it;
    released.count = count;
    it->count -= count;
    if (it->count == 0) g->user_objects.erase(it);
  }
  released.release(released.object, released.count);
  return Status::Ok;
}

Graph* create_graph() {
  auto* g = new Graph;
  g->id = g_next_graph_id.fetch_add(1);
  {
    std::lock_guard lock(sched_mutex());
    live().graphs.insert(g);
  }
  notify({{CUPTI_CBID_RESOURCE_GRAPH_CREATED, g, nullptr, nullptr, nullptr, nullptr}});
  return g;
}

Status destroy_graph(Graph* g) {
  std::unique_ptr<Graph> owned;
  {
    std::lock_guard lock(sched_mutex());
    if (!live().graphs.count(g)) return Status::InvalidHandle;
    live().graphs.erase(g);
    forget_nodes_locked(*g);
    owned.reset(g);
  }
  return Status::Ok;  // memory reservations go with their last graph, outside the lock
}

bool graph_live(const Graph* g) {
  std::lock_guard lock(sched_mutex());
  return live().graphs.count(g) != 0;
}

GraphNode* node_from_handle(const void* handle) {
  std::lock_guard lock(sched_mutex());
  auto* n = static_cast<GraphNode*>(const_cast<void*>(handle));
  return live().nodes.count(n) ? n : nullptr;
}

Graph* graph_from_handle(const void* handle) {
  std::lock_guard lock(sched_mutex());
  auto* g = static_cast<Graph*>(const_cast<void*>(handle));
  if (live().graphs.count(g)) return g;
  // A child graph (cudaGraphChildGraphNodeGetGraph) is valid while its node is.
  for (const GraphNode* n : live().nodes) {
    if (n->child.get() == g) return g;
  }
  return nullptr;
}

bool graph_handle_live_locked(const Graph* g) {
  if (live().graphs.count(g)) return true;
  return g && g->parent && live().nodes.count(g->parent);
}

Status add_node(Graph* g, const std::vector<GraphNode*>& deps, NodeKind kind, const GraphNode& prototype,
                GraphNode** out) {
  return add_checked(g, deps, kind, out, [&](GraphNode* n) {
    if (n) copy_params(*n, prototype);
    return Status::Ok;
  });
}

Status add_child_node(Graph* g, const std::vector<GraphNode*>& deps, Graph* child, GraphNode** out) {
  std::vector<GraphNotice> notices;
  Status st = add_checked(g, deps, NodeKind::Child, out, [&](GraphNode* n) {
    if (!n) return graph_handle_live_locked(child) && child != g ? Status::Ok : Status::InvalidValue;
    n->child = clone_locked(*child, &notices);
    n->child->parent = n;
    return Status::Ok;
  });
  notify(notices);
  return st;
}

// The address is taken now and stays the node's for its life (and its clones'), as CUDA
// fixes a graph allocation's virtual address when the node is created.
Status add_mem_alloc_node(Graph* g, const std::vector<GraphNode*>& deps, int device, size_t size, GraphNode** out) {
  if (size == 0) return Status::InvalidValue;
  auto memory = std::make_shared<GraphMemory>();
  Status st = allocate(MemKind::Device, device, size, &memory->ptr);
  if (st != Status::Ok) {
    memory->ptr = nullptr;
    return st;
  }
  memory->size = lookup(memory->ptr)->size;
  memory->device = device;
  memory->reset_epoch = graph_memory_epoch(device);
  reserve_graph_memory(*memory, true);
  index_graph_memory(memory);
  st = add_checked(g, deps, NodeKind::MemAlloc, out, [&](GraphNode* n) {
    if (n) n->memory = memory;
    return Status::Ok;
  });
  return st;
}

GraphNode* find_alloc_locked(const Graph* g, const void* ptr) {
  for (const auto& n : g->nodes) {
    if (n->kind == NodeKind::MemAlloc && n->memory->ptr == ptr) return n.get();
  }
  return nullptr;
}

Status add_mem_free_node(Graph* g, const std::vector<GraphNode*>& deps, void* ptr, GraphNode** out) {
  // The memory may come from an alloc node of another graph: CUDA lets any graph free it.
  return add_checked(g, deps, NodeKind::MemFree, out, [&](GraphNode* n) {
    GraphNode* alloc = find_alloc_locked(g, ptr);
    std::shared_ptr<GraphMemory> memory = alloc ? alloc->memory : find_graph_memory(ptr);
    if (!n) return memory ? Status::Ok : Status::InvalidValue;
    n->free_ptr = ptr;
    n->memory = memory;
    return Status::Ok;
  });
}

Status destroy_node(GraphNode* n) {
  std::unique_ptr<GraphNode> owned;
  {
    std::lock_guard lock(sched_mutex());
    if (!live().nodes.count(n) || !live().graphs.count(n->graph)) return Status::InvalidValue;
    unlink_all_locked(n);
    live().nodes.erase(n);
    if (n->child) forget_nodes_locked(*n->child);
    auto& nodes = n->graph->nodes;
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const auto& p) { return p.get() == n; });
    owned = std::move(*it);
    nodes.erase(it);
  }
  return Status::Ok;
}

Status add_edges(Graph* g, const std::vector<GraphNode*>& from, const std::vector<GraphNode*>& to) {
  std::lock_guard lock(sched_mutex());
  if (!live().graphs.count(g) || from.size() != to.size()) return Status::InvalidValue;
  if (!deps_belong_locked(g, from) || !deps_belong_locked(g, to)) return Status::InvalidValue;
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] == to[i] || contains(to[i]->deps, from[i])) return Status::InvalidValue;
  }
  for (size_t i = 0; i < from.size(); ++i) link_locked(from[i], to[i]);
  return Status::Ok;
}

Status remove_edges(Graph* g, const std::vector<GraphNode*>& from, const std::vector<GraphNode*>& to) {
  std::lock_guard lock(sched_mutex());
  if (!live().graphs.count(g) || from.size() != to.size()) return Status::InvalidValue;
  if (!deps_belong_locked(g, from) || !deps_belong_locked(g, to)) return Status::InvalidValue;
  for (size_t i = 0; i < from.size(); ++i) {
    if (!contains(to[i]->deps, from[i])) return Status::InvalidValue;
  }
  for (size_t i = 0; i < from.size(); ++i) {
    erase_one(from[i]->dependents, to[i]);
    erase_one(to[i]->deps, from[i]);
  }
  return Status::Ok;
}

Status set_node_params(GraphNode* n, const GraphNode& prototype) {
  std::lock_guard lock(sched_mutex());
  if (!live().nodes.count(n) || n->kind != prototype.kind) return Status::InvalidValue;
  copy_params(*n, prototype);
  return Status::Ok;
}

Status clone_graph(Graph* g, Graph** out) {
  if (out == nullptr) return Status::InvalidValue;
  std::vector<GraphNotice> notices;
  Graph* clone = nullptr;
  {
    std::lock_guard lock(sched_mutex());
    if (!graph_handle_live_locked(g)) return Status::InvalidValue;
    clone = clone_locked(*g, &notices).release();
    live().graphs.insert(clone);
  }
  notices.insert(notices.begin(), {CUPTI_CBID_RESOURCE_GRAPH_CLONED, clone, g, nullptr, nullptr, nullptr});
  notify(notices);
  *out = clone;
  return Status::Ok;
}

GraphNode* find_in_clone(const GraphNode* original, Graph* clone) {
  std::lock_guard lock(sched_mutex());
  if (!graph_handle_live_locked(clone)) return nullptr;
  for (const auto& n : clone->nodes) {
    if (n->origin == original) return n.get();
  }
  return nullptr;
}

std::vector<GraphNode*> graph_nodes(Graph* g) {
  std::lock_guard lock(sched_mutex());
  std::vector<GraphNode*> out;
  for (const auto& n : g->nodes) out.push_back(n.get());
  return out;
}

std::vector<GraphNode*> root_nodes(Graph* g) {
  std::lock_guard lock(sched_mutex());
  std::vector<GraphNode*> out;
  for (const auto& n : g->nodes) {
    if (n->deps.empty()) out.push_back(n.get());
  }
  return out;
}

std::vector<std::pair<GraphNode*, GraphNode*>> graph_edges(Graph* g) {
  std::lock_guard lock(sched_mutex());
  std::vector<std::pair<GraphNode*, GraphNode*>> out;
  for (const auto& n : g->nodes) {
    for (GraphNode* d : n->dependents) out.emplace_back(n.get(), d);
  }
  return out;
}

std::vector<GraphNode*> node_deps(GraphNode* n, bool dependents) {
  std::lock_guard lock(sched_mutex());
  return dependents ? n->dependents : n->deps;
}

// ---- Capture ----------------------------------------------------------------------------

namespace {

Status begin_capture_locked(Stream* s, Graph* g, const std::vector<GraphNode*>& deps, int mode) {
  if (s->capture) return Status::IllegalState;
  s->capture = g;
  s->capture_mode = mode;
  s->capture_id = g_next_capture_id.fetch_add(1);
  s->capture_deps = deps;
  g->capturing.push_back(s);
  return Status::Ok;
}

}  // namespace

Status begin_capture(Stream* s, int mode) {
  if (s->legacy) return Status::StreamCaptureUnsupported;
  Graph* g = create_graph();
  Status st;
  {
    std::lock_guard lock(sched_mutex());
    g->made_by_capture = true;
    st = begin_capture_locked(s, g, {}, mode);
  }
  if (st != Status::Ok) destroy_graph(g);
  return st;
}

Status begin_capture_to(Stream* s, Graph* g, const std::vector<GraphNode*>& deps, int mode) {
  if (s->legacy) return Status::StreamCaptureUnsupported;
  std::lock_guard lock(sched_mutex());
  if (!live().graphs.count(g) || !deps_belong_locked(g, deps) || !g->capturing.empty()) return Status::InvalidValue;
  return begin_capture_locked(s, g, deps, mode);
}

Status update_capture_deps(Stream* s, const std::vector<GraphNode*>& deps, bool replace) {
  std::lock_guard lock(sched_mutex());
  if (s->capture == nullptr) return Status::IllegalState;
  if (!deps_belong_locked(s->capture, deps)) return Status::InvalidValue;
  if (replace) s->capture_deps.clear();
  for (GraphNode* n : deps) {
    if (!contains(s->capture_deps, n)) s->capture_deps.push_back(n);
  }
  return Status::Ok;
}

namespace {

// n, or a node that depends on it, is among `targets` (iterative: captured chains are long).
bool reaches_locked(const GraphNode* n, const std::vector<GraphNode*>& targets) {
  std::set<const GraphNode*> seen{n};
  std::vector<const GraphNode*> todo{n};
  while (!todo.empty()) {
    const GraphNode* at = todo.back();
    todo.pop_back();
    if (contains(targets, at)) return true;
    for (const GraphNode* d : at->dependents) {
      if (seen.insert(d).second) todo.push_back(d);
    }
  }
  return false;
}

// Every stream forked into the capture must have joined back: the origin's position depends
// on (or is) each forked stream's last captured work.
bool all_joined_locked(const Graph& g) {
  const std::vector<GraphNode*>& origin = g.capturing.front()->capture_deps;
  for (size_t i = 1; i < g.capturing.size(); ++i) {
    for (const GraphNode* n : g.capturing[i]->capture_deps) {
      if (!reaches_locked(n, origin)) return false;
    }
  }
  return true;
}

}  // namespace

// Capture ends for every member stream either way; an unjoined capture loses the graph it
// made (a graph given to cudaStreamBeginCaptureToGraph stays the caller's).
Status end_capture(Stream* s, Graph** out) {
  if (out == nullptr) return Status::InvalidValue;
  Graph* g = nullptr;
  bool joined = false, owned = false;
  {
    std::lock_guard lock(sched_mutex());
    g = s->capture;
    if (g == nullptr || g->capturing.empty() || g->capturing.front() != s) return Status::IllegalState;
    joined = all_joined_locked(*g);
    owned = g->made_by_capture;
    for (Stream* member : g->capturing) {
      member->capture = nullptr;
      member->capture_deps.clear();
    }
    g->capturing.clear();
  }
  if (!joined) {
    if (owned) destroy_graph(g);
    return Status::StreamCaptureUnjoined;
  }
  *out = g;
  return Status::Ok;
}

int capture_status(Stream* s, uint64_t* id, Graph** graph, std::vector<GraphNode*>* deps) {
  std::lock_guard lock(sched_mutex());
  if (id) *id = s->capture ? s->capture_id : 0;
  if (graph) *graph = s->capture;
  if (deps) *deps = s->capture_deps;
  return s->capture ? 1 : 0;
}

// Each captured operation depends on where its stream stands in the capture, then becomes that
// position: operations on one stream chain, forked streams make parallel branches.
void capture_append_locked(Stream* s, const OpPayload& payload) {
  NodeKind kind = payload.type == OpType::Kernel   ? NodeKind::Kernel
                  : payload.type == OpType::Memcpy ? NodeKind::Memcpy
                  : payload.type == OpType::Memset ? NodeKind::Memset
                  : payload.type == OpType::HostFunc ? NodeKind::Host
                                                     : NodeKind::Empty;
  GraphNode* n = new_node_locked(s->capture, kind, s->capture_deps);
  n->op = payload;
  s->capture_deps.assign(1, n);
  if (t_pending_count < kMaxPendingNotices) t_pending[t_pending_count++] = created_notice(n);
}

// A graph launched into a capture becomes a child-graph node of the captured graph.
void capture_graph_locked(Stream* s, const Graph& body) {
  GraphNode* n = new_node_locked(s->capture, NodeKind::Child, s->capture_deps);
  n->child = clone_locked(body, nullptr);
  n->child->parent = n;
  s->capture_deps.assign(1, n);
  if (t_pending_count < kMaxPendingNotices) t_pending[t_pending_count++] = created_notice(n);
}

void capture_record_event_locked(Event* e, Stream* s) {
  e->captured_in = s->capture;
  e->captured_deps = s->capture_deps;
}

// A stream outside the capture joins it at the event's position (a fork); a member stream adds
// the event's position to its own (a join).
Status capture_wait_event_locked(Stream* s, Event* e) {
  Graph* g = e->captured_in;
  if (s->capture == nullptr) {
    if (s->legacy) return Status::StreamCaptureUnsupported;
    s->capture = g;
    s->capture_id = g->capturing.empty() ? 0 : g->capturing.front()->capture_id;
    s->capture_deps = e->captured_deps;
    g->capturing.push_back(s);
    return Status::Ok;
  }
  if (s->capture != g) return Status::StreamCaptureIsolation;
  for (GraphNode* n : e->captured_deps) {
    if (!contains(s->capture_deps, n)) s->capture_deps.push_back(n);
  }
  return Status::Ok;
}

void flush_capture_notices() {
  if (t_pending_count == 0) return;
  std::vector<GraphNotice> notices(t_pending, t_pending + t_pending_count);
  t_pending_count = 0;
  notify(notices);
}

// ---- DOT --------------------------------------------------------------------------------

namespace {

const char* kind_label(NodeKind k) {
  switch (k) {
    case NodeKind::Kernel: return "KERNEL";
    case NodeKind::Memcpy: return "MEMCPY";
    case NodeKind::Memset: return "MEMSET";
    case NodeKind::Host: return "HOST";
    case NodeKind::Child: return "GRAPH";
    case NodeKind::Empty: return "EMPTY";
    case NodeKind::EventWait: return "EVENT_WAIT";
    case NodeKind::EventRecord: return "EVENT_RECORD";
    case NodeKind::MemAlloc: return "MEM_ALLOC";
    case NodeKind::MemFree: return "MEM_FREE";
  }
  return "?";
}

void write_dot_body(FILE* f, const Graph& g, const std::string& prefix) {
  for (const auto& n : g.nodes) {
    std::string label = kind_label(n->kind);
    if (n->kind == NodeKind::Kernel && n->op.rec.name) label += std::string("\\n") + n->op.rec.name;
    std::fprintf(f, "  \"%s%llu\" [label=\"%s\\nid %llu\"];\n", prefix.c_str(), (unsigned long long)n->id,
                 label.c_str(), (unsigned long long)n->id);
    for (const GraphNode* d : n->dependents) {
      std::fprintf(f, "  \"%s%llu\" -> \"%s%llu\";\n", prefix.c_str(), (unsigned long long)n->id, prefix.c_str(),
                   (unsigned long long)d->id);
    }
    if (n->child) write_dot_body(f, *n->child, prefix + std::to_string(n->id) + ".");
  }
}

}  // namespace

Status write_dot(Graph* g, const char* path) {
  if (path == nullptr) return Status::InvalidValue;
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return Status::OperatingSystem;
  std::lock_guard lock(sched_mutex());
  std::fprintf(f, "digraph devsim_graph_%u {\n", g->id);
  write_dot_body(f, *g, "");
  std::fprintf(f, "}\n");
  return std::fclose(f) == 0 ? Status::Ok : Status::OperatingSystem;
}

}  // namespace devsim
