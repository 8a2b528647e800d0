#include "kind_history.h"

namespace profagent::devsim_cupti {

void KindHistory::switched(CUpti_ActivityKind kind, bool on, uint64_t now_ns) {
  std::lock_guard lock(mutex_);
  Span* open = nullptr;
  for (Span& span : spans_) {
    if (span.kind == kind && span.off_ns == UINT64_MAX) open = &span;
  }
  if (on && open == nullptr) spans_.push_back({kind, now_ns, UINT64_MAX});
  if (!on && open != nullptr) open->off_ns = now_ns;
}

bool KindHistory::was_on(CUpti_ActivityKind kind, uint64_t ns) const {
  std::lock_guard lock(mutex_);
  for (auto span = spans_.rbegin(); span != spans_.rend(); ++span) {  // recent spans first
    if (span->kind == kind && span->on_ns <= ns && ns < span->off_ns) return true;
  }
  return false;
}

void KindHistory::clear() {
  std::lock_guard lock(mutex_);
  spans_.clear();
}

}  // namespace profagent::devsim_cupti
