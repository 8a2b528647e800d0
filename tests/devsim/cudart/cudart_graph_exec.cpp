// Executable graphs beyond instantiate/launch: instantiation with parameters, flags, whole-graph
// update with CUDA's result info, per-node parameter updates and enabling/disabling nodes.
#include "cudart_graph_common.h"

using namespace devsim;
using namespace devsim::rt;

namespace {

cudaError_t exec_set(ApiScope& scope, cudaGraphExec_t exec, cudaGraphNode_t node, NodeKind kind, cudaError_t built,
                     const GraphNode& proto) {
  if (built != cudaSuccess) return finish(scope, built);
  GraphExec* e = exec_of(exec);
  GraphNode* n = node_of(node);
  if (!e || !n || n->kind != kind) return finish(scope, cudaErrorInvalidValue);
  return finish(scope, set_exec_node_params(e, n, proto));
}

cudaError_t with_params_impl(ApiScope& scope, cudaGraphExec_t* exec, cudaGraph_t graph,
                             cudaGraphInstantiateParams* p) {
  if (!exec || !p) return finish(scope, cudaErrorInvalidValue);
  Graph* g = graph_of(graph);
  GraphExec* e = nullptr;
  Status st = g ? instantiate(g, p->flags, &e) : Status::InvalidValue;
  p->errNode_out = nullptr;
  p->result_out = st == Status::Ok ? cudaGraphInstantiateSuccess : cudaGraphInstantiateInvalidStructure;
  if (st != Status::Ok) return finish(scope, st);
  *exec = reinterpret_cast<cudaGraphExec_t>(e);
  return finish(scope, cudaSuccess);
}

}  // namespace

extern "C" {

cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t* exec, cudaGraph_t graph, cudaGraphInstantiateParams* p) {
  DEVSIM_RT_CALL(cudaGraphInstantiateWithParams, v12000, Alloc);
  return with_params_impl(scope_, exec, graph, p);
}

cudaError_t cudaGraphInstantiateWithParams_ptsz(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                cudaGraphInstantiateParams* p) {
  DEVSIM_RT_CALL(cudaGraphInstantiateWithParams_ptsz, v12000, Alloc);
  return with_params_impl(scope_, exec, graph, p);
}

cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t exec, unsigned long long* flags) {
  DEVSIM_RT_CALL(cudaGraphExecGetFlags, v12000, Light);
  GraphExec* e = exec_of(exec);
  if (!e || !flags) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *flags = e->flags;
  DEVSIM_RT_RETURN(cudaSuccess);
}

// As CUDA: a changed topology (node count, kinds or edges) fails with
// cudaErrorGraphExecUpdateFailure and says why in the result info; otherwise every node's
// parameters are taken from the new graph and the exec keeps its node ids.
cudaError_t cudaGraphExecUpdate(cudaGraphExec_t exec, cudaGraph_t graph, cudaGraphExecUpdateResultInfo* info) {
  DEVSIM_RT_CALL(cudaGraphExecUpdate, v10020, Other);
  GraphExec* e = exec_of(exec);
  Graph* g = graph_of(graph);
  if (!e || !g || !info) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  UpdateResult r;
  Status st = update_exec(e, g, &r);
  info->result = static_cast<cudaGraphExecUpdateResult>(r.result);
  info->errorNode = r.error_node ? handle_of(r.error_node) : nullptr;
  info->errorFromNode = r.error_from ? handle_of(r.error_from) : nullptr;
  DEVSIM_RT_RETURN(st);
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node,
                                             const cudaKernelNodeParams* p) {
  DEVSIM_RT_CALL(cudaGraphExecKernelNodeSetParams, v10010, Other);
  GraphNode proto;
  cudaError_t built = kernel_prototype(p, &proto);
  return exec_set(scope_, exec, node, NodeKind::Kernel, built, proto);
}

cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, const cudaMemcpy3DParms* p) {
  DEVSIM_RT_CALL(cudaGraphExecMemcpyNodeSetParams, v10020, Other);
  GraphNode proto;
  cudaError_t built = memcpy_prototype(p, &proto);
  return exec_set(scope_, exec, node, NodeKind::Memcpy, built, proto);
}

cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t exec, cudaGraphNode_t node, void* dst,
                                               const void* src, size_t count, cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaGraphExecMemcpyNodeSetParams1D, v11010, Other);
  GraphNode proto;
  cudaError_t built = memcpy1d_prototype(dst, src, count, kind, &proto);
  return exec_set(scope_, exec, node, NodeKind::Memcpy, built, proto);
}

cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(cudaGraphExec_t exec, cudaGraphNode_t node, const void* symbol,
                                                     const void* src, size_t count, size_t offset,
                                                     cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaGraphExecMemcpyNodeSetParamsToSymbol, v11010, Other);
  GraphNode proto;
  cudaError_t built = to_symbol_prototype(symbol, src, count, offset, kind, &proto);
  return exec_set(scope_, exec, node, NodeKind::Memcpy, built, proto);
}

cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(cudaGraphExec_t exec, cudaGraphNode_t node, void* dst,
                                                       const void* symbol, size_t count, size_t offset,
                                                       cudaMemcpyKind kind) {
  DEVSIM_RT_CALL(cudaGraphExecMemcpyNodeSetParamsFromSymbol, v11010, Other);
  GraphNode proto;
  cudaError_t built = from_symbol_prototype(dst, symbol, count, offset, kind, &proto);
  return exec_set(scope_, exec, node, NodeKind::Memcpy, built, proto);
}

cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, const cudaMemsetParams* p) {
  DEVSIM_RT_CALL(cudaGraphExecMemsetNodeSetParams, v10020, Other);
  GraphNode proto;
  cudaError_t built = memset_prototype(p, &proto);
  return exec_set(scope_, exec, node, NodeKind::Memset, built, proto);
}

cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, const cudaHostNodeParams* p) {
  DEVSIM_RT_CALL(cudaGraphExecHostNodeSetParams, v10020, Other);
  GraphNode proto;
  cudaError_t built = host_prototype(p, &proto);
  return exec_set(scope_, exec, node, NodeKind::Host, built, proto);
}

cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node, cudaEvent_t event) {
  DEVSIM_RT_CALL(cudaGraphExecEventRecordNodeSetEvent, v11010, Other);
  GraphNode proto;
  cudaError_t built = event_prototype(NodeKind::EventRecord, event, &proto);
  return exec_set(scope_, exec, node, NodeKind::EventRecord, built, proto);
}

cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t exec, cudaGraphNode_t node, cudaEvent_t event) {
  DEVSIM_RT_CALL(cudaGraphExecEventWaitNodeSetEvent, v11010, Other);
  GraphNode proto;
  cudaError_t built = event_prototype(NodeKind::EventWait, event, &proto);
  return exec_set(scope_, exec, node, NodeKind::EventWait, built, proto);
}

// The child's topology must be the one instantiated; its nodes' parameters are taken over.
cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, cudaGraph_t child) {
  DEVSIM_RT_CALL(cudaGraphExecChildGraphNodeSetParams, v11010, Other);
  GraphExec* e = exec_of(exec);
  GraphNode* n = node_of(node);
  Graph* c = graph_of(child);
  if (!e || !n || !c || n->kind != NodeKind::Child) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  DEVSIM_RT_RETURN(update_exec_child(e, n, c) == Status::Ok ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t exec, cudaGraphNode_t node, cudaGraphNodeParams* p) {
  DEVSIM_RT_CALL(cudaGraphExecNodeSetParams, v12020, Other);
  if (!p) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  GraphNode proto;
  cudaError_t built = generic_prototype(p, &proto);
  return exec_set(scope_, exec, node, proto.kind, built, proto);
}

cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned int enabled) {
  DEVSIM_RT_CALL(cudaGraphNodeSetEnabled, v11060, Other);
  GraphExec* e = exec_of(exec);
  GraphNode* n = node_of(node);
  if (!e || !n) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  DEVSIM_RT_RETURN(set_node_enabled(e, n, enabled != 0));
}

cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t exec, cudaGraphNode_t node, unsigned int* enabled) {
  DEVSIM_RT_CALL(cudaGraphNodeGetEnabled, v11060, Light);
  GraphExec* e = exec_of(exec);
  GraphNode* n = node_of(node);
  bool on = false;
  if (!e || !n || !enabled) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  Status st = node_enabled(e, n, &on);
  *enabled = on ? 1 : 0;
  DEVSIM_RT_RETURN(st);
}

}  // extern "C"
