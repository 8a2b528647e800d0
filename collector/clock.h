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

// floor(a * b / d) for a quotient that fits in 64 bits: on x86-64 one hardware divide instead
// of libgcc's generic 128-bit division (aarch64 has no 128/64 divide: libgcc's it is).
// Returns false when the quotient would not fit.
inline bool multiply_divide(uint64_t a, uint64_t b, uint64_t d, uint64_t* quotient) noexcept {
  const unsigned __int128 product = static_cast<unsigned __int128>(a) * b;
  const uint64_t high = uint64_t(product >> 64);
  if (d == 0 || high >= d) return false;
#if defined(__x86_64__)
  uint64_t remainder;
  asm("divq %4" : "=a"(*quotient), "=d"(remainder) : "a"(uint64_t(product)), "d"(high), "rm"(d));
#else
  *quotient = uint64_t(product / d);
#endif
  return true;
}

// Converts raw ticks to CLOCK_MONOTONIC ns. Identity when the source is Monotonic.
class TickConverter {
 public:
  TickConverter() = default;  // identity
  explicit TickConverter(std::vector<Anchor> anchors);  // sorted by ticks, >= 2 for the counter
  // A window's events lie in the last segment (after the previous freeze's anchor): that case
  // is inline, with the segment's figures computed once, as a freeze converts two times per
  // event. Everything else (earlier segments, a quotient past 64 bits, identity) goes the
  // general way; both give the same ns for the same ticks.
  uint64_t to_ns(uint64_t ticks) const noexcept {
    uint64_t offset;
    if (ticks >= last_.from_ticks && last_.exact &&
        multiply_divide(ticks - last_.from_ticks, last_.span_ns, last_.span_ticks, &offset) &&
        offset <= UINT64_MAX - last_.from_ns) {
      return last_.from_ns + offset;
    }
    return to_ns_general(ticks);
  }
  bool identity() const noexcept { return anchors_.size() < 2; }
  const std::vector<Anchor>& anchors() const noexcept { return anchors_; }

 private:
  // The last segment, when it has a positive span of ticks and a non-negative span of ns.
  struct LastSegment {
    bool exact = false;
    uint64_t from_ticks = UINT64_MAX, from_ns = 0, span_ticks = 0, span_ns = 0;
  };
  size_t segment_of(uint64_t ticks) const noexcept;  // index of the segment's first anchor
  uint64_t to_ns_general(uint64_t ticks) const noexcept;

  std::vector<Anchor> anchors_;
  LastSegment last_;
};

// Records an anchor now (start-up and each freeze), without waiting: a process that exits
// right after it started pays no wait for a "usable" span.
void add_anchor() noexcept;

// A converter over all anchors taken so far (call add_anchor() first at a freeze).
TickConverter converter();

// CLOCK_REALTIME - CLOCK_MONOTONIC in ns, sampled now.
int64_t unix_offset_ns() noexcept;

}  // namespace profagent::collector::clock
