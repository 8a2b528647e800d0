// The watched device queries (hooks/device_queries.h): hooked like every call, then their
// result counted (a success costs one relaxed load once the first success was seen).
#include "hooks/device_queries.h"

#include <pthread.h>

#include <atomic>

#include "hooks/cudart.h"

namespace profagent::hooks {
namespace {

std::atomic<uint64_t> g_failed{0};
std::atomic<int> g_first_error{0};
std::atomic<bool> g_mixed_errors{false};
std::atomic<bool> g_any_succeeded{false};

void count_query_result(cudaError_t result) noexcept {
  if (collector::tls_agent_busy != 0) return;  // CUPTI or the agent asking, not the program
  if (result == cudaSuccess) {
    if (!g_any_succeeded.load(std::memory_order_relaxed)) g_any_succeeded.store(true, std::memory_order_relaxed);
    return;
  }
  int expected = 0;
  if (!g_first_error.compare_exchange_strong(expected, int(result), std::memory_order_relaxed) &&
      expected != int(result)) {
    g_mixed_errors.store(true, std::memory_order_relaxed);
  }
  g_failed.fetch_add(1, std::memory_order_relaxed);
}

void forget_parent_queries() noexcept {
  g_failed.store(0, std::memory_order_relaxed);
  g_first_error.store(0, std::memory_order_relaxed);
  g_mixed_errors.store(false, std::memory_order_relaxed);
  g_any_succeeded.store(false, std::memory_order_relaxed);
}

__attribute__((constructor)) void reset_in_forked_children() {
  pthread_atfork(nullptr, nullptr, forget_parent_queries);
}

// A query left out of traces (collector/api.h: cudaSetDevice) is the hook's, recorded or not:
// the CUPTI callback, which sees it too, must not record it either. Not noexcept: the real
// call may be a cancellation point's caller (see hooks/hook.h).
template <typename Fn, typename... Args>
cudaError_t forward_query(CudartSite& site, Args... args) {
  auto* real = reinterpret_cast<Fn*>(resolve(site.real));
  if (real == nullptr) {
    report_unresolved(site);
    return unresolved_result<CudaRuntime, cudaError_t>();
  }
  collector::HookForwarding forwarding;
  const FirstUse first_use = note_first_use<CudaRuntime>();
  return real(args...);
}

}  // namespace

DeviceQueryOutcome device_query_outcome() noexcept {
  return {g_failed.load(std::memory_order_relaxed), g_first_error.load(std::memory_order_relaxed),
          !g_mixed_errors.load(std::memory_order_relaxed), g_any_succeeded.load(std::memory_order_relaxed)};
}

}  // namespace profagent::hooks

// One watched query, once per runtime major (as PROFAGENT_HOOK_ONE, hooks/hook.h): recorded as
// any hooked call (or only forwarded when left out of traces), then its result counted.
#define PROFAGENT_WATCH_ONE(Library, version, tag, kind, symbol_version, name, params, args)         \
  PROFAGENT_DECLARE_SITE(Library, version, tag, name)                                                \
  PROFAGENT_HOOK_FUNCTION(kind, tag, symbol_version, name, params) {                                 \
    static const bool left_out = ::profagent::collector::left_out_of_traces(#name);                  \
    auto& site = site_##name##_##tag;                                                                \
    cudaError_t result;                                                                              \
    if (left_out) {                                                                                  \
      result = ::profagent::hooks::forward_query<decltype(name)>(site PROFAGENT_TRAILING_ARGS args); \
    } else if (auto* real = ::profagent::hooks::forward_target<decltype(name)>(site)) {              \
      result = real args;                                                                            \
    } else {                                                                                         \
      result = ::profagent::hooks::intercept_hook<decltype(name)>(                                   \
          site, []() noexcept { return ::profagent::hooks::Payload{}; } PROFAGENT_TRAILING_ARGS args); \
    }                                                                                                \
    ::profagent::hooks::count_query_result(result);                                                  \
    return result;                                                                                   \
  }
#define PROFAGENT_WATCH(name, params, args) PROFAGENT_LIBRARY_cudart(PROFAGENT_WATCH_ONE, name, params, args)

PROFAGENT_DEVICE_QUERIES(PROFAGENT_WATCH)

bool profagent::hooks::is_device_query(std::string_view api) noexcept {
#define PROFAGENT_QUERY_NAMED(name, params, args) \
  if (api == #name) return true;
  PROFAGENT_DEVICE_QUERIES(PROFAGENT_QUERY_NAMED)
#undef PROFAGENT_QUERY_NAMED
  return false;
}
