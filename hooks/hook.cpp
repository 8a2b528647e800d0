// The out-of-line parts of the hook template: interning an API name once per site, and
// reporting a symbol no loaded object of its library defines.
#include "hooks/hook.h"

namespace profagent::hooks {
namespace {
std::atomic<UnresolvedReporter> g_reporter{nullptr};
std::atomic<FirstUseCallback> g_first_use{nullptr};
std::atomic<FirstUseCallback> g_first_call_returned{nullptr};
std::atomic<bool> g_first_call_returned_called{false};
}  // namespace

std::atomic<bool> g_cuda_seen{false};

namespace {
std::atomic<bool> g_first_use_called{false};

// Runs the callback exactly once, once both the callback is installed and CUDA was used, in
// whichever order the two happen (another library's constructor may call CUDA before ours).
void call_first_use_once() noexcept {
  FirstUseCallback callback = g_first_use.load(std::memory_order_acquire);
  if (callback == nullptr || !g_cuda_seen.load(std::memory_order_acquire)) return;
  if (!g_first_use_called.exchange(true, std::memory_order_acq_rel)) callback();
}
}  // namespace

void set_first_cuda_call_returned_callback(FirstUseCallback callback) noexcept {
  g_first_call_returned.store(callback, std::memory_order_release);
}

void first_cuda_call_returned() noexcept {
  FirstUseCallback callback = g_first_call_returned.load(std::memory_order_acquire);
  if (callback != nullptr && !g_first_call_returned_called.exchange(true, std::memory_order_acq_rel)) callback();
}

void set_first_cuda_use_callback(FirstUseCallback callback) noexcept {
  g_first_use.store(callback, std::memory_order_release);
  call_first_use_once();
}

void first_cuda_use() noexcept {
  g_cuda_seen.store(true, std::memory_order_release);
  call_first_use_once();
}

void note_cuda_use_slow() noexcept {
  if (!g_cuda_seen.load(std::memory_order_relaxed)) first_cuda_use();
  collector::cuda_in_use();
  // Not cleared for a call the agent itself makes while the device backend starts (CUPTI
  // calling CUDA): cuda_in_use() returns early there instead of waiting for the start.
  if (collector::tls_agent_busy == 0) {
    collector::g_hook_work.fetch_and(uint8_t(~collector::kHookFirstUse), std::memory_order_relaxed);
  }
}

NameId intern_site_name(Site& site) noexcept {
  const NameId name = collector::intern(site.real.name);  // idempotent: racing threads agree
  site.name.store(name, std::memory_order_relaxed);
  return name;
}

void set_unresolved_reporter(UnresolvedReporter reporter) noexcept {
  g_reporter.store(reporter, std::memory_order_release);
}

void report_unresolved(Site& site, const char* returned) noexcept {
  if (site.unresolved_reported.exchange(true, std::memory_order_relaxed)) return;
  UnresolvedReporter reporter = g_reporter.load(std::memory_order_acquire);
  const char* library = site.real.library != nullptr ? site.real.library->soname : "";
  if (reporter != nullptr) reporter(site.real.name, library, returned);
}

}  // namespace profagent::hooks
