// Explicit graph construction: cudaGraphAdd*Node of every modelled kind, the generic
// cudaGraphAddNode, and each kind's GetParams/SetParams and kernel-node attributes.
#include "cudart_graph_common.h"
#include "device.h"

using namespace devsim;
using namespace devsim::rt;

namespace {

cudaError_t add_prototype(ApiScope& scope, cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                          size_t count, cudaError_t built, const GraphNode& proto) {
  if (built != cudaSuccess) return finish(scope, built);
  std::vector<GraphNode*> dep_nodes;
  Graph* g = graph_of(graph);
  if (!out || !g || !nodes_of(deps, count, &dep_nodes)) return finish(scope, cudaErrorInvalidValue);
  GraphNode* n = nullptr;
  Status st = add_node(g, dep_nodes, proto.kind, proto, &n);
  if (st == Status::Ok) *out = handle_of(n);
  return finish(scope, st);
}

cudaError_t add_child(ApiScope& scope, cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                      size_t count, cudaGraph_t child) {
  std::vector<GraphNode*> dep_nodes;
  Graph* g = graph_of(graph);
  Graph* c = graph_of(child);
  if (!out || !g || !c || !nodes_of(deps, count, &dep_nodes)) return finish(scope, cudaErrorInvalidValue);
  GraphNode* n = nullptr;
  Status st = add_child_node(g, dep_nodes, c, &n);
  if (st == Status::Ok) *out = handle_of(n);
  return finish(scope, st);
}

cudaError_t add_alloc(ApiScope& scope, cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                      size_t count, const cudaMemPoolProps& props, size_t bytes, void** dptr) {
  std::vector<GraphNode*> dep_nodes;
  Graph* g = graph_of(graph);
  if (!out || !g || !dptr || !nodes_of(deps, count, &dep_nodes)) return finish(scope, cudaErrorInvalidValue);
  if (props.location.type != cudaMemLocationTypeDevice || !valid_device(props.location.id)) {
    return finish(scope, cudaErrorInvalidValue);
  }
  GraphNode* n = nullptr;
  Status st = add_mem_alloc_node(g, dep_nodes, props.location.id, bytes, &n);
  if (st != Status::Ok) return finish(scope, st);
  *dptr = n->memory->ptr;
  *out = handle_of(n);
  return finish(scope, cudaSuccess);
}

cudaError_t add_free(ApiScope& scope, cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                     size_t count, void* dptr) {
  std::vector<GraphNode*> dep_nodes;
  Graph* g = graph_of(graph);
  if (!out || !g || !nodes_of(deps, count, &dep_nodes)) return finish(scope, cudaErrorInvalidValue);
  GraphNode* n = nullptr;
  Status st = add_mem_free_node(g, dep_nodes, dptr, &n);
  if (st == Status::Ok) *out = handle_of(n);
  return finish(scope, st);
}

cudaError_t add_generic(ApiScope& scope, cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                        const cudaGraphEdgeData* edges, size_t count, cudaGraphNodeParams* p) {
  if (!p) return finish(scope, cudaErrorInvalidValue);
  if (!default_edges(edges, count)) return finish(scope, cudaErrorNotSupported);
  switch (p->type) {
    case cudaGraphNodeTypeGraph: return add_child(scope, out, graph, deps, count, p->graph.graph);
    case cudaGraphNodeTypeMemAlloc:
      return add_alloc(scope, out, graph, deps, count, p->alloc.poolProps, p->alloc.bytesize, &p->alloc.dptr);
    case cudaGraphNodeTypeMemFree: return add_free(scope, out, graph, deps, count, p->free.dptr);
    default: {
      GraphNode proto;
      cudaError_t built = generic_prototype(p, &proto);
      return add_prototype(scope, out, graph, deps, count, built, proto);
    }
  }
}

// Reads a node of the expected kind under its handle.
GraphNode* node_of_kind(cudaGraphNode_t handle, NodeKind kind) {
  GraphNode* n = node_of(handle);
  return n && n->kind == kind ? n : nullptr;
}

template <typename T>
cudaError_t get_params(ApiScope& scope, cudaGraphNode_t node, NodeKind kind, T* out) {
  GraphNode* n = node_of_kind(node, kind);
  if (!n || !out) return finish(scope, cudaErrorInvalidValue);
  return finish(scope, load_params(*n, out) ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t set_params(ApiScope& scope, cudaGraphNode_t node, NodeKind kind, cudaError_t built, const GraphNode& proto) {
  if (built != cudaSuccess) return finish(scope, built);
  GraphNode* n = node_of_kind(node, kind);
  if (!n) return finish(scope, cudaErrorInvalidValue);
  return finish(scope, set_node_params(n, proto));
}

cudaError_t event_of(ApiScope& scope, cudaGraphNode_t node, NodeKind kind, cudaEvent_t* out) {
  GraphNode* n = node_of_kind(node, kind);
  if (!n || !out) return finish(scope, cudaErrorInvalidValue);
  *out = reinterpret_cast<cudaEvent_t>(n->event);
  return finish(scope, cudaSuccess);
}

}  // namespace

extern "C" {

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                                   const cudaKernelNodeParams* p) {
  DEVSIM_RT_CALL(cudaGraphAddKernelNode, v10000, Other);
  GraphNode proto;
  return add_prototype(scope_, out, graph, deps, count, kernel_prototype(p, &proto), proto);
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                                   const cudaMemcpy3DParms* p) {
  DEVSIM_RT_CALL(cudaGraphAddMemcpyNode, v10000, Other);
  GraphNode proto;
  return add_prototype(scope_, out, graph, deps, count, memcpy_prototype(p, &proto), proto);
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                     size_t count, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaGraphAddMemcpyNode1D, v11010, Other);
  GraphNode proto;
  return add_prototype(scope_, out, graph, deps, count, memcpy1d_prototype(dst, src, bytes, kind, &proto), proto);
}

cudaError_t cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                           size_t count, const void* symbol, const void* src, size_t bytes,
                                           size_t offset, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaGraphAddMemcpyNodeToSymbol, v11010, Other);
  GraphNode proto;
  cudaError_t built = to_symbol_prototype(symbol, src, bytes, offset, kind, &proto);
  return add_prototype(scope_, out, graph, deps, count, built, proto);
}

cudaError_t cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                             size_t count, void* dst, const void* symbol, size_t bytes,
                                             size_t offset, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaGraphAddMemcpyNodeFromSymbol, v11010, Other);
  GraphNode proto;
  cudaError_t built = from_symbol_prototype(dst, symbol, bytes, offset, kind, &proto);
  return add_prototype(scope_, out, graph, deps, count, built, proto);
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                                   const cudaMemsetParams* p) {
  DEVSIM_RT_CALL(cudaGraphAddMemsetNode, v10000, Other);
  GraphNode proto;
  return add_prototype(scope_, out, graph, deps, count, memset_prototype(p, &proto), proto);
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count,
                                 const cudaHostNodeParams* p) {
  DEVSIM_RT_CALL(cudaGraphAddHostNode, v10000, Other);
  GraphNode proto;
  return add_prototype(scope_, out, graph, deps, count, host_prototype(p, &proto), proto);
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps, size_t count) {
  DEVSIM_RT_CALL(cudaGraphAddEmptyNode, v10000, Other);
  GraphNode proto;
  return add_prototype(scope_, out, graph, deps, count, cudaSuccess, proto);
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                        size_t count, cudaEvent_t event) {
  DEVSIM_RT_CALL(cudaGraphAddEventRecordNode, v11010, Other);
  GraphNode proto;
  cudaError_t built = event_prototype(NodeKind::EventRecord, event, &proto);
  return add_prototype(scope_, out, graph, deps, count, built, proto);
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                      size_t count, cudaEvent_t event) {
  DEVSIM_RT_CALL(cudaGraphAddEventWaitNode, v11010, Other);
  GraphNode proto;
  cudaError_t built = event_prototype(NodeKind::EventWait, event, &proto);
  return add_prototype(scope_, out, graph, deps, count, built, proto);
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                       size_t count, cudaGraph_t child) {
  DEVSIM_RT_CALL(cudaGraphAddChildGraphNode, v10000, Other);
  return add_child(scope_, out, graph, deps, count, child);
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                     size_t count, cudaMemAllocNodeParams* p) {
  DEVSIM_RT_CALL(cudaGraphAddMemAllocNode, v11040, Alloc);
  if (!p) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  return add_alloc(scope_, out, graph, deps, count, p->poolProps, p->bytesize, &p->dptr);
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                    size_t count, void* dptr) {
  DEVSIM_RT_CALL(cudaGraphAddMemFreeNode, v11040, Other);
  return add_free(scope_, out, graph, deps, count, dptr);
}

#if DEVSIM_CUDART_MAJOR != 12
cudaError_t cudaGraphAddNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                             const cudaGraphEdgeData* edges, size_t count, cudaGraphNodeParams* p) {
  DEVSIM_RT_CALL(cudaGraphAddNode, v12030, Other);
  return add_generic(scope_, out, graph, deps, edges, count, p);
}
#else
// CUDA 12.2's cudaGraphAddNode has no edge data: (out, graph, deps, count, params). The
// CUDA 13 header here declares the name with edge data, so the definition keeps that
// prototype and reads its 4th and 5th arguments as what a CUDA 12 caller passed (integer and
// pointer arguments travel in the same registers). 12.3 added the _v2 form with edge data.
cudaError_t cudaGraphAddNode(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                             const cudaGraphEdgeData* count_arg, size_t params_arg, cudaGraphNodeParams*) {
  DEVSIM_RT_CALL(cudaGraphAddNode, v12020, Other);
  auto count = static_cast<size_t>(reinterpret_cast<uintptr_t>(count_arg));
  auto* p = reinterpret_cast<cudaGraphNodeParams*>(params_arg);
  return add_generic(scope_, out, graph, deps, nullptr, count, p);
}

cudaError_t cudaGraphAddNode_v2(cudaGraphNode_t* out, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                const cudaGraphEdgeData* edges, size_t count, cudaGraphNodeParams* p) {
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddNode_v12030, "cudaGraphAddNode_v2", Other);
  return add_generic(scope_, out, graph, deps, edges, count, p);
}
#endif

cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node, cudaGraphNodeParams* p) {
  DEVSIM_RT_CALL(cudaGraphNodeSetParams, v12020, Other);
  if (!p) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  GraphNode proto;
  cudaError_t built = generic_prototype(p, &proto);
  return set_params(scope_, node, proto.kind, built, proto);
}

cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, cudaKernelNodeParams* out) {
  DEVSIM_RT_CALL(cudaGraphKernelNodeGetParams, v10000, Light);
  return get_params(scope_, node, NodeKind::Kernel, out);
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const cudaKernelNodeParams* p) {
  DEVSIM_RT_CALL(cudaGraphKernelNodeSetParams, v10000, Other);
  GraphNode proto;
  cudaError_t built = kernel_prototype(p, &proto);
  return set_params(scope_, node, NodeKind::Kernel, built, proto);
}

cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node, cudaMemcpy3DParms* out) {
  DEVSIM_RT_CALL(cudaGraphMemcpyNodeGetParams, v10000, Light);
  return get_params(scope_, node, NodeKind::Memcpy, out);
}

cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const cudaMemcpy3DParms* p) {
  DEVSIM_RT_CALL(cudaGraphMemcpyNodeSetParams, v10000, Other);
  GraphNode proto;
  cudaError_t built = memcpy_prototype(p, &proto);
  return set_params(scope_, node, NodeKind::Memcpy, built, proto);
}

cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void* dst, const void* src, size_t count,
                                           cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaGraphMemcpyNodeSetParams1D, v11010, Other);
  GraphNode proto;
  cudaError_t built = memcpy1d_prototype(dst, src, count, kind, &proto);
  return set_params(scope_, node, NodeKind::Memcpy, built, proto);
}

cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node, const void* symbol, const void* src,
                                                 size_t count, size_t offset, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaGraphMemcpyNodeSetParamsToSymbol, v11010, Other);
  GraphNode proto;
  cudaError_t built = to_symbol_prototype(symbol, src, count, offset, kind, &proto);
  return set_params(scope_, node, NodeKind::Memcpy, built, proto);
}

cudaError_t cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node, void* dst, const void* symbol,
                                                   size_t count, size_t offset, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaGraphMemcpyNodeSetParamsFromSymbol, v11010, Other);
  GraphNode proto;
  cudaError_t built = from_symbol_prototype(dst, symbol, count, offset, kind, &proto);
  return set_params(scope_, node, NodeKind::Memcpy, built, proto);
}

cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node, cudaMemsetParams* out) {
  DEVSIM_RT_CALL(cudaGraphMemsetNodeGetParams, v10000, Light);
  return get_params(scope_, node, NodeKind::Memset, out);
}

cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const cudaMemsetParams* p) {
  DEVSIM_RT_CALL(cudaGraphMemsetNodeSetParams, v10000, Other);
  GraphNode proto;
  cudaError_t built = memset_prototype(p, &proto);
  return set_params(scope_, node, NodeKind::Memset, built, proto);
}

cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, cudaHostNodeParams* out) {
  DEVSIM_RT_CALL(cudaGraphHostNodeGetParams, v10000, Light);
  return get_params(scope_, node, NodeKind::Host, out);
}

cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const cudaHostNodeParams* p) {
  DEVSIM_RT_CALL(cudaGraphHostNodeSetParams, v10000, Other);
  GraphNode proto;
  cudaError_t built = host_prototype(p, &proto);
  return set_params(scope_, node, NodeKind::Host, built, proto);
}

cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* out) {
  DEVSIM_RT_CALL(cudaGraphEventRecordNodeGetEvent, v11010, Light);
  return event_of(scope_, node, NodeKind::EventRecord, out);
}

cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
  DEVSIM_RT_CALL(cudaGraphEventRecordNodeSetEvent, v11010, Other);
  GraphNode proto;
  cudaError_t built = event_prototype(NodeKind::EventRecord, event, &proto);
  return set_params(scope_, node, NodeKind::EventRecord, built, proto);
}

cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t* out) {
  DEVSIM_RT_CALL(cudaGraphEventWaitNodeGetEvent, v11010, Light);
  return event_of(scope_, node, NodeKind::EventWait, out);
}

cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t event) {
  DEVSIM_RT_CALL(cudaGraphEventWaitNodeSetEvent, v11010, Other);
  GraphNode proto;
  cudaError_t built = event_prototype(NodeKind::EventWait, event, &proto);
  return set_params(scope_, node, NodeKind::EventWait, built, proto);
}

cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t* out) {
  DEVSIM_RT_CALL(cudaGraphChildGraphNodeGetGraph, v10000, Light);
  GraphNode* n = node_of_kind(node, NodeKind::Child);
  if (!n || !out) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *out = handle_of(n->child.get());
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, cudaMemAllocNodeParams* out) {
  DEVSIM_RT_CALL(cudaGraphMemAllocNodeGetParams, v11040, Light);
  GraphNode* n = node_of_kind(node, NodeKind::MemAlloc);
  if (!n || !out) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *out = cudaMemAllocNodeParams{};
  out->poolProps.allocType = cudaMemAllocationTypePinned;
  out->poolProps.location = {cudaMemLocationTypeDevice, n->memory->device};
  out->bytesize = n->memory->size;
  out->dptr = n->memory->ptr;
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void* dptr_out) {
  DEVSIM_RT_CALL(cudaGraphMemFreeNodeGetParams, v11040, Light);
  GraphNode* n = node_of_kind(node, NodeKind::MemFree);
  if (!n || !dptr_out) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *static_cast<void**>(dptr_out) = n->free_ptr;
  DEVSIM_RT_RETURN(cudaSuccess);
}

// Attributes are stored and read back; they do not change the kernel's modelled timing.
cudaError_t cudaGraphKernelNodeGetAttribute(cudaGraphNode_t node, cudaKernelNodeAttrID attr,
                                            cudaKernelNodeAttrValue* out) {
  DEVSIM_RT_CALL(cudaGraphKernelNodeGetAttribute, v11000, Light);
  GraphNode* n = node_of_kind(node, NodeKind::Kernel);
  if (!n || !out) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *out = cudaKernelNodeAttrValue{};
  auto it = n->attributes.find(int(attr));
  if (it != n->attributes.end()) std::memcpy(out, it->second.data(), sizeof(*out));
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphKernelNodeSetAttribute(cudaGraphNode_t node, cudaKernelNodeAttrID attr,
                                            const cudaKernelNodeAttrValue* value) {
  DEVSIM_RT_CALL(cudaGraphKernelNodeSetAttribute, v11000, Other);
  GraphNode* n = node_of_kind(node, NodeKind::Kernel);
  if (!n || !value) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  GraphNode proto;
  proto.kind = NodeKind::Kernel;
  proto.op = n->op;
  proto.api_params = n->api_params;
  proto.attributes = n->attributes;
  auto* bytes = reinterpret_cast<const uint8_t*>(value);
  proto.attributes[int(attr)].assign(bytes, bytes + sizeof(*value));
  DEVSIM_RT_RETURN(set_node_params(n, proto));
}

cudaError_t cudaGraphKernelNodeCopyAttributes(cudaGraphNode_t dst, cudaGraphNode_t src) {
  DEVSIM_RT_CALL(cudaGraphKernelNodeCopyAttributes, v11000, Other);
  GraphNode* d = node_of_kind(dst, NodeKind::Kernel);
  GraphNode* s = node_of_kind(src, NodeKind::Kernel);
  if (!d || !s) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  GraphNode proto;
  proto.kind = NodeKind::Kernel;
  proto.op = d->op;
  proto.api_params = d->api_params;
  proto.attributes = s->attributes;
  DEVSIM_RT_RETURN(set_node_params(d, proto));
}

}  // extern "C"
