// The timestamp domain of every record devsim's CUPTI writes.
//
// devsim reports CLOCK_MONOTONIC ns. Real CUPTI's own timestamps are CLOCK_REALTIME ns on
// Linux (cupti_activity.h, cuptiActivityRegisterTimestampCallback), so they are not the
// client's clock: a client must register a timestamp callback or align by offset. devsim keeps
// that property. With a client callback, monotonic ns are mapped linearly into the client's
// domain from (client_now, monotonic_now) anchor pairs: the first pair and the latest one
// (refreshed at most every kRefreshNs) give the rate, so a client clock that runs at a slightly
// different rate (a calibrated TSC) is still followed.
#pragma once

#include <cupti_activity.h>

#include <cstdint>
#include <mutex>

namespace profagent::devsim_cupti {

class ClockDomain {
 public:
  // Monotonic ns source; devsim::now_ns in the library, a fake in unit tests.
  using MonotonicFn = uint64_t (*)();

  explicit ClockDomain(MonotonicFn monotonic);

  // nullptr returns to the default (CLOCK_REALTIME) domain.
  void use_client_clock(CUpti_TimestampCallbackFunc client);
  bool has_client_clock() const;

  // Converts a monotonic ns value into the current domain. Thread-safe.
  uint64_t to_domain(uint64_t monotonic_ns);
  // For a record of something that happened just now (devsim reports allocations as they
  // happen): the client's clock read now, as NVIDIA's CUPTI stamps host-side records with the
  // callback — exact, where a mapping through anchors is off by their error; without a client
  // clock, to_domain().
  uint64_t now_or_mapped(uint64_t monotonic_ns);
  uint64_t now() { return to_domain(monotonic_()); }

 private:
  struct Anchor {
    uint64_t client_ns = 0;
    uint64_t monotonic_ns = 0;
  };
  static constexpr uint64_t kRefreshNs = 20'000'000;  // 20 ms

  Anchor sample(CUpti_TimestampCallbackFunc client) const;
  void refresh_if_stale(uint64_t monotonic_now);

  MonotonicFn monotonic_;
  int64_t realtime_offset_ns_;  // CLOCK_REALTIME - CLOCK_MONOTONIC at start
  mutable std::mutex mutex_;    // guards everything below; never held across the client call
  CUpti_TimestampCallbackFunc client_ = nullptr;
  Anchor first_;
  Anchor latest_;
};

}  // namespace profagent::devsim_cupti
