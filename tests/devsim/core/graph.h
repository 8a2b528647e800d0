// CUDA graphs built by stream capture, and their replay.
//
// Modelled: capture of kernels, copies, sets and host functions on one stream and on streams
// that join it through cudaStreamWaitEvent on an event recorded inside the capture. Replay
// enqueues the captured nodes in capture order on the launch stream (a linear graph), each
// carrying the graph id, its node id and the cudaGraphLaunch correlation id. Not modelled:
// explicit graph construction (cudaGraphAdd*Node), parallel branches inside a graph.
#pragma once

#include <cstdint>
#include <vector>

#include "timeline.h"

namespace devsim {

struct Graph {
  uint32_t id = 0;
  std::vector<OpPayload> nodes;
  std::vector<uint64_t> node_ids;
  std::vector<Stream*> capturing;  // origin stream first; guarded by sched_mutex
};

struct GraphExec {
  uint32_t id = 0;
  uint32_t graph_id = 0;
  std::vector<OpPayload> nodes;
  std::vector<uint64_t> node_ids;
};

Graph* create_graph();
Status destroy_graph(Graph* g);
bool graph_live(const Graph* g);

Status begin_capture(Stream* s, int mode);
// Ends the capture started on s (the origin stream) and returns the graph.
Status end_capture(Stream* s, Graph** out);
// 0: none, 1: active (cudaStreamCaptureStatus values); id: the capture's unique id.
int capture_status(Stream* s, uint64_t* id);

Status instantiate(Graph* g, GraphExec** out);
Status destroy_exec(GraphExec* e);
Status launch_graph(GraphExec* e, Stream* s, uint32_t correlation_id);

// Used by the scheduler with sched_mutex held.
void capture_append_locked(Graph* g, const OpPayload& payload);
Status join_capture_locked(Stream* s, Graph* g);

}  // namespace devsim
