// CUDA graphs through stream capture: begin/end/is-capturing/capture-info, instantiate,
// launch (replay as a DAG after the launch stream's earlier work), destroy. Explicit
// construction is in cudart_graph_nodes.cpp, topology in cudart_graph_topology.cpp, executable
// graph updates in cudart_graph_exec.cpp; core/graph.h says what is modelled.
#include <vector>

#include "cudart_graph_common.h"

using namespace devsim;

namespace {

cudaError_t begin_impl(ApiScope& scope, cudaStream_t stream, cudaStreamCaptureMode mode, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  Status st = begin_capture(s, mode);
  return rt::finish(scope, st == Status::IllegalState ? cudaErrorIllegalState : rt::to_cuda(st));
}

cudaError_t begin_to_graph_impl(ApiScope& scope, cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                const cudaGraphEdgeData* edges, size_t count, cudaStreamCaptureMode mode, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  Graph* g = graph_from_handle(graph);
  std::vector<GraphNode*> nodes;
  if (!g || !rt::nodes_of(deps, count, &nodes)) return rt::finish(scope, cudaErrorInvalidValue);
  if (!rt::default_edges(edges, count)) return rt::finish(scope, cudaErrorNotSupported);
  Status st = begin_capture_to(s, g, nodes, mode);
  return rt::finish(scope, st == Status::IllegalState ? cudaErrorIllegalState : rt::to_cuda(st));
}

cudaError_t update_deps_impl(ApiScope& scope, cudaStream_t stream, cudaGraphNode_t* deps, const cudaGraphEdgeData* edges,
                             size_t count, unsigned flags, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  std::vector<GraphNode*> nodes;
  if (flags > cudaStreamSetCaptureDependencies || !rt::nodes_of(deps, count, &nodes)) {
    return rt::finish(scope, cudaErrorInvalidValue);
  }
  if (!rt::default_edges(edges, count)) return rt::finish(scope, cudaErrorNotSupported);
  Status st = update_capture_deps(s, nodes, flags == cudaStreamSetCaptureDependencies);
  return rt::finish(scope, st == Status::IllegalState ? cudaErrorIllegalState : rt::to_cuda(st));
}

cudaError_t end_impl(ApiScope& scope, cudaStream_t stream, cudaGraph_t* graph, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  Graph* g = nullptr;
  Status st = end_capture(s, &g);
  if (st == Status::IllegalState) return rt::finish(scope, cudaErrorIllegalState);
  if (st == Status::Ok) *graph = reinterpret_cast<cudaGraph_t>(g);
  return rt::finish(scope, st);
}

cudaError_t is_capturing_impl(ApiScope& scope, cudaStream_t stream, cudaStreamCaptureStatus* status, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  if (!status) return rt::finish(scope, cudaErrorInvalidValue);
  *status = capture_status(s, nullptr) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return rt::finish(scope, cudaSuccess);
}

cudaError_t capture_info_impl(ApiScope& scope, cudaStream_t stream, cudaStreamCaptureStatus* status,
                              unsigned long long* id, cudaGraph_t* graph, const cudaGraphNode_t** deps,
                              const cudaGraphEdgeData** edges, size_t* num_deps, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  if (!status) return rt::finish(scope, cudaErrorInvalidValue);
  // The dependency array stays valid until this thread asks again (CUDA: until the next call
  // on the stream or the end of the capture).
  static thread_local std::vector<cudaGraphNode_t> t_deps;
  uint64_t capture_id = 0;
  Graph* g = nullptr;
  std::vector<GraphNode*> nodes;
  *status = capture_status(s, &capture_id, &g, &nodes) ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  t_deps.clear();
  for (GraphNode* n : nodes) t_deps.push_back(reinterpret_cast<cudaGraphNode_t>(n));
  if (id) *id = capture_id;
  if (graph) *graph = reinterpret_cast<cudaGraph_t>(g);
  if (deps) *deps = t_deps.empty() ? nullptr : t_deps.data();
  if (edges) *edges = nullptr;  // default edges: CUDA allows a null edge-data array for them
  if (num_deps) *num_deps = t_deps.size();
  return rt::finish(scope, cudaSuccess);
}

cudaError_t instantiate_impl(ApiScope& scope, cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  if (!exec) return rt::finish(scope, cudaErrorInvalidValue);
  GraphExec* e = nullptr;
  Graph* g = graph_from_handle(graph);
  Status st = g ? instantiate(g, flags, &e) : Status::InvalidHandle;
  if (st == Status::Ok) *exec = reinterpret_cast<cudaGraphExec_t>(e);
  return rt::finish(scope, st == Status::InvalidHandle ? cudaErrorInvalidValue : rt::to_cuda(st));
}

cudaError_t launch_impl(ApiScope& scope, cudaGraphExec_t exec, cudaStream_t stream, bool ptsz) {
  Stream* s = rt::resolve_stream(stream, ptsz);
  if (!s) return rt::finish(scope, cudaErrorInvalidResourceHandle);
  GraphExec* e = exec_from_handle(exec);
  if (!e) return rt::finish(scope, cudaErrorInvalidValue);
  return rt::finish(scope, launch_graph(e, s, scope.correlation_id()));
}

}  // namespace

extern "C" {

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  DEVSIM_RT_CALL(cudaStreamBeginCapture, v10000, Other);
  return begin_impl(scope_, stream, mode, false);
}

cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, cudaStreamCaptureMode mode) {
  DEVSIM_RT_CALL(cudaStreamBeginCapture_ptsz, v10000, Other);
  return begin_impl(scope_, stream, mode, true);
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  DEVSIM_RT_CALL(cudaStreamEndCapture, v10000, Other);
  if (!graph) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  return end_impl(scope_, stream, graph, false);
}

cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* graph) {
  DEVSIM_RT_CALL(cudaStreamEndCapture_ptsz, v10000, Other);
  if (!graph) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  return end_impl(scope_, stream, graph, true);
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  DEVSIM_RT_CALL(cudaStreamIsCapturing, v10000, Light);
  return is_capturing_impl(scope_, stream, status, false);
}

cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  DEVSIM_RT_CALL(cudaStreamIsCapturing_ptsz, v10000, Light);
  return is_capturing_impl(scope_, stream, status, true);
}

#if DEVSIM_CUDART_MAJOR != 12
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                                     cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                     const cudaGraphEdgeData** edges, size_t* num_deps) {
  DEVSIM_RT_CALL(cudaStreamGetCaptureInfo, v12030, Light);
  return capture_info_impl(scope_, stream, status, id, graph, deps, edges, num_deps, false);
}

cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                                          cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                          const cudaGraphEdgeData** edges, size_t* num_deps) {
  DEVSIM_RT_CALL(cudaStreamGetCaptureInfo_ptsz, v12030, Light);
  return capture_info_impl(scope_, stream, status, id, graph, deps, edges, num_deps, true);
}
#else
// CUDA 12 headers map cudaStreamGetCaptureInfo to _v2 (no edge data); 12.3 added _v3, which
// became CUDA 13's cudaStreamGetCaptureInfo. The unsuffixed name of libcudart.so.12 is the
// CUDA 10.1 call (stream, status, id): only those are written, whatever else the caller passed.
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                                     cudaGraph_t*, const cudaGraphNode_t**, const cudaGraphEdgeData**, size_t*) {
  DEVSIM_RT_CALL(cudaStreamGetCaptureInfo, v10010, Light);
  return capture_info_impl(scope_, stream, status, id, nullptr, nullptr, nullptr, nullptr, false);
}

cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                          unsigned long long* id, cudaGraph_t*, const cudaGraphNode_t**,
                                          const cudaGraphEdgeData**, size_t*) {
  DEVSIM_RT_CALL(cudaStreamGetCaptureInfo_ptsz, v10010, Light);
  return capture_info_impl(scope_, stream, status, id, nullptr, nullptr, nullptr, nullptr, true);
}

cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                                        cudaGraph_t* graph, const cudaGraphNode_t** deps, size_t* num_deps) {
  DEVSIM_RT_CALL(cudaStreamGetCaptureInfo_v2, v11030, Light);
  return capture_info_impl(scope_, stream, status, id, graph, deps, nullptr, num_deps, false);
}

cudaError_t cudaStreamGetCaptureInfo_v2_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                             unsigned long long* id, cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                             size_t* num_deps) {
  DEVSIM_RT_CALL(cudaStreamGetCaptureInfo_v2_ptsz, v11030, Light);
  return capture_info_impl(scope_, stream, status, id, graph, deps, nullptr, num_deps, true);
}

cudaError_t cudaStreamGetCaptureInfo_v3(cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                                        cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                        const cudaGraphEdgeData** edges, size_t* num_deps) {
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030, "cudaStreamGetCaptureInfo_v3", Light);
  return capture_info_impl(scope_, stream, status, id, graph, deps, edges, num_deps, false);
}

cudaError_t cudaStreamGetCaptureInfo_v3_ptsz(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                             unsigned long long* id, cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                             const cudaGraphEdgeData** edges, size_t* num_deps) {
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_ptsz_v12030,
                       "cudaStreamGetCaptureInfo_v3_ptsz", Light);
  return capture_info_impl(scope_, stream, status, id, graph, deps, edges, num_deps, true);
}
#endif

cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                          const cudaGraphEdgeData* edges, size_t count, cudaStreamCaptureMode mode) {
  DEVSIM_RT_CALL(cudaStreamBeginCaptureToGraph, v12030, Other);
  return begin_to_graph_impl(scope_, stream, graph, deps, edges, count, mode, false);
}

cudaError_t cudaStreamBeginCaptureToGraph_ptsz(cudaStream_t stream, cudaGraph_t graph, const cudaGraphNode_t* deps,
                                               const cudaGraphEdgeData* edges, size_t count,
                                               cudaStreamCaptureMode mode) {
  DEVSIM_RT_CALL(cudaStreamBeginCaptureToGraph_ptsz, v12030, Other);
  return begin_to_graph_impl(scope_, stream, graph, deps, edges, count, mode, true);
}

#if DEVSIM_CUDART_MAJOR != 12
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* deps,
                                                const cudaGraphEdgeData* edges, size_t count, unsigned int flags) {
  DEVSIM_RT_CALL(cudaStreamUpdateCaptureDependencies, v12030, Light);
  return update_deps_impl(scope_, stream, deps, edges, count, flags, false);
}

cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream, cudaGraphNode_t* deps,
                                                     const cudaGraphEdgeData* edges, size_t count,
                                                     unsigned int flags) {
  DEVSIM_RT_CALL(cudaStreamUpdateCaptureDependencies_ptsz, v12030, Light);
  return update_deps_impl(scope_, stream, deps, edges, count, flags, true);
}
#else
// CUDA 12's unsuffixed form has no edge data: (stream, deps, count, flags). The CUDA 13 header
// declares the name with edge data, so the definition keeps that prototype and reads the
// registers a CUDA 12 caller filled (all integers or pointers); 12.3 added the _v2 form.
cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t* deps,
                                                const cudaGraphEdgeData* count_arg, size_t flags_arg, unsigned int) {
  DEVSIM_RT_CALL(cudaStreamUpdateCaptureDependencies, v11030, Light);
  auto count = static_cast<size_t>(reinterpret_cast<uintptr_t>(count_arg));
  return update_deps_impl(scope_, stream, deps, nullptr, count, static_cast<unsigned>(flags_arg), false);
}

cudaError_t cudaStreamUpdateCaptureDependencies_v2(cudaStream_t stream, cudaGraphNode_t* deps,
                                                   const cudaGraphEdgeData* edges, size_t count, unsigned int flags) {
  DEVSIM_RT_CALL_NAMED(CUPTI_RUNTIME_TRACE_CBID_cudaStreamUpdateCaptureDependencies_v12030,
                       "cudaStreamUpdateCaptureDependencies_v2", Light);
  return update_deps_impl(scope_, stream, deps, edges, count, flags, false);
}
#endif

cudaError_t cudaGraphCreate(cudaGraph_t* graph, unsigned int flags) {
  DEVSIM_RT_CALL(cudaGraphCreate, v10000, Other);
  if (!graph || flags != 0) DEVSIM_RT_RETURN(cudaErrorInvalidValue);
  *graph = reinterpret_cast<cudaGraph_t>(create_graph());
  DEVSIM_RT_RETURN(cudaSuccess);
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  DEVSIM_RT_CALL(cudaGraphInstantiate, v12000, Alloc);
  return instantiate_impl(scope_, exec, graph, flags);
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  DEVSIM_RT_CALL(cudaGraphInstantiateWithFlags, v11040, Alloc);
  return instantiate_impl(scope_, exec, graph, flags);
}

// Uploading is instant: there is no device memory to prepare.
cudaError_t cudaGraphUpload(cudaGraphExec_t exec, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaGraphUpload, v10000, Other);
  if (!rt::resolve_stream(stream, false)) DEVSIM_RT_RETURN(cudaErrorInvalidResourceHandle);
  DEVSIM_RT_RETURN(exec ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaGraphUpload_ptsz, v10000, Other);
  if (!rt::resolve_stream(stream, true)) DEVSIM_RT_RETURN(cudaErrorInvalidResourceHandle);
  DEVSIM_RT_RETURN(exec ? cudaSuccess : cudaErrorInvalidValue);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaGraphLaunch, v10000, Launch);
  return launch_impl(scope_, exec, stream, false);
}

cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t exec, cudaStream_t stream) {
  DEVSIM_RT_CALL(cudaGraphLaunch_ptsz, v10000, Launch);
  return launch_impl(scope_, exec, stream, true);
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  DEVSIM_RT_CALL(cudaGraphExecDestroy, v10000, Other);
  Status st = destroy_exec(reinterpret_cast<GraphExec*>(exec));
  DEVSIM_RT_RETURN(st == Status::InvalidHandle ? cudaErrorInvalidValue : rt::to_cuda(st));
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  DEVSIM_RT_CALL(cudaGraphDestroy, v10000, Other);
  Status st = destroy_graph(reinterpret_cast<Graph*>(graph));
  DEVSIM_RT_RETURN(st == Status::InvalidHandle ? cudaErrorInvalidValue : rt::to_cuda(st));
}

}  // extern "C"
