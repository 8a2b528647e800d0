// The callback API: one subscriber (CUPTI 13.0 supports only one), the (domain, cbid) switches
// it enabled, and the dispatch of runtime/driver API enter and exit callbacks.
//
// Subscriber objects are never freed: a callback may still be running on another thread when
// the client unsubscribes, and a subscriber is a few hundred bytes per subscription.
#pragma once

#include "../core/devsim_trace.h"

#include <cupti_callbacks.h>

#include <atomic>

namespace profagent::devsim_cupti {

// Number of callback ids CUPTI defines for a domain, 0 for an invalid domain.
uint32_t callback_id_count(CUpti_CallbackDomain domain);
// "cudaLaunchKernel_v7000" etc. (the CBID enumerator without its prefix), or nullptr.
const char* callback_name(CUpti_CallbackDomain domain, uint32_t cbid);

class CallbackTable {
 public:
  CUptiResult subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                        void* userdata);
  CUptiResult unsubscribe(CUpti_SubscriberHandle subscriber);
  CUptiResult enable_callback(bool enable, CUpti_SubscriberHandle subscriber,
                              CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
  CUptiResult enable_domain(bool enable, CUpti_SubscriberHandle subscriber,
                            CUpti_CallbackDomain domain);
  CUptiResult enable_all_domains(bool enable, CUpti_SubscriberHandle subscriber);
  CUptiResult callback_state(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                             CUpti_CallbackDomain domain, CUpti_CallbackId cbid) const;
  bool has_subscriber() const { return current_.load() != nullptr; }
  // False until the first subscription: only then can a call have a frame or a callback, so
  // a process using the activity API alone pays nothing per call here (as with NVIDIA's CUPTI).
  bool ever_subscribed() const { return ever_subscribed_.load(std::memory_order_relaxed); }
  // cuptiFinalize: forget the subscriber.
  void reset() { current_.store(nullptr); }

  // On the calling thread, without any CUPTI lock held (the client may call CUPTI).
  void on_api_enter(const devsim::ApiCall& call);
  void on_api_exit(const devsim::ApiCall& call);
  // Resource-domain callback of a graph event (CUpti_ResourceData with CUpti_GraphData).
  void on_graph_event(const devsim::GraphEvent& event);

 private:
  bool is_current(CUpti_SubscriberHandle subscriber) const;

  std::atomic<CUpti_SubscriberHandle> current_{nullptr};
  std::atomic<bool> ever_subscribed_{false};
};

}  // namespace profagent::devsim_cupti
