#include "clock_domain.h"

#include <cstdint>
#include <ctime>

namespace profagent::devsim_cupti {
namespace {

uint64_t read_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

ClockDomain::ClockDomain(MonotonicFn monotonic)
    : monotonic_(monotonic),
      realtime_offset_ns_(static_cast<int64_t>(read_clock(CLOCK_REALTIME)) -
                          static_cast<int64_t>(monotonic())) {}

// The midpoint of two monotonic reads around the client call bounds the pairing error by half
// the call's duration; the tightest of a few tries, so that a thread preempted between the reads
// does not shift every later record (NVIDIA's CUPTI stamps host-side records with the client's
// clock itself: a client may match them to its own calls by time).
ClockDomain::Anchor ClockDomain::sample(CUpti_TimestampCallbackFunc client) const {
  Anchor best;
  uint64_t best_width = UINT64_MAX;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const uint64_t before = monotonic_();
    const uint64_t client_ns = client();
    const uint64_t after = monotonic_();
    if (after - before < best_width) best_width = after - before, best = Anchor{client_ns, before + (after - before) / 2};
  }
  return best;
}

void ClockDomain::use_client_clock(CUpti_TimestampCallbackFunc client) {
  const Anchor anchor = client ? sample(client) : Anchor{};
  std::lock_guard lock(mutex_);
  client_ = client;
  first_ = anchor;
  latest_ = anchor;
}

bool ClockDomain::has_client_clock() const {
  std::lock_guard lock(mutex_);
  return client_ != nullptr;
}

void ClockDomain::refresh_if_stale(uint64_t monotonic_now) {
  CUpti_TimestampCallbackFunc client = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (client_ == nullptr || monotonic_now < latest_.monotonic_ns + kRefreshNs) return;
    client = client_;
  }
  const Anchor anchor = sample(client);
  std::lock_guard lock(mutex_);
  if (client_ == client && anchor.monotonic_ns > latest_.monotonic_ns) latest_ = anchor;
}

uint64_t ClockDomain::now_or_mapped(uint64_t monotonic_ns) {
  CUpti_TimestampCallbackFunc client = nullptr;
  {
    std::lock_guard lock(mutex_);
    client = client_;
  }
  return client != nullptr ? client() : to_domain(monotonic_ns);
}

uint64_t ClockDomain::to_domain(uint64_t monotonic_ns) {
  refresh_if_stale(monotonic_());
  std::lock_guard lock(mutex_);
  if (client_ == nullptr) return static_cast<uint64_t>(static_cast<int64_t>(monotonic_ns) + realtime_offset_ns_);
  const double span = static_cast<double>(latest_.monotonic_ns - first_.monotonic_ns);
  const double rate = span >= kRefreshNs
      ? static_cast<double>(latest_.client_ns - first_.client_ns) / span
      : 1.0;
  const double delta = static_cast<double>(static_cast<int64_t>(monotonic_ns - latest_.monotonic_ns));
  return latest_.client_ns + static_cast<int64_t>(delta * rate);
}

}  // namespace profagent::devsim_cupti
