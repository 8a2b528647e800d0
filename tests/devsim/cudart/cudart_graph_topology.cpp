// Graph topology (nodes, roots, edges, dependencies, destroy, clone), the DOT dump, and graph
// memory attributes of the device.
#include "cudart_graph_common.h"
#include "device.h"

using namespace devsim;
using namespace devsim::rt;

namespace {

// The CUDA contract of the list getters: with a null array only the count is written;
// otherwise up to *count entries are written (the rest of the caller's array zeroed) and
// *count becomes the number of entries the graph has.
cudaError_t write_nodes(ApiScope& scope, const std::vector<GraphNode*>& nodes, cudaGraphNode_t* out,
                        cudaGraphEdgeData* edges, size_t* count) {
  if (!count) return finish(scope, cudaErrorInvalidValue);
  if (out) {
    for (size_t i = 0; i < *count; ++i) {
      out[i] = i < nodes.size() ? handle_of(nodes[i]) : nullptr;
      if (edges) edges[i] = cudaGraphEdgeData{};
    }
  }
  *count = nodes.size();
  return finish(scope, cudaSuccess);
}

cudaError_t edges_impl(ApiScope& scope, cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                       cudaGraphEdgeData* edges, size_t* count) {
  Graph* g = graph_of(graph);
  if (!g || !count || (from == nullptr) != (to == nullptr)) return finish(scope, cudaErrorInvalidValue);
  auto list = graph_edges(g);
  for (size_t i = 0; from && i < *count; ++i) {
    from[i] = i < list.size() ? handle_of(list[i].first) : nullptr;
    to[i] = i < list.size() ? handle_of(list[i].second) : nullptr;
    if (edges) edges[i] = cudaGraphEdgeData{};
  }
  *count = list.size();
  return finish(scope, cudaSuccess);
}

cudaError_t node_list_impl(ApiScope& scope, cudaGraphNode_t node, cudaGraphNode_t* out, cudaGraphEdgeData* edges,
                           size_t* count, bool dependents) {
  GraphNode* n = node_of(node);
  if (!n) return finish(scope, cudaErrorInvalidValue);
  return write_nodes(scope, node_deps(n, dependents), out, edges, count);
}

cudaError_t change_edges(ApiScope& scope, cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                         const cudaGraphEdgeData* edges, size_t count, bool add) {
  Graph* g = graph_of(graph);
  std::vector<GraphNode*> f, t;
  if (!g || !nodes_of(from, count, &f) || !nodes_of(to, count, &t)) return finish(scope, cudaErrorInvalidValue);
  if (!default_edges(edges, count)) return finish(scope, cudaErrorNotSupported);
  return finish(scope, add ? add_edges(g, f, t) : remove_edges(g, f, t));
}

cudaError_t mem_attribute(int device, cudaGraphMemAttributeType attr, uint64_t* value) {
  GraphMemStats s = graph_mem_stats(device);
  switch (attr) {
    case cudaGraphMemAttrUsedMemCurrent: *value = s.used; return cudaSuccess;
    case cudaGraphMemAttrUsedMemHigh: *value = s.used_high; return cudaSuccess;
    case cudaGraphMemAttrReservedMemCurrent: *value = s.reserved; return cudaSuccess;
    case cudaGraphMemAttrReservedMemHigh: *value = s.reserved_high; return cudaSuccess;
  }
  return cudaErrorInvalidValue;
}

}  // namespace

extern "C" {

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  DEVSIM_RT_CALL(cudaGraphGetNodes, v10000, Light);
  Graph* g = graph_of(graph);
  if (!g) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  return write_nodes(scope_, graph_nodes(g), nodes, nullptr, count);
}

cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  DEVSIM_RT_CALL(cudaGraphGetRootNodes, v10000, Light);
  Graph* g = graph_of(graph);
  if (!g) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  return write_nodes(scope_, root_nodes(g), nodes, nullptr, count);
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* type) {
  DEVSIM_RT_CALL(cudaGraphNodeGetType, v10000, Light);
  GraphNode* n = node_of(node);
  if (!n || !type) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *type = static_cast<cudaGraphNodeType>(n->kind);
  DEVSIM_RT_RETURN(cudaSuccess);
}

#if DEVSIM_CUDART_MAJOR != 12
cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                              cudaGraphEdgeData* edges, size_t* count) {
  DEVSIM_RT_CALL(cudaGraphGetEdges, v12030, Light);
  return edges_impl(scope_, graph, from, to, edges, count);
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps, cudaGraphEdgeData* edges,
                                         size_t* count) {
  DEVSIM_RT_CALL(cudaGraphNodeGetDependencies, v12030, Light);
  return node_list_impl(scope_, node, deps, edges, count, false);
}

cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t* deps, cudaGraphEdgeData* edges,
                                           size_t* count) {
  DEVSIM_RT_CALL(cudaGraphNodeGetDependentNodes, v12030, Light);
  return node_list_impl(scope_, node, deps, edges, count, true);
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* edges, size_t count) {
  DEVSIM_RT_CALL(cudaGraphAddDependencies, v12030, Other);
  return change_edges(scope_, graph, from, to, edges, count, true);
}

cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                        const cudaGraphEdgeData* edges, size_t count) {
  DEVSIM_RT_CALL(cudaGraphRemoveDependencies, v12030, Other);
  return change_edges(scope_, graph, from, to, edges, count, false);
}
#else
// CUDA 12's unsuffixed names have no edge data; 12.3's _v2 forms have it. The CUDA 13 header
// here declares the unsuffixed names with edge data, so their definitions keep that prototype
// and read the arguments a CUDA 12 caller passed in the same registers (all are integers or
// pointers): the edge-data slot holds what follows it in the CUDA 12 call.
cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                              cudaGraphEdgeData* count_arg, size_t*) {
  DEVSIM_RT_CALL(cudaGraphGetEdges, v10000, Light);
  return edges_impl(scope_, graph, from, to, nullptr, reinterpret_cast<size_t*>(count_arg));
}

cudaError_t cudaGraphGetEdges_v2(cudaGraph_t graph, cudaGraphNode_t* from, cudaGraphNode_t* to,
                                 cudaGraphEdgeData* edges, size_t* count) {
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_cudaGraphGetEdges_v12030, "cudaGraphGetEdges_v2", Light);
  return edges_impl(scope_, graph, from, to, edges, count);
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* deps, cudaGraphEdgeData* count_arg,
                                         size_t*) {
  DEVSIM_RT_CALL(cudaGraphNodeGetDependencies, v10000, Light);
  return node_list_impl(scope_, node, deps, nullptr, reinterpret_cast<size_t*>(count_arg), false);
}

cudaError_t cudaGraphNodeGetDependencies_v2(cudaGraphNode_t node, cudaGraphNode_t* deps, cudaGraphEdgeData* edges,
                                            size_t* count) {
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_cudaGraphNodeGetDependencies_v12030,
                       "cudaGraphNodeGetDependencies_v2", Light);
  return node_list_impl(scope_, node, deps, edges, count, false);
}

cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t* deps,
                                           cudaGraphEdgeData* count_arg, size_t*) {
  DEVSIM_RT_CALL(cudaGraphNodeGetDependentNodes, v10000, Light);
  return node_list_impl(scope_, node, deps, nullptr, reinterpret_cast<size_t*>(count_arg), true);
}

cudaError_t cudaGraphNodeGetDependentNodes_v2(cudaGraphNode_t node, cudaGraphNode_t* deps, cudaGraphEdgeData* edges,
                                              size_t* count) {
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_cudaGraphNodeGetDependentNodes_v12030,
                       "cudaGraphNodeGetDependentNodes_v2", Light);
  return node_list_impl(scope_, node, deps, edges, count, true);
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* count_arg, size_t) {
  DEVSIM_RT_CALL(cudaGraphAddDependencies, v10000, Other);
  auto count = static_cast<size_t>(reinterpret_cast<uintptr_t>(count_arg));
  return change_edges(scope_, graph, from, to, nullptr, count, true);
}

cudaError_t cudaGraphAddDependencies_v2(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                        const cudaGraphEdgeData* edges, size_t count) {
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddDependencies_v12030, "cudaGraphAddDependencies_v2", Other);
  return change_edges(scope_, graph, from, to, edges, count, true);
}

cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                        const cudaGraphEdgeData* count_arg, size_t) {
  DEVSIM_RT_CALL(cudaGraphRemoveDependencies, v10000, Other);
  auto count = static_cast<size_t>(reinterpret_cast<uintptr_t>(count_arg));
  return change_edges(scope_, graph, from, to, nullptr, count, false);
}

cudaError_t cudaGraphRemoveDependencies_v2(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                           const cudaGraphEdgeData* edges, size_t count) {
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_cudaGraphRemoveDependencies_v12030, "cudaGraphRemoveDependencies_v2",
                       Other);
  return change_edges(scope_, graph, from, to, edges, count, false);
}
#endif

cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node) {
  DEVSIM_RT_CALL(cudaGraphDestroyNode, v10000, Other);
  GraphNode* n = node_of(node);
  if (!n) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  DEVSIM_RT_RETURN(destroy_node(n));
}

cudaError_t cudaGraphClone(cudaGraph_t* out, cudaGraph_t original) {
  DEVSIM_RT_CALL(cudaGraphClone, v10000, Other);
  Graph* g = graph_of(original);
  if (!g || !out) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  Graph* clone = nullptr;
  Status st = clone_graph(g, &clone);
  if (st == Status::Ok) *out = handle_of(clone);
  DEVSIM_RT_RETURN(st);
}

cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t* out, cudaGraphNode_t original, cudaGraph_t clone) {
  DEVSIM_RT_CALL(cudaGraphNodeFindInClone, v10000, Light);
  GraphNode* n = node_of(original);
  Graph* c = graph_of(clone);
  if (!out || !n || !c) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  GraphNode* found = find_in_clone(n, c);
  if (!found) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *out = handle_of(found);
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphDebugDotPrint(cudaGraph_t graph, const char* path, unsigned int) {
  DEVSIM_RT_CALL(cudaGraphDebugDotPrint, v11030, Other);
  Graph* g = graph_of(graph);
  if (!g) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  DEVSIM_RT_RETURN(write_dot(g, path));
}

// Graph memory is reserved per alloc node for the life of the nodes holding it, so there is
// no cache beyond it to trim.
cudaError_t cudaDeviceGraphMemTrim(int device) {
  DEVSIM_RT_CALL(cudaDeviceGraphMemTrim, v11040, Other);
  DEVSIM_RT_RETURN(valid_device(device) ? cudaSuccess : cudaErrorInvalidDevice);
}

cudaError_t cudaDeviceGetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value) {
  DEVSIM_RT_CALL(cudaDeviceGetGraphMemAttribute, v11040, Light);
  if (!valid_device(device)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  if (!value) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  DEVSIM_RT_RETURN(mem_attribute(device, attr, static_cast<uint64_t*>(value)));
}

// Only the high-water marks can be set, and only to zero (which restarts them at the current value).
cudaError_t cudaDeviceSetGraphMemAttribute(int device, cudaGraphMemAttributeType attr, void* value) {
  DEVSIM_RT_CALL(cudaDeviceSetGraphMemAttribute, v11040, Light);
  if (!valid_device(device)) DEVSIM_RT_RETURN(cudaErrorInvalidDevice);
  bool high = attr == cudaGraphMemAttrUsedMemHigh || attr == cudaGraphMemAttrReservedMemHigh;
  if (!value || !high || *static_cast<uint64_t*>(value) != 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  reset_graph_mem_high(device, attr == cudaGraphMemAttrUsedMemHigh, attr == cudaGraphMemAttrReservedMemHigh);
  DEVSIM_RT_RETURN(cudaSuccess);
}

}  // extern "C"
