// The hook template (hooks/hook.h) driven directly, with fake "real" functions: what it
// records, that it returns the real result unchanged, that nested and agent-internal calls
// pass through, and what happens when no real function exists. Plus the resolver's caching.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstring>
#include <string>
#include <vector>

#include "agent/profagent.h"
#include "collector/names.h"
#include "collector/session.h"
#include "collector/thread_buffer.h"
#include "hooks/cudart.h"
#include "hooks/record_cost.h"
#include "hooks/stream_capture.h"

// The public C API is noexcept for C++ callers, as every function the agent exports around
// its own code (a throw from it could only end the program).
static_assert(noexcept(profagent_step()) && noexcept(profagent_range_push("")) && noexcept(profagent_range_pop()));

namespace {

using profagent::EventKind;
using profagent::HostEvent;
using profagent::collector::RecordState;
using profagent::hooks::Payload;
using Site = profagent::hooks::CudartSite;
using profagent::hooks::kCudart13;

int g_real_calls = 0;

cudaError_t fake_copy(void* destination, const void* source, size_t bytes) {
  ++g_real_calls;
  std::memcpy(destination, source, bytes);
  return bytes > 4 ? cudaErrorInvalidValue : cudaSuccess;
}

Site site_fake_copy{"fakeCopy", kCudart13};
Site site_fake_outer{"fakeOuter", kCudart13};

cudaError_t hooked_copy(void* destination, const void* source, size_t bytes) {
  return profagent::hooks::intercept_hook<decltype(fake_copy)>(
      site_fake_copy, [&]() noexcept { return Payload{EventKind::Memcpy, 0, bytes, 0}; }, destination,
      source, bytes);
}

// A "runtime function" that itself calls another hooked function, as one runtime entry
// reaching another: only the outer call may be recorded.
cudaError_t fake_outer(int value) {
  char byte = 0;
  return value == 0 ? hooked_copy(&byte, &byte, 1) : cudaErrorUnknown;
}
cudaError_t hooked_outer(int value) {
  return profagent::hooks::intercept_hook<decltype(fake_outer)>(
      site_fake_outer, [&]() noexcept { return Payload{EventKind::Runtime, 0, uint64_t(value), 0}; }, value);
}

using profagent::collector::set_state;  // keeps the hooks' work byte in step with the state

std::vector<HostEvent> drained_events() {
  std::vector<HostEvent> events;
  for (auto& thread : profagent::collector::drain_all().threads) {
    events.insert(events.end(), thread.events.begin(), thread.events.end());
  }
  return events;
}

struct Fixture {
  Fixture() {
    site_fake_copy.real.address = reinterpret_cast<void*>(&fake_copy);
    site_fake_outer.real.address = reinterpret_cast<void*>(&fake_outer);
    drained_events();  // leftovers of other tests
    g_real_calls = 0;
  }
  ~Fixture() { set_state(RecordState::Off); }
};

}  // namespace

TEST_CASE_METHOD(Fixture, "a recorded call stores one event and returns the real result unchanged") {
  set_state(RecordState::Record);
  char source[8] = "abcdefg", destination[8] = {};
  CHECK(hooked_copy(destination, source, 3) == cudaSuccess);
  CHECK(hooked_copy(destination, source, 8) == cudaErrorInvalidValue);
  CHECK(std::string(destination) == "abcdefg");
  CHECK(g_real_calls == 2);
  const std::vector<HostEvent> events = drained_events();
  REQUIRE(events.size() == 2);
  CHECK(events[0].kind == uint8_t(EventKind::Memcpy));
  CHECK(events[0].arg0 == 3);
  CHECK(events[0].result == cudaSuccess);
  CHECK((events[0].flags & profagent::kFlagFailed) == 0);
  CHECK(events[1].result == cudaErrorInvalidValue);
  CHECK((events[1].flags & profagent::kFlagFailed) != 0);
  CHECK(events[0].start <= events[0].end);
  CHECK(events[0].id != events[1].id);
  CHECK(events[0].name == events[1].name);
  CHECK(profagent::collector::names_snapshot().at(events[0].name) == "fakeCopy");
}

TEST_CASE_METHOD(Fixture, "measuring the record cost leaves the thread's buffer as it was") {
  set_state(RecordState::Record);
  char source[8] = "abc", destination[8] = {};
  CHECK(hooked_copy(destination, source, 3) == cudaSuccess);  // the thread has a buffer and an event
  const uint64_t ps = profagent::hooks::measure_record_cost_ps();
  CHECK(ps > 0);
  CHECK(ps < 100'000'000);  // a recording step is nowhere near 100 us, even on a loaded machine
  CHECK(hooked_copy(destination, source, 3) == cudaSuccess);  // and the thread records as before
  const std::vector<HostEvent> events = drained_events();
  REQUIRE(events.size() == 2);
  CHECK(profagent::collector::names_snapshot().at(events[0].name) == "fakeCopy");
  CHECK(profagent::collector::names_snapshot().at(events[1].name) == "fakeCopy");
  CHECK(events[1].id != events[0].id);
}

TEST_CASE_METHOD(Fixture, "not recording: the call is forwarded and nothing is stored") {
  set_state(RecordState::Off);
  char byte = 'x', copy = 0;
  CHECK(hooked_copy(&copy, &byte, 1) == cudaSuccess);
  CHECK(copy == 'x');
  CHECK(g_real_calls == 1);
  CHECK(drained_events().empty());
}

TEST_CASE_METHOD(Fixture, "a runtime function reaching another hooked one is one event") {
  set_state(RecordState::Record);
  CHECK(hooked_outer(0) == cudaSuccess);
  CHECK(hooked_outer(1) == cudaErrorUnknown);
  CHECK(g_real_calls == 1);  // the inner call ran, forwarded
  const std::vector<HostEvent> events = drained_events();
  REQUIRE(events.size() == 2);
  CHECK(events[0].kind == uint8_t(EventKind::Runtime));
  CHECK(events[1].arg0 == 1);
}

TEST_CASE_METHOD(Fixture, "calls the agent makes itself are not recorded") {
  set_state(RecordState::Record);
  char byte = 0;
  {
    profagent::collector::AgentBusy busy;
    CHECK(hooked_copy(&byte, &byte, 1) == cudaSuccess);
  }
  CHECK(g_real_calls == 1);
  CHECK(drained_events().empty());
}

namespace {
std::vector<std::string> g_reported;
void remember_report(const char* symbol, const char* library, const char* returned) noexcept {
  g_reported.push_back(std::string(symbol) + " " + library + " " + returned);
}
Site site_missing{"profagent_test_symbol_nobody_defines", kCudart13};
}  // namespace

TEST_CASE_METHOD(Fixture, "no real function: an initialisation error, reported once, no crash") {
  set_state(RecordState::Record);
  profagent::hooks::set_unresolved_reporter(remember_report);
  auto call = [] {
    return profagent::hooks::intercept_hook<decltype(fake_outer)>(
        site_missing, []() noexcept { return Payload{}; }, 0);
  };
  CHECK(call() == cudaErrorSharedObjectInitFailed);
  CHECK(call() == cudaErrorSharedObjectInitFailed);
  CHECK(g_reported == std::vector<std::string>{
                          "profagent_test_symbol_nobody_defines libcudart.so.13 cudaErrorSharedObjectInitFailed"});
  CHECK(drained_events().empty());
  profagent::hooks::set_unresolved_reporter(nullptr);
}

TEST_CASE("the resolver finds the next definition and caches misses until something is loaded") {
  profagent::hooks::RealSymbol strlen_symbol{"strlen"};
  void* found = profagent::hooks::resolve(strlen_symbol);
  REQUIRE(found != nullptr);
  CHECK(found == dlsym(RTLD_DEFAULT, "strlen"));
  CHECK(profagent::hooks::resolve(strlen_symbol) == found);

  profagent::hooks::RealSymbol missing{"profagent_test_symbol_nobody_defines_either"};
  CHECK(profagent::hooks::resolve(missing) == nullptr);
  const uint64_t generation = profagent::hooks::loader_generation();
  CHECK(missing.missed_at_generation.load() == generation);
  void* library = dlopen("libutil.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library != nullptr && profagent::hooks::loader_generation() != generation) {
    CHECK(profagent::hooks::resolve(missing) == nullptr);  // looked up again, still missing
    CHECK(missing.missed_at_generation.load() == profagent::hooks::loader_generation());
  }
}

TEST_CASE("stream capture is tracked per stream, and only after a successful begin") {
  namespace capture = profagent::hooks::capture;
  auto* stream = reinterpret_cast<cudaStream_t>(0x1234);
  auto* other = reinterpret_cast<cudaStream_t>(0x5678);
  CHECK_FALSE(capture::is_capturing(stream));
  capture::begin(stream, cudaErrorInvalidValue);
  CHECK_FALSE(capture::is_capturing(stream));
  capture::begin(stream, cudaSuccess);
  CHECK(capture::is_capturing(stream));
  CHECK_FALSE(capture::is_capturing(other));
  CHECK_FALSE(capture::is_capturing(nullptr));  // the legacy stream cannot be captured
  capture::end(stream);
  CHECK_FALSE(capture::is_capturing(stream));
}
