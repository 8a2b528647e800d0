#include "collector/cupti_call_cost.h"

#include <cuda.h>
#include <dlfcn.h>
#include <time.h>

#include <algorithm>

namespace profagent::collector {
namespace {

using DriverGetVersion = CUresult (*)(int*);
constexpr CUpti_CallbackId kProbeCbid = CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion;

// Few calls, least of a few batches (an interrupted batch only adds): about 0.1-0.5 ms once
// per process with devsim's CUPTI, a few ms at most with NVIDIA's.
constexpr int kBatches = 3;
constexpr uint32_t kCallsPerBatch = 200;

uint64_t thread_cpu_ns() noexcept {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// The driver the runtime loaded; never loads one (RTLD_NOLOAD): without it CUDA is not in use.
DriverGetVersion loaded_driver_function() noexcept {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  auto function = reinterpret_cast<DriverGetVersion>(dlsym(driver, "cuDriverGetVersion"));
  dlclose(driver);  // the reference RTLD_NOLOAD took; the runtime's keeps the library loaded
  return function;
}

// Picoseconds per call of the least of kBatches batches; 0 when the thread's clock failed.
template <typename Call>
uint64_t least_per_call_ps(Call&& call) noexcept {
  uint64_t best_ns = UINT64_MAX;
  for (int batch = 0; batch < kBatches; ++batch) {
    const uint64_t from = thread_cpu_ns();
    for (uint32_t i = 0; i < kCallsPerBatch; ++i) call();
    const uint64_t to = thread_cpu_ns();
    if (from != 0 && to > from) best_ns = std::min(best_ns, to - from);
  }
  return best_ns == UINT64_MAX ? 0 : best_ns * 1000 / kCallsPerBatch;
}

}  // namespace

bool switch_probe_function(const CuptiProbeSwitch& probe, bool on) noexcept {
  const CuptiApi& api = *probe.api;
  if (api.enable_callback(on ? 1 : 0, probe.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, kProbeCbid) != CUPTI_SUCCESS) {
    return false;
  }
  return !probe.driver_records || api.enable_driver_api(kProbeCbid, on ? 1 : 0) == CUPTI_SUCCESS;
}

CuptiCallCost measure_cupti_call_cost(const CuptiProbeSwitch& probe) noexcept {
  CuptiCallCost cost;
  const CuptiApi& api = *probe.api;
  if (api.enable_callback == nullptr || probe.subscriber == nullptr) return cost;
  if (probe.driver_records && api.enable_driver_api == nullptr) return cost;
  const DriverGetVersion get_version = loaded_driver_function();
  if (get_version == nullptr) return cost;
  int version = 0;
  // As a hooked call with device tracing on: the id pushed, the call, the id popped.
  auto traced = [&] {
    api.push_external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, kProbeExternalId);
    get_version(&version);
    uint64_t last = 0;
    api.pop_external(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
  };
  auto bare = [&] { get_version(&version); };
  traced();  // the first call resolves and warms what later calls reuse
  if (!switch_probe_function(probe, false)) {
    switch_probe_function(probe, true);
    return cost;
  }
  cost.bare_ps = least_per_call_ps(bare);
  const bool restored = switch_probe_function(probe, true);
  cost.traced_ps = least_per_call_ps(traced);
  cost.measured = restored && cost.bare_ps != 0 && cost.traced_ps != 0;
  return cost;
}

}  // namespace profagent::collector
