// Exported version, result, timestamp and lifecycle functions of the simulated libcupti.so.13.
#include "api_guard.h"
#include "results.h"

#include <cupti.h>

using profagent::devsim_cupti::guarded;
using profagent::devsim_cupti::NeedsDriver;
using profagent::devsim_cupti::Session;

namespace profagent::devsim_cupti {

namespace {
thread_local CUptiResult t_last_error = CUPTI_SUCCESS;
}

CUptiResult remember_result(CUptiResult result) {
  if (result != CUPTI_SUCCESS) t_last_error = result;
  return result;
}

CUptiResult take_last_error() {
  const CUptiResult last = t_last_error;
  t_last_error = CUPTI_SUCCESS;
  return last;
}

}  // namespace profagent::devsim_cupti

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  return guarded("cuptiGetVersion", NeedsDriver::No, [&](Session&) {
    if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  return guarded("cuptiGetResultString", NeedsDriver::No, [&](Session&) {
    if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *str = profagent::devsim_cupti::result_name(result);
    return *str ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
  });
}

CUptiResult CUPTIAPI cuptiGetErrorMessage(CUptiResult result, const char** str) {
  return guarded("cuptiGetErrorMessage", NeedsDriver::No, [&](Session&) {
    if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *str = profagent::devsim_cupti::result_message(result);
    return *str ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
  });
}

CUptiResult CUPTIAPI cuptiGetLastError(void) {
  return profagent::devsim_cupti::take_last_error();
}

// In the records' domain: the client's clock once it registered one, else CLOCK_REALTIME ns.
CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  return guarded("cuptiGetTimestamp", NeedsDriver::No, [&](Session& s) {
    if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
    *timestamp = s.clock().now();
    return CUPTI_SUCCESS;
  });
}

CUptiResult CUPTIAPI cuptiFinalize(void) {
  return guarded("cuptiFinalize", NeedsDriver::Yes, [&](Session& s) {
    s.finalize();
    return CUPTI_SUCCESS;
  });
}

}  // extern "C"
