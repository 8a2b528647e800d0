// Shared by the cudart_graph_*.cpp files: handle translation between the runtime's graph
// handles and the model's graph objects, and node prototypes built from the runtime's
// parameter structs (validated like the direct calls).
#pragma once

#include <cstring>
#include <vector>

#include "cudart_common.h"
#include "graph.h"

namespace devsim::rt {

inline Graph* graph_of(cudaGraph_t g) { return graph_from_handle(g); }
inline GraphNode* node_of(cudaGraphNode_t n) { return node_from_handle(n); }
inline GraphExec* exec_of(cudaGraphExec_t e) { return exec_from_handle(e); }
inline cudaGraphNode_t handle_of(GraphNode* n) { return reinterpret_cast<cudaGraphNode_t>(n); }
inline cudaGraph_t handle_of(Graph* g) { return reinterpret_cast<cudaGraph_t>(g); }

// The caller's dependency array as live nodes; false if any is not one.
bool nodes_of(const cudaGraphNode_t* handles, size_t count, std::vector<GraphNode*>* out);
// Edge data of the default kind only (or none); programmatic ports are not modelled.
bool default_edges(const cudaGraphEdgeData* edges, size_t count);

template <typename T>
void store_params(GraphNode& n, const T& params) {
  n.api_params.resize(sizeof(T));
  std::memcpy(n.api_params.data(), &params, sizeof(T));
}

template <typename T>
bool load_params(const GraphNode& n, T* out) {
  if (out == nullptr || n.api_params.size() != sizeof(T)) return false;
  std::memcpy(out, n.api_params.data(), sizeof(T));
  return true;
}

// Prototypes: a node of that kind with its payload and the caller's parameters kept.
cudaError_t kernel_prototype(const cudaKernelNodeParams* p, GraphNode* out);
cudaError_t memcpy_prototype(const cudaMemcpy3DParms* p, GraphNode* out);
cudaError_t memcpy1d_prototype(void* dst, const void* src, size_t count, cudaMemcpyKind kind, GraphNode* out);
cudaError_t to_symbol_prototype(const void* symbol, const void* src, size_t count, size_t offset,
                                cudaMemcpyKind kind, GraphNode* out);
cudaError_t from_symbol_prototype(void* dst, const void* symbol, size_t count, size_t offset,
                                  cudaMemcpyKind kind, GraphNode* out);
cudaError_t memset_prototype(const cudaMemsetParams* p, GraphNode* out);
cudaError_t host_prototype(const cudaHostNodeParams* p, GraphNode* out);
cudaError_t event_prototype(NodeKind kind, cudaEvent_t event, GraphNode* out);

// cudaGraphNodeParams (the generic form of cudaGraphAddNode / NodeSetParams) as a prototype;
// child, alloc and free nodes are not prototypes (they own state) and are handled by the caller.
cudaError_t generic_prototype(const cudaGraphNodeParams* p, GraphNode* out);

}  // namespace devsim::rt
