// The one session of the collector's unit-test process (a session starts once per process),
// over the fake device backend, shared by every test that freezes windows.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>

#include "collector/clock.h"
#include "collector/session.h"
#include "fake_backend.h"

namespace profagent::collector::testing {

// The join's wait bound in these tests: 300 ms, or PROFAGENT_UNIT_WAIT_MS where the tests run
// slowly (scripts/cross_aarch64.sh under qemu-user, where a loaded machine can take longer than
// 300 ms to deliver a poll's records and the race cases would count them late).
inline uint32_t unit_wait_ms() {
  static const uint32_t ms = [] {
    const char* text = std::getenv("PROFAGENT_UNIT_WAIT_MS");
    const long value = text != nullptr ? std::strtol(text, nullptr, 10) : 0;
    return value > 0 ? uint32_t(value) : 300u;
  }();
  return ms;
}

inline FakeBackend& fake() {
  static auto* backend = new FakeBackend;
  return *backend;
}

inline PlatformInfo fake_platform() {
  PlatformInfo info;
  info.devices.push_back(DeviceInfo{});
  info.devices.back().name = "Fake GPU";
  info.cuda_runtime_version = 13000;
  return info;
}

// What hooks/hook.h does around a runtime launch; 0 when nothing was recorded.
inline uint64_t hooked_launch(const char* kernel) {
  RuntimeGuard guard;
  cuda_in_use();
  if (!guard.should_record()) return 0;
  HostEvent event{};
  event.id = new_event_id();
  event.start = now();
  push_external_id(event.id);
  fake().enqueue_kernel(kernel, clock::monotonic_ns(), 1000);
  pop_external_id();
  event.end = now();
  event.kind = uint8_t(EventKind::Launch);
  event.name = intern("cudaLaunchKernel");
  record(event);
  return event.id;
}

// The number the session's first window got. That window is taken, empty, as the session
// starts, so that no case has to run first to see it.
inline uint32_t& first_window_number() {
  static uint32_t number = 0;
  return number;
}

inline void start_session_once() {
  static bool done = [] {
    drain_all();  // other tests' events are not this session's
    SessionOptions options;
    options.device_backend = &fake();
    options.platform_info = &fake_platform;
    options.config_pairs = [] { return ConfigPairs{{"PROFAGENT_CUPTI", "auto"}}; };
    options.window_wait_ms = unit_wait_ms();
    if (!start(options)) return false;
    // As after the program's first CUDA call: the device backend runs from here on, whichever
    // case comes first (a launch made by hand, without hooked_launch(), would otherwise find
    // no device tracing, and a state change no device to switch).
    cuda_in_use();
    first_window_number() = freeze_window().window;
    return true;
  }();
  REQUIRE(done);
}

}  // namespace profagent::collector::testing
