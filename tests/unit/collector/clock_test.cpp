// The agent clock: monotonic raw ticks, and tick -> CLOCK_MONOTONIC ns conversion.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "collector/api.h"
#include "collector/clock.h"
#include "collector/cpu_counter.h"

using namespace profagent::collector;

TEST_CASE("now() never goes backwards on one thread", "[clock]") {
  uint64_t previous = now();
  for (int i = 0; i < 100000; ++i) {
    uint64_t current = now();
    REQUIRE(current >= previous);
    previous = current;
  }
}

TEST_CASE("the identity converter passes nanoseconds through", "[clock]") {
  clock::TickConverter identity;
  CHECK(identity.identity());
  CHECK(identity.to_ns(123456789) == 123456789);
}

TEST_CASE("conversion is piecewise linear between anchors and extrapolates", "[clock]") {
  // 3 ticks per ns between the first two anchors, 2 ticks per ns after.
  clock::TickConverter converter({{1000, 100}, {4000, 1100}, {6000, 2100}});
  CHECK(converter.to_ns(1000) == 100);
  CHECK(converter.to_ns(2500) == 600);
  CHECK(converter.to_ns(4000) == 1100);
  CHECK(converter.to_ns(5000) == 1600);
  CHECK(converter.to_ns(8000) == 3100);  // after the last anchor: last segment's rate
  CHECK(converter.to_ns(700) == 0);      // before the first: first segment's rate (clamped)
  CHECK(converter.to_ns(400) == 0);
}

namespace {

// The conversion as specified: a.ns + (ticks - a.ticks) * span_ns / span_ticks in 128 bits.
uint64_t reference_ns(const clock::Anchor& a, const clock::Anchor& b, uint64_t ticks) {
  __int128 ns = __int128(a.ns) + (__int128(ticks) - __int128(a.ticks)) *
                                     (__int128(b.ns) - __int128(a.ns)) /
                                     (__int128(b.ticks) - __int128(a.ticks));
  return ns < 0 ? 0 : uint64_t(ns);
}

}  // namespace

// The usual case takes a shortcut (no search, one 128/64 divide): it must give the exact
// same nanoseconds, also where the product of two 64-bit values overflows 64 bits.
TEST_CASE("the fast conversion on the last segment is exact", "[clock]") {
  const clock::Anchor first{1'000'000'000'000ull, 5'000'000'000'000ull};
  const clock::Anchor middle{9'000'000'000'000ull, 8'000'000'000'000ull};
  const clock::Anchor last{9'000'000'000'000ull + 7'777'777'777'777ull, 8'000'000'000'000ull + 2'999'999'999'999ull};
  clock::TickConverter converter({first, middle, last});
  for (uint64_t step : {1ull, 7ull, 999'983ull, 123'456'789'011ull, 9'876'543'210'987ull}) {
    for (uint64_t i = 0; i < 200; ++i) {
      const uint64_t ticks = middle.ticks + i * step;  // up to far past the last anchor
      REQUIRE(converter.to_ns(ticks) == reference_ns(middle, last, ticks));
    }
  }
  // Earlier segments still convert by their own rate.
  CHECK(converter.to_ns(5'000'000'000'000ull) == reference_ns(first, middle, 5'000'000'000'000ull));
}

TEST_CASE("converted ticks land on CLOCK_MONOTONIC", "[clock]") {
  uint64_t before_ns = clock::monotonic_ns();
  uint64_t ticks = now();
  uint64_t after_ns = clock::monotonic_ns();
  clock::add_anchor();
  uint64_t converted = clock::converter().to_ns(ticks);
  // Within 50 us of the bracket: the ticks lie between two anchors, whatever their span.
  CHECK(converted + 50'000 >= before_ns);
  CHECK(converted <= after_ns + 50'000);
  INFO("clock source " << int(clock::source()));
}

TEST_CASE("now() reads the CPU counter where its rate is constant", "[clock]") {
  if (!cpu_counter::kPresent || !cpu_counter::constant_rate()) {
    WARN("no constant-rate CPU counter here: the clock is CLOCK_MONOTONIC");
    CHECK(clock::source() == clock::Source::Monotonic);
    return;
  }
  REQUIRE(clock::source() == clock::Source::CpuCounter);
  const uint64_t before = cpu_counter::read();
  const uint64_t ticks = now();
  const uint64_t after = cpu_counter::read();
  INFO(cpu_counter::kName << " " << before << " <= " << ticks << " <= " << after);
  CHECK(before <= ticks);
  CHECK(ticks <= after);
}

#if defined(__aarch64__)
// The anchors convert by the rate they measure; on aarch64 the firmware also states it, so the
// two must agree (reading another counter, or CNTFRQ_EL0 wrong, would not).
TEST_CASE("CNTVCT_EL0 counts at the rate CNTFRQ_EL0 states", "[clock]") {
  const uint64_t hz = cpu_counter::stated_hz();
  REQUIRE(hz != 0);
  const uint64_t ns_before = clock::monotonic_ns();
  const uint64_t ticks_before = now();
  while (clock::monotonic_ns() - ns_before < 50'000'000) cpu_counter::relax();
  const uint64_t ticks_after = now();
  const uint64_t ns_after = clock::monotonic_ns();
  const double measured_hz = double(ticks_after - ticks_before) * 1e9 / double(ns_after - ns_before);
  INFO("stated " << hz << " Hz, measured " << measured_hz << " Hz");
  CHECK(std::abs(measured_hz - double(hz)) < 0.01 * double(hz));
}
#endif

TEST_CASE("the Unix offset matches CLOCK_REALTIME", "[clock]") {
  timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  int64_t real_ns = int64_t(real.tv_sec) * 1'000'000'000 + real.tv_nsec;
  int64_t estimate = int64_t(clock::monotonic_ns()) + clock::unix_offset_ns();
  CHECK(std::llabs(estimate - real_ns) < 10'000'000);
}

// Anchors taken by several threads at once (a window's step boundary on the program's thread,
// a segment or freeze on the agent's) must reach the list in tick order: a converter made
// earlier then ends at an anchor no later one is put before, so the ticks it converted convert
// the same way for every later converter. Read outside the list's lock, two threads' anchors
// were sometimes appended in the other order.
TEST_CASE("anchors taken by threads at once keep earlier conversions", "[clock]") {
  if (clock::source() != clock::Source::CpuCounter) {
    WARN("the clock is CLOCK_MONOTONIC here: it takes no anchors");
    return;
  }
  constexpr int kThreads = 4;
  constexpr int kRounds = 3000;
  struct Seen {
    uint64_t last_ticks;  // a converter's last anchor
    size_t anchors;       // and how many it had
  };
  std::vector<std::vector<Seen>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        clock::add_anchor();
        const clock::TickConverter converter = clock::converter();
        seen[t].push_back({converter.anchors().back().ticks, converter.anchors().size()});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::vector<clock::Anchor> all = clock::converter().anchors();
  // In the final list, a converter's last anchor still has exactly the anchors that converter
  // had before it: none was put in between later.
  uint64_t moved = 0;
  for (const auto& list : seen) {
    for (const Seen& converter : list) {
      auto at = std::find_if(all.begin(), all.end(), [&](const clock::Anchor& a) { return a.ticks == converter.last_ticks; });
      REQUIRE(at != all.end());
      moved += size_t(at - all.begin()) + 1 != converter.anchors;
    }
  }
  CHECK(moved == 0);
}
