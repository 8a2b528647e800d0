#include "collector/cupti_status.h"

#include <cstring>

namespace profagent::collector {
namespace {

struct MemberName {
  const char* member;
  const char* function;
};

// CuptiApi's members (collector/cupti_api.h) and the CUPTI functions they were resolved from.
constexpr MemberName kFunctions[] = {
    {"get_version", "cuptiGetVersion"},
    {"get_result_string", "cuptiGetResultString"},
    {"get_timestamp", "cuptiGetTimestamp"},
    {"enable", "cuptiActivityEnable"},
    {"disable", "cuptiActivityDisable"},
    {"register_callbacks", "cuptiActivityRegisterCallbacks"},
    {"register_timestamp_callback", "cuptiActivityRegisterTimestampCallback"},
    {"get_next_record", "cuptiActivityGetNextRecord"},
    {"get_num_dropped", "cuptiActivityGetNumDroppedRecords"},
    {"flush_all", "cuptiActivityFlushAll"},
    {"push_external", "cuptiActivityPushExternalCorrelationId"},
    {"pop_external", "cuptiActivityPopExternalCorrelationId"},
    {"get_callback_name", "cuptiGetCallbackName"},
    {"set_thread_id_type", "cuptiSetThreadIdType"},
    {"subscribe", "cuptiSubscribe"},
    {"unsubscribe", "cuptiUnsubscribe"},
    {"enable_domain", "cuptiEnableDomain"},
};

// Not through error_name(): it builds a std::string, and this may run on CUPTI's threads on a
// per-call path. cuptiGetResultString is the one CUPTI call whose own result is not checked
// through the macro (it would check itself): a failure there prints the number instead.
const char* result_string(const CuptiApi& api, CUptiResult result) noexcept {
  const char* text = nullptr;
  if (api.get_result_string == nullptr || api.get_result_string(result, &text) != CUPTI_SUCCESS) return nullptr;
  return text;
}

}  // namespace

const char* cupti_function_name(const char* member) noexcept {
  for (const MemberName& entry : kFunctions) {
    if (std::strcmp(entry.member, member) == 0) return entry.function;
  }
  return member;
}

CuptiOutcome cupti_failed(const CuptiApi& api, CUptiResult result, const char* member, LogLevel level,
                          std::atomic<bool>& said) noexcept {
  const char* call = cupti_function_name(member);
  if (!said.exchange(true, std::memory_order_relaxed)) {
    if (const char* text = result_string(api, result)) {
      log_format(level, "%s failed: %s", call, text);
    } else {
      log_format(level, "%s failed: CUptiResult %d", call, int(result));
    }
  }
  return {result, call};
}

}  // namespace profagent::collector
