#include "collector/cupti_call_cost.h"

#include <cuda.h>
#include <dlfcn.h>


#include "collector/api.h"
#include "collector/call_timing.h"

namespace profagent::collector {
namespace {

using DriverGetVersion = CUresult (*)(int*);
constexpr CUpti_CallbackId kProbeCbid = CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion;

// Few calls, least of a few batches (an interrupted batch only adds): about 0.1-0.5 ms once
// per process with devsim's CUPTI, a few ms at most with NVIDIA's.
constexpr int kBatches = 3;
constexpr uint32_t kCallsPerBatch = 200;

// The driver's function. NVIDIA's runtime loaded the driver before CUPTI could trace anything
// (it cannot work without it), so this only takes a reference; devsim's runtime simulates the
// driver inside itself and leaves its libcuda.so.1 to be loaded by whoever asks. Never closed:
// the function must stay mapped for the process's life.
DriverGetVersion driver_function() noexcept {
  void* const driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);  // runs once per process
  return driver != nullptr ? reinterpret_cast<DriverGetVersion>(dlsym(driver, "cuDriverGetVersion")) : nullptr;
}

// The function's callback and DRIVER records, both on or both off. False if CUPTI refused.
bool switch_function(const CuptiProbeSwitch& probe, bool on) noexcept {
  const CuptiApi& api = *probe.api;
  return api.enable_callback(on ? 1 : 0, probe.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kProbeCbid) == CUPTI_SUCCESS &&
         api.enable_driver_api(kProbeCbid, on ? 1 : 0) == CUPTI_SUCCESS;
}

}  // namespace

void restore_probe_function(const CuptiProbeSwitch& probe) noexcept {
  const CuptiApi& api = *probe.api;
  api.enable_callback(probe.callback_on ? 1 : 0, probe.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kProbeCbid);
  api.enable_driver_api(kProbeCbid, probe.driver_records_on ? 1 : 0);
  if (probe.external_records_on) {
    api.enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  } else {
    api.disable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  }
}

CuptiCallCost measure_cupti_call_cost(const CuptiProbeSwitch& probe) noexcept {
  CuptiCallCost cost;
  const CuptiApi& api = *probe.api;
  if (api.enable_callback == nullptr || probe.subscriber == nullptr) {
    cost.unavailable = "CUPTI's API callbacks are off";
    return cost;
  }
  if (api.enable_driver_api == nullptr) {
    cost.unavailable = "this CUPTI has no cuptiActivityEnableDriverApi";
    return cost;
  }
  const DriverGetVersion get_version = driver_function();
  if (get_version == nullptr) {
    cost.unavailable = "no libcuda.so.1";
    return cost;
  }
  int version = 0;
  // As a hooked call with device tracing on (hooks/hook.h): the id pushed, the call, the id
  // popped, through the same functions (collector/api.h), so their way into CUPTI is counted too.
  auto traced = [&] {
    push_external_id(kProbeExternalId);
    get_version(&version);
    pop_external_id();
  };
  auto bare = [&] { get_version(&version); };
  const bool on = switch_function(probe, true) &&
                  (probe.external_records_on || api.enable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) == CUPTI_SUCCESS);
  if (on) {
    traced();  // the first call resolves and warms what later calls reuse
    cost.traced_ps = least_per_call_ps(kBatches, kCallsPerBatch, traced);
  }
  const bool off = on && switch_function(probe, false);
  if (off) cost.bare_ps = least_per_call_ps(kBatches, kCallsPerBatch, bare);
  restore_probe_function(probe);
  if (!off) {
    cost.unavailable = "CUPTI refused to switch one function's callback or records";
    return cost;
  }
  cost.measured = cost.bare_ps != 0 && cost.traced_ps != 0;
  return cost;
}

}  // namespace profagent::collector
