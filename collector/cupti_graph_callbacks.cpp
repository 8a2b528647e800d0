// CUPTI's graph resource callbacks, feeding the capture-time map (collector/graph_captures.h):
// GRAPHNODE_CREATED on the thread and inside the API call that made the node (a captured
// launch, copy or set, or cudaGraphAdd*Node), GRAPHNODE_CLONED for each node an instantiation
// or cudaGraphClone copied. They stay enabled whatever is recorded: a graph is often captured
// and instantiated before the window that replays it. Both are rare (per node made, never per
// replay), so they cost nothing per launch.
#include <cupti.h>

#include "collector/api.h"
#include "collector/cupti_callbacks.h"
#include "collector/graph_captures.h"

namespace profagent::collector {
namespace {

uint64_t node_id(const CuptiApi& api, CUgraphNode node) noexcept {
  uint64_t id = 0;
  if (node == nullptr || api.get_graph_node_id(node, &id) != CUPTI_SUCCESS) return 0;
  return id;
}

}  // namespace

void on_graph_resource(const CuptiApi& api, CUpti_CallbackId cbid, const void* data) noexcept {
  const auto* resource = static_cast<const CUpti_ResourceData*>(data);
  if (resource == nullptr || resource->resourceDescriptor == nullptr || !api.get_graph_node_id) return;
  const auto* graph = static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
  AgentBusy busy;  // cuptiGetGraphNodeId is the agent's call
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
    note_graph_node_created(node_id(api, graph->node));
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
    note_graph_node_cloned(node_id(api, graph->node), node_id(api, graph->originalNode));
  }
}

bool enable_graph_callbacks(const CuptiApi& api, CUpti_SubscriberHandle subscriber) noexcept {
  if (!api.enable_callback || !api.get_graph_node_id) return false;
  AgentBusy busy;
  for (CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED}) {
    if (api.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, cbid) != CUPTI_SUCCESS) return false;
  }
  return true;
}

}  // namespace profagent::collector
