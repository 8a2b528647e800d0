#include "collector/cupti_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace profagent::collector {
namespace {

std::vector<std::string> candidate_paths(const std::string& explicit_path) {
  if (!explicit_path.empty()) return {explicit_path};
  std::vector<std::string> paths{"libcupti.so.13"};
  if (const char* cuda_home = std::getenv("CUDA_HOME"); cuda_home && *cuda_home) {
    paths.push_back(std::string(cuda_home) + "/lib64/libcupti.so.13");
  }
  paths.push_back("/usr/local/cuda/lib64/libcupti.so.13");
  paths.push_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
  return paths;
}

template <typename Function>
bool resolve(void* handle, const char* name, Function& slot, std::string* missing) {
  slot = reinterpret_cast<Function>(dlsym(handle, name));
  if (!slot && missing->empty()) *missing = name;
  return slot != nullptr;
}

}  // namespace

bool CuptiApi::load(const std::string& explicit_path, std::string* why) {
  void* handle = nullptr;
  for (const std::string& candidate : candidate_paths(explicit_path)) {
    // RTLD_LOCAL: CUPTI's symbols must not interpose anything in the application.
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      path = candidate;
      break;
    }
  }
  if (!handle) {
    *why = explicit_path.empty() ? "libcupti.so.13 not found"
                                 : "cannot load PROFAGENT_CUPTI_LIB=" + explicit_path;
    return false;
  }
  std::string missing;
  resolve(handle, "cuptiGetVersion", get_version, &missing);
  resolve(handle, "cuptiGetResultString", get_result_string, &missing);
  resolve(handle, "cuptiGetTimestamp", get_timestamp, &missing);
  resolve(handle, "cuptiActivityEnable", enable, &missing);
  resolve(handle, "cuptiActivityDisable", disable, &missing);
  resolve(handle, "cuptiActivityRegisterCallbacks", register_callbacks, &missing);
  resolve(handle, "cuptiActivityGetNextRecord", get_next_record, &missing);
  resolve(handle, "cuptiActivityGetNumDroppedRecords", get_num_dropped, &missing);
  resolve(handle, "cuptiActivityFlushAll", flush_all, &missing);
  resolve(handle, "cuptiActivityPushExternalCorrelationId", push_external, &missing);
  resolve(handle, "cuptiActivityPopExternalCorrelationId", pop_external, &missing);
  std::string optional;
  resolve(handle, "cuptiActivityRegisterTimestampCallback", register_timestamp_callback, &optional);
  resolve(handle, "cuptiGetCallbackName", get_callback_name, &optional);
  resolve(handle, "cuptiSetThreadIdType", set_thread_id_type, &optional);
  resolve(handle, "cuptiSubscribe", subscribe, &optional);
  resolve(handle, "cuptiUnsubscribe", unsubscribe, &optional);
  resolve(handle, "cuptiEnableDomain", enable_domain, &optional);
  resolve(handle, "cuptiEnableCallback", enable_callback, &optional);
  resolve(handle, "cuptiGetGraphNodeId", get_graph_node_id, &optional);
  resolve(handle, "cuptiActivityEnableDriverApi", enable_driver_api, &optional);
  if (!missing.empty()) {
    *why = path + " lacks " + missing;
    return false;  // the handle stays open: unloading CUPTI is never safe
  }
  return true;
}

// cuptiGetResultString is the one CUPTI call not checked through CUPTI_CALL
// (collector/cupti_status.h): it is what that check uses to name a failure.
std::string CuptiApi::error_name(CUptiResult result) const {
  const char* text = nullptr;
  if (get_result_string && get_result_string(result, &text) == CUPTI_SUCCESS && text) {
    return text;
  }
  return "CUptiResult " + std::to_string(int(result));
}

}  // namespace profagent::collector
