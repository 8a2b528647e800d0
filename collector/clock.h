// The agent clock: one clock for every timestamp, host and device.
//
// The hot path reads raw ticks with now() (collector/api.h): the CPU's counter where it runs at
// a constant rate (collector/cpu_counter.h: the invariant TSC on x86-64, CNTVCT_EL0 on
// aarch64), else CLOCK_MONOTONIC nanoseconds. Ticks are
// converted to CLOCK_MONOTONIC ns only when a window is frozen, piecewise-linearly between
// anchors (tsc, monotonic ns) taken at start-up and at every freeze: no calibration sleep at
// start-up, and NTP slewing of CLOCK_MONOTONIC is followed between freezes.
// CUPTI is given monotonic_ns() as its timestamp callback, so device records land in the same
// domain as converted host ticks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace profagent::collector::clock {

enum class Source : uint8_t { Unknown = 0, CpuCounter = 1, Monotonic = 2 };

Source source() noexcept;  // decided at the first now(), then fixed
uint64_t monotonic_ns() noexcept;

struct Anchor {
  uint64_t ticks = 0;  // the CPU counter's
  uint64_t ns = 0;  // CLOCK_MONOTONIC
};

// Converts raw ticks to CLOCK_MONOTONIC ns. Identity when the source is Monotonic.
class TickConverter {
 public:
  TickConverter() = default;  // identity
  explicit TickConverter(std::vector<Anchor> anchors);  // sorted by ticks, >= 2 for the counter
  uint64_t to_ns(uint64_t ticks) const noexcept;
  bool identity() const noexcept { return anchors_.size() < 2; }

 private:
  size_t segment_of(uint64_t ticks) const noexcept;  // index of the segment's first anchor

  std::vector<Anchor> anchors_;
};

// Records an anchor now (start-up and each freeze). With the counter, the first freeze waits until
// at least kMinAnchorSpanNs have passed since the first anchor so the rate is well defined.
inline constexpr uint64_t kMinAnchorSpanNs = 2'000'000;
void add_anchor() noexcept;

// A converter over all anchors taken so far (call add_anchor() first at a freeze).
TickConverter converter();

// CLOCK_REALTIME - CLOCK_MONOTONIC in ns, sampled now.
int64_t unix_offset_ns() noexcept;

}  // namespace profagent::collector::clock
