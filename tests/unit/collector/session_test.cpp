// The session end to end with a fake device backend: start, hooks recording through api.h,
// freeze producing a Trace, windows, late records, fork.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "collector/clock.h"
#include "collector/session.h"
#include "fake_backend.h"
#include "operator_scope.h"
#include "test_util.h"

using namespace profagent;
using namespace profagent::collector;
using namespace profagent::collector::testing;

namespace {

FakeBackend& fake() {
  static auto* backend = new FakeBackend;
  return *backend;
}

PlatformInfo fake_platform() {
  PlatformInfo info;
  info.devices.push_back(DeviceInfo{});
  info.devices.back().name = "Fake GPU";
  info.cuda_runtime_version = 13000;
  return info;
}

// What hooks/hook.h does around a runtime launch.
uint64_t hooked_launch(const char* kernel) {
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

void start_session_once() {
  static bool done = [] {
    drain_all();  // other tests' events are not this session's
    SessionOptions options;
    options.device_backend = &fake();
    options.platform_info = &fake_platform;
    options.config = {{"PROFAGENT_CUPTI", "auto"}};
    return start(options);
  }();
  REQUIRE(done);
}

}  // namespace

TEST_CASE("session: a window joins hooked calls, operators and device records", "[session]") {
  start_session_once();
  CHECK_FALSE(start(SessionOptions{}));  // once per process
  set_state(RecordState::Record);
  uint64_t op = 0, inner = 0;
  op = operator_scope("aten::linear", [&] { inner = hooked_launch("_Z4gemmv"); });
  uint64_t outer = hooked_launch("_Z4reluv");
  CHECK(fake().started);
  CHECK(g_device_tracing.load());

  Trace trace = freeze_window();
  CHECK(trace.window == 1);
  CHECK(trace.device_backend == "fake");
  CHECK(trace.cupti_version == "fake-1");
  CHECK(trace.process.pid == uint32_t(getpid()));
  CHECK(trace.config.size() == 1);
  REQUIRE(trace.devices.size() == 1);
  CHECK(trace.devices[0].name == "Fake GPU");
  CHECK(trace.cuda_runtime_version == 13000);
  CHECK(fake().flushes >= 1);

  const HostRecord* op_record = find_host(trace, op);
  const HostRecord* inner_record = find_host(trace, inner);
  const HostRecord* outer_record = find_host(trace, outer);
  REQUIRE(op_record);
  REQUIRE(inner_record);
  REQUIRE(outer_record);
  CHECK(op_record->name == "aten::linear");
  CHECK(inner_record->name == "cudaLaunchKernel");
  CHECK(inner_record->parent == op_record - trace.host.data());
  CHECK(inner_record->external_id == op);
  CHECK(outer_record->external_id == outer);
  CHECK(inner_record->tid == this_tid());
  CHECK(trace.start_ns <= op_record->start_ns);
  CHECK(outer_record->end_ns <= trace.end_ns);

  REQUIRE(trace.device.size() == 2);
  for (const DeviceRecord& d : trace.device) {
    REQUIRE(d.host >= 0);
    const HostRecord& issuer = trace.host[d.host];
    CHECK(issuer.correlation == d.correlation);
    CHECK(d.external_id == issuer.external_id);
    CHECK((d.name == "gemm()" || d.name == "relu()"));
  }
  CHECK(trace.drops.host_events == 0);
  CHECK(trace.drops.unmatched_device_records == 0);
  auto& names = trace.process.thread_names;
  CHECK(std::any_of(names.begin(), names.end(), [](auto& p) { return p.first == this_tid(); }));
}

TEST_CASE("session: records of an earlier window are late; running events carry over",
          "[session]") {
  start_session_once();
  set_state(RecordState::Record);
  uint64_t launch = hooked_launch("_Z1kv");
  freeze_window();  // the launch's window, whose device record we now "lose" ...
  {
    // ... and deliver after the window was written: its host call is in no window.
    RuntimeGuard guard;
    push_external_id(launch);
    fake().enqueue_kernel("_Z1kv", clock::monotonic_ns(), 10);
    pop_external_id();
  }
  // An event still running at the next cut (it ends in the future) waits for the window after.
  HostEvent running = make_event(EventKind::Runtime, now(), now() + 20'000'000);
  record(running);
  Trace second = freeze_window();
  CHECK(second.drops.late_device_records == 1);
  CHECK(second.device.empty());
  CHECK(find_host(second, running.id) == nullptr);
  while (now() <= running.end) {
  }
  Trace third = freeze_window();
  CHECK(find_host(third, running.id) != nullptr);
  CHECK(third.window == second.window + 1);
}

TEST_CASE("session: a link serves one more window, then it is dropped", "[session]") {
  start_session_once();
  set_state(RecordState::Record);
  auto call_with_late_work = [] {
    RuntimeGuard guard;
    HostEvent event = make_event(EventKind::Launch, now(), 0);
    push_external_id(event.id);
    const uint32_t correlation = fake().link_only();
    pop_external_id();
    event.end = now();
    record(event);
    return correlation;
  };
  // One cut after its link came, the record still finds its (written) call: late.
  const uint32_t first = call_with_late_work();
  freeze_window();
  fake().complete_kernel(first, clock::monotonic_ns());
  Trace next = freeze_window();
  CHECK(next.drops.late_device_records == 1);
  CHECK(next.drops.unmatched_device_records == 0);
  // Two cuts later the link is gone (CUPTI sends one per call: keeping all would grow forever).
  const uint32_t second = call_with_late_work();
  freeze_window();
  freeze_window();
  fake().complete_kernel(second, clock::monotonic_ns());
  Trace last = freeze_window();
  CHECK(last.drops.late_device_records == 0);
  CHECK(last.drops.unmatched_device_records == 1);
}

TEST_CASE("session: nothing is recorded while the state is Off", "[session]") {
  start_session_once();
  set_state(RecordState::Off);
  CHECK(hooked_launch("_Z1kv") == 0);
  Trace trace = freeze_window();
  CHECK(trace.host.empty());
  set_state(RecordState::Record);
}

TEST_CASE("session: a forked child records into fresh buffers under its own pid", "[session]") {
  start_session_once();
  set_state(RecordState::Record);
  uint64_t before_fork = hooked_launch("_Z6parentv");
  pid_t child = fork();
  if (child == 0) {
    uint64_t in_child = hooked_launch("_Z5childv");
    Trace trace = freeze_window();
    bool ok = trace.process.pid == uint32_t(getpid()) && find_host(trace, in_child) &&
              !find_host(trace, before_fork) && trace.host.size() == 1 &&
              trace.device_backend == "none (forked child)" && !g_device_tracing.load() &&
              trace.device.empty();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  Trace parent = freeze_window();
  CHECK(find_host(parent, before_fork) != nullptr);
}
