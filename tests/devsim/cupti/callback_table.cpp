#include "callback_table.h"

#include <cupti_driver_cbid.h>
#include <cupti_nvtx_cbid.h>
#include <cupti_runtime_cbid.h>

#include <memory>

// The opaque handle type of cupti_callbacks.h.
struct CUpti_Subscriber_st {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  // enabled[domain][cbid]
  std::unique_ptr<std::atomic<bool>[]> enabled[CUPTI_CB_DOMAIN_SIZE];
};

namespace profagent::devsim_cupti {

uint32_t callback_id_count(CUpti_CallbackDomain domain) {
  switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE: return CUPTI_CBID_STATE_SIZE;
    default: return 0;
  }
}

namespace {

// Per-thread record of calls between their enter and exit callbacks, holding the
// correlationData slot the client may write on enter and read on exit.
struct Frame {
  uint32_t correlation_id;
  uint64_t correlation_data;
};
constexpr int kMaxFrames = 64;
struct FrameStack {
  Frame frames[kMaxFrames];
  int depth = 0;
};
thread_local FrameStack t_frames;

bool enabled(const CUpti_Subscriber_st* s, CUpti_CallbackDomain domain, uint32_t cbid) {
  return cbid < callback_id_count(domain) && s->enabled[domain][cbid].load(std::memory_order_relaxed);
}

CUpti_CallbackDomain domain_of(const devsim::ApiCall& call) {
  return call.domain == devsim::ApiDomain::Runtime ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                   : CUPTI_CB_DOMAIN_DRIVER_API;
}

CUpti_CallbackData callback_data(const devsim::ApiCall& call, CUpti_ApiCallbackSite site) {
  CUpti_CallbackData data{};
  data.callbackSite = site;
  data.functionName = call.name;
  data.functionParams = call.params;
  data.symbolName = call.symbol_name;
  // devsim's seam carries the context's uid, not its CUcontext handle.
  data.context = nullptr;
  data.contextUid = call.context_id;
  data.correlationId = call.correlation_id;
  return data;
}

// The frame of this call, dropping frames of calls whose exit was never dispatched.
Frame* find_frame(uint32_t correlation_id) {
  FrameStack& stack = t_frames;
  while (stack.depth > 0) {
    Frame& top = stack.frames[stack.depth - 1];
    if (top.correlation_id == correlation_id) return &top;
    --stack.depth;
  }
  return nullptr;
}

}  // namespace

bool CallbackTable::is_current(CUpti_SubscriberHandle subscriber) const {
  return subscriber != nullptr && subscriber == current_.load();
}

CUptiResult CallbackTable::subscribe(CUpti_SubscriberHandle* subscriber,
                                     CUpti_CallbackFunc callback, void* userdata) {
  if (subscriber == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  auto* created = new CUpti_Subscriber_st();
  created->callback = callback;
  created->userdata = userdata;
  for (int d = 0; d < CUPTI_CB_DOMAIN_SIZE; ++d) {
    const uint32_t count = callback_id_count(static_cast<CUpti_CallbackDomain>(d));
    created->enabled[d] = std::make_unique<std::atomic<bool>[]>(count);  // value-initialised: false
  }
  CUpti_SubscriberHandle expected = nullptr;
  if (!current_.compare_exchange_strong(expected, created)) {
    delete created;  // never published
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  ever_subscribed_.store(true, std::memory_order_relaxed);
  *subscriber = created;
  return CUPTI_SUCCESS;
}

CUptiResult CallbackTable::unsubscribe(CUpti_SubscriberHandle subscriber) {
  CUpti_SubscriberHandle expected = subscriber;
  if (subscriber == nullptr || !current_.compare_exchange_strong(expected, nullptr)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CallbackTable::enable_callback(bool enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (!is_current(subscriber) || cbid >= callback_id_count(domain)) return CUPTI_ERROR_INVALID_PARAMETER;
  subscriber->enabled[domain][cbid].store(enable);
  return CUPTI_SUCCESS;
}

CUptiResult CallbackTable::enable_domain(bool enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain) {
  const uint32_t count = callback_id_count(domain);
  if (!is_current(subscriber) || count == 0) return CUPTI_ERROR_INVALID_PARAMETER;
  for (uint32_t cbid = 0; cbid < count; ++cbid) subscriber->enabled[domain][cbid].store(enable);
  return CUPTI_SUCCESS;
}

CUptiResult CallbackTable::enable_all_domains(bool enable, CUpti_SubscriberHandle subscriber) {
  if (!is_current(subscriber)) return CUPTI_ERROR_INVALID_PARAMETER;
  for (int d = CUPTI_CB_DOMAIN_DRIVER_API; d < CUPTI_CB_DOMAIN_SIZE; ++d) {
    enable_domain(enable, subscriber, static_cast<CUpti_CallbackDomain>(d));
  }
  return CUPTI_SUCCESS;
}

CUptiResult CallbackTable::callback_state(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                          CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const {
  if (enable == nullptr || !is_current(subscriber) || cbid >= callback_id_count(domain)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  *enable = subscriber->enabled[domain][cbid].load() ? 1 : 0;
  return CUPTI_SUCCESS;
}

void CallbackTable::on_api_enter(const devsim::ApiCall& call) {
  CUpti_SubscriberHandle s = current_.load();
  if (s == nullptr || s->callback == nullptr) return;
  FrameStack& stack = t_frames;
  if (stack.depth == kMaxFrames) return;
  Frame& frame = stack.frames[stack.depth++];
  frame = Frame{call.correlation_id, 0};
  const CUpti_CallbackDomain domain = domain_of(call);
  if (!enabled(s, domain, call.cbid)) return;
  CUpti_CallbackData data = callback_data(call, CUPTI_API_ENTER);
  data.correlationData = &frame.correlation_data;
  s->callback(s->userdata, domain, call.cbid, &data);
}

void CallbackTable::on_api_exit(const devsim::ApiCall& call) {
  CUpti_SubscriberHandle s = current_.load();
  Frame* frame = find_frame(call.correlation_id);
  uint64_t orphan_data = 0;
  const CUpti_CallbackDomain domain = domain_of(call);
  if (s != nullptr && s->callback != nullptr && enabled(s, domain, call.cbid)) {
    CUpti_CallbackData data = callback_data(call, CUPTI_API_EXIT);
    data.correlationData = frame ? &frame->correlation_data : &orphan_data;
    int32_t result = call.result;
    data.functionReturnValue = &result;
    s->callback(s->userdata, domain, call.cbid, &data);
  }
  if (frame != nullptr) --t_frames.depth;
}

void CallbackTable::on_graph_event(const devsim::GraphEvent& event) {
  CUpti_SubscriberHandle s = current_.load();
  if (s == nullptr || s->callback == nullptr || !enabled(s, CUPTI_CB_DOMAIN_RESOURCE, event.cbid)) return;
  CUpti_GraphData graph{};
  graph.graph = static_cast<CUgraph>(const_cast<void*>(event.graph));
  graph.originalGraph = static_cast<CUgraph>(const_cast<void*>(event.original_graph));
  graph.node = static_cast<CUgraphNode>(const_cast<void*>(event.node));
  graph.originalNode = static_cast<CUgraphNode>(const_cast<void*>(event.original_node));
  graph.nodeType = static_cast<CUgraphNodeType>(event.node_type);
  graph.graphExec = static_cast<CUgraphExec>(const_cast<void*>(event.exec));
  CUpti_ResourceData data{};
  data.context = nullptr;  // devsim's seam carries context uids, not CUcontext handles
  data.resourceDescriptor = &graph;
  s->callback(s->userdata, CUPTI_CB_DOMAIN_RESOURCE, event.cbid, &data);
}

}  // namespace profagent::devsim_cupti
