#include "graph.h"

#include <atomic>
#include <mutex>
#include <unordered_set>

#include "timeline_internal.h"

namespace devsim {
namespace {

std::atomic<uint32_t> g_next_graph_id{1};
std::atomic<uint32_t> g_next_exec_id{1};
std::atomic<uint64_t> g_next_node_id{1};
std::atomic<uint64_t> g_next_capture_id{1};

struct Live {  // guarded by sched_mutex
  std::unordered_set<const Graph*> graphs;
  std::unordered_set<const GraphExec*> execs;
};

Live& live() {
  static Live* l = new Live;
  return *l;
}

}  // namespace

Graph* create_graph() {
  auto* g = new Graph;
  g->id = g_next_graph_id.fetch_add(1);
  std::lock_guard lock(sched_mutex());
  live().graphs.insert(g);
  return g;
}

Status destroy_graph(Graph* g) {
  std::lock_guard lock(sched_mutex());
  if (!live().graphs.erase(g)) return Status::InvalidHandle;
  delete g;
  return Status::Ok;
}

bool graph_live(const Graph* g) {
  std::lock_guard lock(sched_mutex());
  return live().graphs.count(g) != 0;
}

Status begin_capture(Stream* s, int mode) {
  if (s->legacy) return Status::StreamCaptureUnsupported;
  Graph* g = create_graph();
  std::lock_guard lock(sched_mutex());
  if (s->capture) return Status::IllegalState;
  s->capture = g;
  s->capture_mode = mode;
  s->capture_id = g_next_capture_id.fetch_add(1);
  g->capturing.push_back(s);
  return Status::Ok;
}

Status end_capture(Stream* s, Graph** out) {
  if (out == nullptr) return Status::InvalidValue;
  std::lock_guard lock(sched_mutex());
  Graph* g = s->capture;
  if (g == nullptr || g->capturing.empty() || g->capturing.front() != s) return Status::IllegalState;
  for (Stream* member : g->capturing) member->capture = nullptr;
  g->capturing.clear();
  *out = g;
  return Status::Ok;
}

int capture_status(Stream* s, uint64_t* id) {
  std::lock_guard lock(sched_mutex());
  if (id) *id = s->capture ? s->capture_id : 0;
  return s->capture ? 1 : 0;
}

Status instantiate(Graph* g, GraphExec** out) {
  if (out == nullptr) return Status::InvalidValue;
  auto* e = new GraphExec;
  e->id = g_next_exec_id.fetch_add(1);
  std::lock_guard lock(sched_mutex());
  if (!live().graphs.count(g)) {
    delete e;
    return Status::InvalidHandle;
  }
  e->graph_id = g->id;
  e->nodes = g->nodes;
  e->node_ids = g->node_ids;
  live().execs.insert(e);
  *out = e;
  return Status::Ok;
}

Status destroy_exec(GraphExec* e) {
  std::lock_guard lock(sched_mutex());
  if (!live().execs.erase(e)) return Status::InvalidHandle;
  delete e;
  return Status::Ok;
}

// Every node becomes a fresh op on the launch stream, so stream order and the legacy-stream
// rules apply to replays exactly as to direct launches.
Status launch_graph(GraphExec* e, Stream* s, uint32_t correlation_id) {
  std::lock_guard lock(sched_mutex());
  if (!live().execs.count(e)) return Status::InvalidHandle;
  if (s->capture) return Status::StreamCaptureUnsupported;
  for (size_t i = 0; i < e->nodes.size(); ++i) {
    OpRef op = make_op(e->nodes[i].type, s, correlation_id);
    op->p = e->nodes[i];
    op->p.rec.correlation_id = correlation_id;
    op->p.rec.device_id = static_cast<uint32_t>(s->device);
    op->p.rec.context_id = s->device + 1;
    op->p.rec.graph_id = e->graph_id;
    op->p.rec.graph_node_id = e->node_ids[i];
    Status st = enqueue_locked(s, op, nullptr);
    if (st != Status::Ok) return st;
  }
  return Status::Ok;
}

void capture_append_locked(Graph* g, const OpPayload& payload) {
  g->nodes.push_back(payload);
  g->node_ids.push_back(g_next_node_id.fetch_add(1));
}

Status join_capture_locked(Stream* s, Graph* g) {
  if (s->legacy) return Status::StreamCaptureUnsupported;
  s->capture = g;
  s->capture_id = g->capturing.empty() ? 0 : g->capturing.front()->capture_id;
  g->capturing.push_back(s);
  return Status::Ok;
}

}  // namespace devsim
