// PROFAGENT_MAX_EVENTS and PROFAGENT_MIN_DURATION_US on synthetic windows (collector/window_limits.h).
#include <catch2/catch.hpp>

#include "collector/window_limits.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

HostEvent event(uint64_t id, uint64_t start, uint64_t end, EventKind kind, uint64_t arg0 = 0) {
  HostEvent e{};
  e.id = id, e.start = start, e.end = end, e.kind = uint8_t(kind), e.arg0 = arg0;
  return e;
}

DeviceRecord kernel(uint64_t external_id, uint64_t start_ns) {
  DeviceRecord r;
  r.external_id = external_id, r.start_ns = start_ns, r.end_ns = start_ns + 5;
  return r;
}

size_t count(const std::vector<ThreadEvents>& threads) {
  size_t n = 0;
  for (const ThreadEvents& t : threads) n += t.events.size();
  return n;
}

}  // namespace

TEST_CASE("min duration: short calls go, calls and ranges device work names stay", "[window_limits]") {
  std::vector<ThreadEvents> threads(1);
  auto& events = threads[0].events;
  events.push_back(event(1, 0, 2, EventKind::Runtime));        // 2 ns: left out
  events.push_back(event(2, 10, 30, EventKind::Runtime));      // 20 ns: kept
  events.push_back(event(3, 40, 41, EventKind::Launch, 0xf));  // issued work: kept however short
  events.push_back(event(4, 50, 52, EventKind::Range));        // named by a kernel: kept
  events.push_back(event(5, 60, 61, EventKind::Range));        // left out
  events.push_back(event(6, 70, 71, EventKind::Alloc));        // bookkeeping: kept
  std::vector<DeviceRecord> device{kernel(4, 100)};
  DropCounters drops;
  apply_window_limits({.max_events = 0, .min_duration_ns = 10}, threads, device, clock::TickConverter(), drops);
  std::vector<uint64_t> kept;
  for (const HostEvent& e : events) kept.push_back(e.id);
  CHECK(kept == std::vector<uint64_t>{2, 3, 4, 6});
  CHECK(drops.shorter_than_min_duration == 2);
  CHECK(device.size() == 1);
}

TEST_CASE("max events: the earliest events on every thread, and the device work started by then", "[window_limits]") {
  std::vector<ThreadEvents> threads(2);
  for (uint64_t i = 0; i < 10; ++i) {
    threads[i % 2].events.push_back(event(i + 1, i * 10, i * 10 + 5, EventKind::Runtime));
  }
  std::vector<DeviceRecord> device{kernel(1, 20), kernel(2, 60), kernel(3, 90)};
  DropCounters drops;
  apply_window_limits({.max_events = 4, .min_duration_ns = 0}, threads, device, clock::TickConverter(), drops);
  CHECK(count(threads) == 4);
  for (const ThreadEvents& t : threads) {
    for (const HostEvent& e : t.events) CHECK(e.end <= 35);  // events 1-4 end at 5, 15, 25, 35
  }
  CHECK(drops.over_max_events == 6);
  CHECK(device.size() == 1);  // the kernels that started after the last kept event are left out
  CHECK(drops.over_max_events_device_records == 2);
}

TEST_CASE("limits off or not reached change nothing", "[window_limits]") {
  std::vector<ThreadEvents> threads(1);
  threads[0].events.push_back(event(1, 0, 1, EventKind::Runtime));
  std::vector<DeviceRecord> device{kernel(1, 5)};
  DropCounters drops;
  apply_window_limits({}, threads, device, clock::TickConverter(), drops);
  apply_window_limits({.max_events = 1, .min_duration_ns = 0}, threads, device, clock::TickConverter(), drops);
  CHECK(count(threads) == 1);
  CHECK(device.size() == 1);
  CHECK((drops.over_max_events == 0 && drops.shorter_than_min_duration == 0));
}
