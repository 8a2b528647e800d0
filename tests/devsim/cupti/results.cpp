#include "results.h"

#include <iterator>

namespace profagent::devsim_cupti {
namespace {

struct ResultText {
  CUptiResult value;
  const char* name;
  const char* message;
};

#define DEVSIM_RESULT(value, message) {value, #value, message}
constexpr ResultText kResults[] = {
    DEVSIM_RESULT(CUPTI_SUCCESS, "no error"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_PARAMETER, "one or more of the parameters is invalid"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_DEVICE, "the device does not correspond to a valid CUDA device"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_CONTEXT, "the context is NULL or not valid"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID, "the event domain id is invalid"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_EVENT_ID, "the event id is invalid"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_EVENT_NAME, "the event name is invalid"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_OPERATION, "the current operation cannot be performed"),
    DEVSIM_RESULT(CUPTI_ERROR_OUT_OF_MEMORY, "unable to allocate enough memory"),
    DEVSIM_RESULT(CUPTI_ERROR_HARDWARE, "an error occurred on the performance monitoring hardware"),
    DEVSIM_RESULT(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT, "the output buffer size is not sufficient"),
    DEVSIM_RESULT(CUPTI_ERROR_API_NOT_IMPLEMENTED, "the API is not implemented"),
    DEVSIM_RESULT(CUPTI_ERROR_MAX_LIMIT_REACHED, "the maximum limit is reached"),
    DEVSIM_RESULT(CUPTI_ERROR_NOT_READY, "the object is not yet ready"),
    DEVSIM_RESULT(CUPTI_ERROR_NOT_COMPATIBLE, "the operation is not compatible with the current state"),
    DEVSIM_RESULT(CUPTI_ERROR_NOT_INITIALIZED, "CUPTI is unable to initialize its connection to the CUDA driver"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_METRIC_ID, "the metric id is invalid"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_METRIC_NAME, "the metric name is invalid"),
    DEVSIM_RESULT(CUPTI_ERROR_QUEUE_EMPTY, "the queue is empty"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_HANDLE, "invalid handle"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_STREAM, "invalid stream"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_KIND, "invalid kind"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_EVENT_VALUE, "invalid event value"),
    DEVSIM_RESULT(CUPTI_ERROR_DISABLED, "CUPTI is disabled due to conflicts with other enabled profilers"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_MODULE, "invalid module"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_METRIC_VALUE, "invalid metric value"),
    DEVSIM_RESULT(CUPTI_ERROR_HARDWARE_BUSY, "the performance monitoring hardware is in use by another client"),
    DEVSIM_RESULT(CUPTI_ERROR_NOT_SUPPORTED, "the attempted operation is not supported on the current system or device"),
    DEVSIM_RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED, "unified memory profiling is not supported"),
    DEVSIM_RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE, "unified memory profiling is not supported on the device"),
    DEVSIM_RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES, "unified memory profiling is not supported on non-P2P devices"),
    DEVSIM_RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS, "unified memory profiling is not supported with MPS"),
    DEVSIM_RESULT(CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED, "CDP tracing is not supported"),
    DEVSIM_RESULT(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED, "profiling on virtualized GPUs is not supported"),
    DEVSIM_RESULT(CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE, "the CUDA compiler is not compatible"),
    DEVSIM_RESULT(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "the user does not have permission to profile on the target device"),
    DEVSIM_RESULT(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED, "the old profiler API is initialized"),
    DEVSIM_RESULT(CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE, "an OpenACC routine is undefined"),
    DEVSIM_RESULT(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED, "the legacy CUPTI profiling API is not supported"),
    DEVSIM_RESULT(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "CUPTI does not support multiple subscribers"),
    DEVSIM_RESULT(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES, "profiling on the virtualized device needs more privileges"),
    DEVSIM_RESULT(CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED, "profiling is not supported with confidential computing"),
    DEVSIM_RESULT(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED, "profiling is not supported on CMP devices"),
    DEVSIM_RESULT(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, "profiling is not supported on MIG devices"),
    DEVSIM_RESULT(CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED, "profiling is not supported on SLI devices"),
    DEVSIM_RESULT(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED, "profiling is not supported on WSL"),
    DEVSIM_RESULT(CUPTI_ERROR_INVALID_CHIP_NAME, "the chip name is invalid"),
    DEVSIM_RESULT(CUPTI_ERROR_UNKNOWN, "an internal error occurred"),
};
#undef DEVSIM_RESULT

const ResultText* find(CUptiResult result) {
  for (const ResultText& entry : kResults) {
    if (entry.value == result) return &entry;
  }
  return nullptr;
}

}  // namespace

const char* result_name(CUptiResult result) {
  const ResultText* entry = find(result);
  return entry ? entry->name : nullptr;
}

const char* result_message(CUptiResult result) {
  const ResultText* entry = find(result);
  return entry ? entry->message : nullptr;
}

bool result_from_name(std::string_view name, CUptiResult* result) {
  for (const ResultText& entry : kResults) {
    if (name == entry.name) {
      *result = entry.value;
      return true;
    }
  }
  return false;
}

}  // namespace profagent::devsim_cupti
