// When each activity kind was switched on and off. devsim models CUPTI deciding, when an
// operation is launched, whether it is traced (CONCURRENT_KERNEL instruments kernels at launch):
// a kernel launched while the kind was off gives no record even if it ends after the kind is
// switched on, and one launched while it was on gives its record even if the kind is switched
// off before it ends. devsim reports operations when they end, so the session asks this
// history about the time each operation was queued.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include <cupti_activity.h>

namespace profagent::devsim_cupti {

class KindHistory {
 public:
  void switched(CUpti_ActivityKind kind, bool on, uint64_t now_ns);
  // Whether `kind` was on at `ns` (devsim's clock).
  bool was_on(CUpti_ActivityKind kind, uint64_t ns) const;
  void clear();

 private:
  struct Span {
    CUpti_ActivityKind kind;
    uint64_t on_ns;
    uint64_t off_ns;  // UINT64_MAX while on
  };
  mutable std::mutex mutex_;
  std::vector<Span> spans_;  // one per switch-on: a handful per trace window
};

}  // namespace profagent::devsim_cupti
