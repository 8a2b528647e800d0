// cuptiGetGraphId / cuptiGetGraphNodeId / cuptiGetGraphExecId: the ids devsim gives graphs,
// nodes and executable graphs, the ones their records (graphId, graphNodeId) and resource
// callbacks refer to. Only in the shared library: the device model resolves the handles.
#include "api_guard.h"

#include <cupti.h>

using profagent::devsim_cupti::guarded;
using profagent::devsim_cupti::NeedsDriver;
using profagent::devsim_cupti::Session;

extern "C" {

CUptiResult CUPTIAPI cuptiGetGraphId(CUgraph graph, uint32_t* id) {
  return guarded("cuptiGetGraphId", NeedsDriver::Yes, [&](Session&) {
    if (graph == nullptr || id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    return devsim::graph_id_of(graph, id) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
  });
}

CUptiResult CUPTIAPI cuptiGetGraphNodeId(CUgraphNode node, uint64_t* id) {
  return guarded("cuptiGetGraphNodeId", NeedsDriver::Yes, [&](Session&) {
    if (node == nullptr || id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    return devsim::graph_node_id_of(node, id) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
  });
}

CUptiResult CUPTIAPI cuptiGetGraphExecId(CUgraphExec exec, uint32_t* id) {
  return guarded("cuptiGetGraphExecId", NeedsDriver::Yes, [&](Session&) {
    if (exec == nullptr || id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    return devsim::graph_exec_id_of(exec, id) ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
  });
}

}  // extern "C"
