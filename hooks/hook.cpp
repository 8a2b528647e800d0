// The out-of-line parts of the hook template: interning an API name once per site, and
// reporting a symbol no loaded runtime defines.
#include "hooks/hook.h"

namespace profagent::hooks {
namespace {
std::atomic<UnresolvedReporter> g_reporter{nullptr};
}

NameId site_name(Site& site) noexcept {
  NameId name = site.name.load(std::memory_order_relaxed);
  if (name == kNoName) {
    name = collector::intern(site.real.name);  // idempotent: racing threads get the same id
    site.name.store(name, std::memory_order_relaxed);
  }
  return name;
}

void set_unresolved_reporter(UnresolvedReporter reporter) noexcept {
  g_reporter.store(reporter, std::memory_order_release);
}

void report_unresolved(Site& site) noexcept {
  if (site.unresolved_reported.exchange(true, std::memory_order_relaxed)) return;
  UnresolvedReporter reporter = g_reporter.load(std::memory_order_acquire);
  if (reporter != nullptr) reporter(site.real.name);
}

}  // namespace profagent::hooks
