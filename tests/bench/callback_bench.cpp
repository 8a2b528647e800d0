// The agent's own cost per API call on the CUPTI callback path (collector/cupti_callbacks.h),
// without any CUPTI: one enter and one exit callback with synthetic data, as CUPTI makes them
// around a cuLaunchKernel, timed over many calls — while not recording (nothing to do), while
// recording (one host event per call), and for a call a hook already has (left alone).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "collector/api.h"
#include "collector/cupti_callbacks.h"
#include "collector/session.h"
#include "collector/thread_buffer.h"

using namespace profagent::collector;

namespace {

double ns_per_call(long count, bool inside_hook) {
  uint64_t correlation_data = 0;
  int32_t result = 0;
  CUpti_CallbackData data{};
  data.functionName = "cuLaunchKernel";
  data.correlationData = &correlation_data;
  data.functionReturnValue = &result;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < count; ++i) {
    RuntimeGuard* guard = nullptr;
    alignas(RuntimeGuard) unsigned char storage[sizeof(RuntimeGuard)];
    if (inside_hook) guard = new (storage) RuntimeGuard;
    data.correlationId = uint32_t(i);
    data.callbackSite = CUPTI_API_ENTER;
    on_api_callback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &data);
    data.callbackSite = CUPTI_API_EXIT;
    on_api_callback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &data);
    if (guard) guard->~RuntimeGuard();
  }
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(end - start).count() / double(count);
}

}  // namespace

int main(int argc, char** argv) {
  const long count = argc > 1 ? std::atol(argv[1]) : 1000000;
  configure_buffers(size_t(256) << 20);
  set_state(RecordState::Off);
  const double idle = ns_per_call(count, false);
  set_state(RecordState::Record);
  ns_per_call(1000, false);  // first chunk and name interning out of the timing
  drain_all();
  const double recording = ns_per_call(count, false);
  const size_t recorded = [] {
    size_t n = 0;
    for (const ThreadEvents& t : drain_all().threads) n += t.events.size();
    return n;
  }();
  const double hooked = ns_per_call(count, true);
  std::printf("callback path per call (enter+exit): idle %.1f ns, recording %.1f ns (%zu events), "
              "call a hook has %.1f ns\n", idle, recording, recorded, hooked);
  return recorded == size_t(count) ? 0 : 1;
}
