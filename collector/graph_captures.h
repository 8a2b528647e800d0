// CUDA graph replays attributed to their capture: the capture-time map.
//
// A replayed kernel, copy or set comes from CUPTI with the correlation id of the
// cudaGraphLaunch that replayed it, and the id of the graph node it ran (graphNodeId: a node of
// the executable graph, which cudaGraphInstantiate cloned from the node the program created).
// What the program was doing when it made the node — the operator or range open around the
// captured cudaLaunchKernel/cudaMemcpyAsync, or around cudaGraphAddKernelNode — is what a user
// wants the replayed work attributed to, as its eager twin is. NVIDIA's cuda_graphs_trace
// CUPTI sample (https://docs.nvidia.com/cupti/main/main.html#cupti-samples) does it this way:
//
//   - CUPTI's resource callback GRAPHNODE_CREATED runs on the creating thread, inside the API
//     call that made the node: the agent notes (node id, thread, time), nothing more;
//   - GRAPHNODE_CLONED (cudaGraphInstantiate, cudaGraphClone) maps each new node to the node it
//     was cloned from, so an exec node leads back to the node the program created;
//   - each window's join finds, for the notes made during the window, the scope that enclosed
//     that moment on that thread (the host records' nesting, as for any call) and keeps its
//     External id for the node, across windows: a graph captured once is replayed for hours.
//
// Bounded: the table keeps kMaxGraphNodes notes, clone links and resolved nodes each; what does
// not fit is counted (graph_nodes_not_kept) and its replays keep their launch's External id,
// as do replays of nodes made while nothing was recorded (counted per window).
//
// Locks: one leaf mutex; callers hold no other lock, and nothing here calls CUDA or CUPTI.
#pragma once

#include <cstdint>

#include "collector/trace.h"

namespace profagent::collector {

inline constexpr uint64_t kMaxGraphNodes = uint64_t{1} << 18;

// From CUPTI's resource callbacks (collector/cupti_graph_callbacks.cpp), on the thread that made or
// cloned the node. `node` ids are cuptiGetGraphNodeId's.
void note_graph_node_created(uint64_t node) noexcept;
void note_graph_node_cloned(uint64_t clone, uint64_t original) noexcept;

struct GraphReplayCounts {
  uint64_t replayed = 0;          // device records of graph replays in the window
  uint64_t without_capture = 0;   // of those, whose node's capture scope is unknown
};

// The join, once the host records are sorted and nested (trace.host: by thread, then start;
// parent set): resolves the notes made up to `window_end_ns`, then gives each replayed device
// record of trace.device (graph_node_id != 0) the External id of its node's capture scope.
// Device records must already carry their launch's External id (the fallback).
GraphReplayCounts attribute_graph_replays(Trace& trace, uint64_t window_end_ns) noexcept;

// Notes, clone links and resolved nodes not kept so far in the process (the table was full).
uint64_t graph_nodes_not_kept() noexcept;

// Forgets everything (unit tests).
void reset_graph_captures() noexcept;

}  // namespace profagent::collector
