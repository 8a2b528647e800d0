// State shared by graph.cpp (construction, capture) and graph_exec.cpp (replay). Guarded by
// sched_mutex unless said otherwise.
#pragma once

#include <unordered_set>

#include "graph.h"

namespace devsim {

struct Live {
  std::unordered_set<const Graph*> graphs;     // user graphs (created, captured, cloned)
  std::unordered_set<const GraphNode*> nodes;  // nodes of user graphs, child graphs and execs
  std::unordered_set<const GraphExec*> execs;
};
Live& live();

// A user graph, or a child graph whose node is live.
bool graph_handle_live_locked(const Graph* g);
std::unique_ptr<Graph> clone_for_exec_locked(const Graph& src, std::vector<GraphNotice>* notices);
void forget_nodes_locked(const Graph& g);

// Graph-memory accounting (its own leaf lock): reservations when alloc nodes are created and
// destroyed, use when alloc and free nodes execute.
void reserve_graph_memory(const GraphMemory& m, bool reserve);
void use_graph_memory(const GraphMemory& m, bool in_use);
// The address index behind free_graph_memory_now/async (graph.h).
void index_graph_memory(const std::shared_ptr<GraphMemory>& m);
void unindex_graph_memory(const GraphMemory& m);
std::shared_ptr<GraphMemory> find_graph_memory(const void* ptr);

}  // namespace devsim
