// Exported callback API of the simulated libcupti.so.13 (cupti_callbacks.h).
#include "api_guard.h"

#include <cupti.h>

using profagent::devsim_cupti::guarded;
using profagent::devsim_cupti::NeedsDriver;
using profagent::devsim_cupti::Session;

extern "C" {

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                    void* userdata) {
  return guarded("cuptiSubscribe", NeedsDriver::Yes,
                 [&](Session& s) { return s.subscribe(subscriber, callback, userdata); });
}

// The subscriber name only matters to CUPTI 13.3+'s multi-subscriber reports; devsim keeps the
// single-subscriber rule of CUPTI 13.0.
CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                       void* userdata, CUpti_SubscriberParams*) {
  return guarded("cuptiSubscribe_v2", NeedsDriver::Yes,
                 [&](Session& s) { return s.subscribe(subscriber, callback, userdata); });
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  return guarded("cuptiUnsubscribe", NeedsDriver::Yes,
                 [&](Session& s) { return s.callbacks().unsubscribe(subscriber); });
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return guarded("cuptiEnableCallback", NeedsDriver::Yes, [&](Session& s) {
    return s.callbacks().enable_callback(enable != 0, subscriber, domain, cbid);
  });
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain) {
  return guarded("cuptiEnableDomain", NeedsDriver::Yes, [&](Session& s) {
    return s.callbacks().enable_domain(enable != 0, subscriber, domain);
  });
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  return guarded("cuptiEnableAllDomains", NeedsDriver::Yes, [&](Session& s) {
    return s.callbacks().enable_all_domains(enable != 0, subscriber);
  });
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return guarded("cuptiGetCallbackState", NeedsDriver::Yes, [&](Session& s) {
    return s.callbacks().callback_state(enable, subscriber, domain, cbid);
  });
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  return guarded("cuptiGetCallbackName", NeedsDriver::No, [&](Session&) {
    if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *name = profagent::devsim_cupti::callback_name(domain, cbid);
    return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
  });
}

CUptiResult CUPTIAPI cuptiSupportedDomains(size_t* domain_count, CUpti_DomainTable* domain_table) {
  static CUpti_CallbackDomain domains[] = {
      CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_RESOURCE,
      CUPTI_CB_DOMAIN_SYNCHRONIZE, CUPTI_CB_DOMAIN_NVTX, CUPTI_CB_DOMAIN_STATE};
  return guarded("cuptiSupportedDomains", NeedsDriver::No, [&](Session&) {
    if (domain_count == nullptr || domain_table == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *domain_count = sizeof(domains) / sizeof(domains[0]);
    *domain_table = domains;
    return CUPTI_SUCCESS;
  });
}

}  // extern "C"
