// The one way a CUPTI result is checked (after Kineto's CUPTI_CALL): every CUPTI call in
// collector/cupti_*.cpp goes through CUPTI_CALL or CUPTI_CALL_QUIET, so none is ignored and a
// failure always names the CUPTI function and CUPTI's own result string.
//
//   CUPTI_CALL(api_, flush_all, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
//     A failure is unexpected: logged (warn) once per call site, "cuptiActivityFlushAll
//     failed: CUPTI_ERROR_...". Later failures at the same site are not logged again (a
//     per-call path such as the external-id push must not flood stderr).
//   CUPTI_CALL_QUIET(api_, enable, kind)
//     A failure is expected (an optional activity kind, the end of a buffer) or the caller
//     reports it itself with more context: logged at debug only.
// Both evaluate to a CuptiOutcome, true on success, which keeps the result and the call's name
// for a caller that says more (CuptiBackend::refused). `member` is the CuptiApi member called.
#pragma once

#include <cupti.h>

#include <atomic>
#include <string>

#include "collector/cupti_api.h"
#include "collector/log.h"

namespace profagent::collector {

struct CuptiOutcome {
  CUptiResult result = CUPTI_SUCCESS;
  const char* call = "";  // on failure: the CUPTI function, e.g. "cuptiActivityEnable"
  explicit operator bool() const noexcept { return result == CUPTI_SUCCESS; }
};

// The CUPTI function behind a CuptiApi member ("enable" -> "cuptiActivityEnable"); the member
// name itself if the table does not know it.
const char* cupti_function_name(const char* member) noexcept;

// The slow half of the check: logs "<call> failed: <result string>" at `level` unless this
// call site (`said`) has already said so.
CuptiOutcome cupti_failed(const CuptiApi& api, CUptiResult result, const char* member, LogLevel level,
                          std::atomic<bool>& said) noexcept;

inline CuptiOutcome cupti_checked(const CuptiApi& api, CUptiResult result, const char* member,
                                  LogLevel level, std::atomic<bool>& said) noexcept {
  if (__builtin_expect(result == CUPTI_SUCCESS, 1)) return {result, ""};
  return cupti_failed(api, result, member, level, said);
}

}  // namespace profagent::collector

// The lambda gives each expansion its own "said once" flag.
#define PROFAGENT_CUPTI_CHECKED(level, api, member, ...)                                        \
  ([&]() noexcept {                                                                           \
    static std::atomic<bool> said_once{false};                                                \
    return ::profagent::collector::cupti_checked((api), (api).member(__VA_ARGS__), #member, (level), \
                                                 said_once);                                  \
  }())
#define CUPTI_CALL(api, member, ...) \
  PROFAGENT_CUPTI_CHECKED(::profagent::collector::LogLevel::Warn, api, member, __VA_ARGS__)
#define CUPTI_CALL_QUIET(api, member, ...) \
  PROFAGENT_CUPTI_CHECKED(::profagent::collector::LogLevel::Debug, api, member, __VA_ARGS__)
