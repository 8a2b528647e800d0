// Looking at the window being recorded without ending it (collector/interval_peek.h, the
// partial trace's source): each event is given once, the window's own join still has all of
// them, and a launch comes with its kernel.
#include <catch2/catch.hpp>

#include <time.h>

#include <algorithm>

#include "collector/interval_peek.h"
#include "collector/session.h"
#include "fake_backend.h"
#include "session_fixture.h"
#include "test_util.h"

using namespace profagent;
using namespace profagent::collector;
using namespace profagent::collector::testing;

namespace {

uint64_t marked(const DrainResult& result, uint64_t marker) {
  uint64_t count = 0;
  for (const ThreadEvents& thread : result.threads) {
    count += uint64_t(std::count_if(thread.events.begin(), thread.events.end(),
                                    [&](const HostEvent& e) { return e.arg1 == marker; }));
  }
  return count;
}

bool has_host(const Trace& trace, uint64_t id) {
  return std::any_of(trace.host.begin(), trace.host.end(), [&](const HostRecord& h) { return h.id == id; });
}

// A window being recorded from now, and a cursor that has peeked it once (a fresh cursor's first
// peek starts it at this window).
void start_recording_window(IntervalCursor& cursor, PeekedInterval& peeked) {
  start_session_once();
  freeze_window();
  set_state(RecordState::Record);
  REQUIRE(peek_interval(cursor, peeked));
}

// The clock's ticks `ms` milliseconds from now, from its rate measured over 1 ms (ticks are the
// CPU counter's: a few GHz on x86-64, tens of MHz on aarch64 and under qemu).
uint64_t ticks_in_ms(uint64_t ms) {
  const uint64_t t0 = now(), ns0 = clock::monotonic_ns();
  const timespec pause{0, 1'000'000};
  nanosleep(&pause, nullptr);
  const uint64_t t1 = now(), ns1 = clock::monotonic_ns();
  return t1 + uint64_t(double(t1 - t0) / double(ns1 - ns0) * double(ms) * 1e6);
}

}  // namespace

TEST_CASE("peek_all gives each committed event once and takes none: drain_all still gets them all", "[buffers]") {
  drain_all();
  constexpr uint64_t kMarker = 0xB0B0;
  constexpr uint64_t kFirst = 2 * kEventsPerChunk + 5;  // spans chunk boundaries
  for (uint64_t i = 0; i < kFirst; ++i) record(make_event(EventKind::Runtime, i, i + 1, kMarker));
  CHECK(marked(peek_all(), kMarker) == kFirst);
  CHECK(marked(peek_all(), kMarker) == 0);  // nothing new
  for (uint64_t i = 0; i < kEventsPerChunk; ++i) record(make_event(EventKind::Runtime, i, i + 1, kMarker));
  CHECK(marked(peek_all(), kMarker) == kEventsPerChunk);  // only what came since
  const std::vector<HostEvent> drained = drain_marked(kMarker);
  REQUIRE(drained.size() == kFirst + kEventsPerChunk);  // every event, peeked or not
  CHECK(std::is_sorted(drained.begin(), drained.end(),
                       [](const HostEvent& a, const HostEvent& b) { return a.id < b.id; }));
  // After a drain, a peek starts after what was drained.
  record(make_event(EventKind::Runtime, 1, 2, kMarker));
  CHECK(marked(peek_all(), kMarker) == 1);
  CHECK(drain_marked(kMarker).size() == 1);
}

TEST_CASE("peek_interval: the calls committed since the last peek, each launch with its kernel", "[session]") {
  start_session_once();
  freeze_window();  // earlier cases' leftovers are not this case's
  set_state(RecordState::Record);
  IntervalCursor cursor;
  const uint64_t first = hooked_launch("_Z4gemmv");
  const uint64_t second = hooked_launch("_Z4reluv");
  PeekedInterval peeked;
  REQUIRE(peek_interval(cursor, peeked));
  REQUIRE(peeked.recording);
  CHECK(peeked.new_window);
  CHECK(peeked.trace.process.pid == uint32_t(getpid()));
  CHECK(peeked.trace.device_backend == "fake");
  CHECK(has_host(peeked.trace, first));
  CHECK(has_host(peeked.trace, second));
  REQUIRE(peeked.trace.device.size() == 2);
  for (const DeviceRecord& d : peeked.trace.device) {
    REQUIRE(d.host >= 0);
    CHECK(peeked.trace.host[size_t(d.host)].correlation == d.correlation);
  }
  const uint32_t window = peeked.trace.window;

  const uint64_t third = hooked_launch("_Z4gemmv");
  REQUIRE(peek_interval(cursor, peeked));
  CHECK_FALSE(peeked.new_window);
  CHECK(peeked.trace.window == window);
  CHECK(peeked.events == 1);
  CHECK(has_host(peeked.trace, third));
  CHECK_FALSE(has_host(peeked.trace, first));
  CHECK(peeked.trace.device.size() == 1);

  // The window's own join holds every call and every kernel, as without the peeks.
  Trace whole = freeze_window();
  CHECK(whole.window == window);
  CHECK(has_host(whole, first));
  CHECK(has_host(whole, second));
  CHECK(has_host(whole, third));
  CHECK(whole.device.size() == 3);

  // The next window is a new one; nothing is given while nothing is recorded.
  hooked_launch("_Z4gemmv");
  REQUIRE(peek_interval(cursor, peeked));
  CHECK(peeked.new_window);
  CHECK(peeked.trace.window == window + 1);
  set_state(RecordState::Off);
  REQUIRE(peek_interval(cursor, peeked));
  CHECK_FALSE(peeked.recording);
  freeze_window();
}

TEST_CASE("peek_interval: a launch whose kernel has not come is held for the next interval, once", "[session]") {
  IntervalCursor cursor;
  PeekedInterval peeked;
  start_recording_window(cursor, peeked);
  HostEvent launch{};
  uint32_t correlation = 0;
  {
    RuntimeGuard guard;
    launch = make_event(EventKind::Launch, now(), 0);
    push_external_id(launch.id);
    correlation = fake().link_only();  // its record comes when the test says
    pop_external_id();
    launch.end = now();
    record(launch);
  }
  const uint64_t after = hooked_launch("_Z4reluv");  // ended after the held call, its kernel came
  REQUIRE(after != 0);
  REQUIRE(peek_interval(cursor, peeked));
  CHECK_FALSE(has_host(peeked.trace, launch.id));  // held: its kernel has not come
  // The interval ends before the held call ended, so what ended after it waits too: its end
  // stays a promise that every call returned by then is in the partial trace.
  CHECK(peeked.trace.end_ns < clock::converter().to_ns(launch.end));
  CHECK_FALSE(has_host(peeked.trace, after));
  CHECK(peeked.trace.device.empty());  // nor is the later call's kernel written without its call
  fake().complete_kernel_at_flush(correlation, clock::monotonic_ns(), 1);
  REQUIRE(peek_interval(cursor, peeked));
  REQUIRE(has_host(peeked.trace, launch.id));  // now with its kernel
  REQUIRE(has_host(peeked.trace, after));
  REQUIRE(peeked.trace.device.size() == 2);
  CHECK(std::count_if(peeked.trace.device.begin(), peeked.trace.device.end(),
                      [&](const DeviceRecord& d) { return d.correlation == correlation; }) == 1);
  set_state(RecordState::Off);
  freeze_window();
}

TEST_CASE("peek_interval: an interval ends at one instant, and what ended after it comes next", "[session]") {
  IntervalCursor cursor;
  PeekedInterval peeked;
  start_recording_window(cursor, peeked);
  constexpr uint64_t kMarker = 0x1A7E;
  // Committed before the peek but ending after the instant the peek is taken at, as a call of
  // another thread committed while the buffers are read: its interval is the next one.
  // 300 ms ahead: the peek below must come before it also on a loaded machine (2 M ticks, under
  // a millisecond, was passed by a preemption before the peek).
  const uint64_t late_end = ticks_in_ms(300);
  HostEvent late = make_event(EventKind::Runtime, now(), late_end, kMarker, intern("cudaMemcpy"));
  record(late);
  const uint64_t early = hooked_launch("_Z4gemmv");
  REQUIRE(peek_interval(cursor, peeked));
  CHECK(has_host(peeked.trace, early));
  CHECK_FALSE(has_host(peeked.trace, late.id));
  for (const HostRecord& h : peeked.trace.host) CHECK(h.end_ns <= peeked.trace.end_ns);
  const timespec pause{0, 10'000'000};
  while (now() <= late_end) nanosleep(&pause, nullptr);  // the clock passes the event's end
  REQUIRE(peek_interval(cursor, peeked));
  CHECK(has_host(peeked.trace, late.id));
  CHECK_FALSE(has_host(peeked.trace, early));
  for (const HostRecord& h : peeked.trace.host) CHECK(h.end_ns <= peeked.trace.end_ns);
  set_state(RecordState::Off);
  freeze_window();
}
