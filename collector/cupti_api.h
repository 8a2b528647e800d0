// libcupti loaded with dlopen (never linked: a missing or refusing CUPTI must only turn
// device tracing off). Functions are resolved from that handle with dlsym.
#pragma once

#include <cupti.h>

#include <string>

namespace profagent::collector {

struct CuptiApi {
  decltype(&cuptiGetVersion) get_version = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
  decltype(&cuptiGetTimestamp) get_timestamp = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp_callback = nullptr;
  decltype(&cuptiActivityGetNextRecord) get_next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) get_num_dropped = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push_external = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop_external = nullptr;
  decltype(&cuptiGetCallbackName) get_callback_name = nullptr;  // optional
  decltype(&cuptiSetThreadIdType) set_thread_id_type = nullptr;  // optional
  // The callback API (optional: without it calls no hook sees are not recorded).
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiEnableDomain) enable_domain = nullptr;
  // Graph node callbacks (optional: without them graph replays keep their launch's External id).
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
  decltype(&cuptiGetGraphNodeId) get_graph_node_id = nullptr;
  // DRIVER records of one function (optional: the CUPTI cost probe, collector/cupti_call_cost.h).
  decltype(&cuptiActivityEnableDriverApi) enable_driver_api = nullptr;

  std::string path;  // what was loaded

  // Loads `explicit_path` if not empty, else "libcupti.so.13" through the library search
  // path, else from $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/cuda/extras/CUPTI/lib64.
  // False with *why set when no library or a required function is missing.
  bool load(const std::string& explicit_path, std::string* why);

  // "CUPTI_ERROR_..." for a result code (the library's own string when it has one).
  std::string error_name(CUptiResult result) const;
};

}  // namespace profagent::collector
