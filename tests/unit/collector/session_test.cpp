// The session end to end with a fake device backend: start, hooks recording through api.h,
// freeze producing a Trace, windows, late records, fork.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "collector/clock.h"
#include "collector/session.h"
#include "fake_backend.h"
#include "session_fixture.h"
#include "operator_scope.h"
#include "test_util.h"

using namespace profagent;
using namespace profagent::collector;
using namespace profagent::collector::testing;


TEST_CASE("session: a window joins hooked calls, operators and device records", "[session]") {
  start_session_once();
  CHECK_FALSE(start(SessionOptions{}));  // once per process
  CHECK(first_window_number() == 1);     // windows are numbered from 1
  freeze_window();                       // earlier cases' leftovers are not this case's
  set_state(RecordState::Record);
  uint64_t op = 0, inner = 0;
  op = operator_scope("aten::linear", [&] { inner = hooked_launch("_Z4gemmv"); });
  uint64_t outer = hooked_launch("_Z4reluv");
  CHECK(fake().started);
  CHECK(g_device_tracing.load());

  Trace trace = freeze_window();
  CHECK(trace.window > first_window_number());
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

// A launch whose kernel has not run yet: its link goes out with the next flush, its record
// only when the test says.
std::pair<uint64_t, uint32_t> launch_with_queued_work() {
  RuntimeGuard guard;
  HostEvent event = make_event(EventKind::Launch, now(), 0);
  push_external_id(event.id);
  const uint32_t correlation = fake().link_only();
  pop_external_id();
  event.end = now();
  record(event);
  return {event.id, correlation};
}

TEST_CASE("session: a window waits for the device work it issued", "[session]") {
  start_session_once();
  set_state(RecordState::Record);
  const auto [launch, correlation] = launch_with_queued_work();
  fake().complete_kernel_at_flush(correlation, clock::monotonic_ns(), 3);
  const int flushes_before = fake().flushes;
  Trace trace = freeze_window();
  CHECK(fake().flushes - flushes_before >= 3);
  REQUIRE(trace.device.size() == 1);
  REQUIRE(trace.device[0].host >= 0);
  CHECK(trace.host[trace.device[0].host].id == launch);
  CHECK(trace.drops.late_device_records == 0);
  CHECK(trace.drops.unmatched_device_records == 0);
  CHECK(trace.join_wait_ns < uint64_t(unit_wait_ms()) * 1'000'000);
}

TEST_CASE("session: work still missing after the wait is late in its own window only, running events carry over",
          "[session]") {
  start_session_once();
  set_state(RecordState::Record);
  const auto [launch, correlation] = launch_with_queued_work();
  Trace first = freeze_window();
  CHECK(first.drops.late_device_records == 1);
  CHECK(first.device.empty());
  CHECK(find_host(first, launch) != nullptr);
  CHECK(first.join_wait_ns >= uint64_t(unit_wait_ms()) * 1'000'000);
  // It comes now, during the next window: it is dropped, never put into that window.
  fake().complete_kernel(correlation, clock::monotonic_ns());
  const uint64_t next_launch = hooked_launch("_Z4nextv");
  // An event still running at the next cut (it ends in the future) waits for the window after.
  HostEvent running = make_event(EventKind::Runtime, now(), now() + 20'000'000);
  record(running);
  Trace second = freeze_window();
  CHECK(second.drops.late_device_records == 0);
  CHECK(second.drops.unmatched_device_records == 0);
  REQUIRE(second.device.size() == 1);
  CHECK(second.host[second.device[0].host].id == next_launch);
  CHECK(find_host(second, running.id) == nullptr);
  while (now() <= running.end) {
  }
  Trace third = freeze_window();
  CHECK(find_host(third, running.id) != nullptr);
  CHECK(third.window == second.window + 1);
  CHECK(third.device.empty());
}

TEST_CASE("session: a record arriving after a later cut goes to its own window", "[session]") {
  start_session_once();
  set_state(RecordState::Record);
  const auto [first_launch, correlation] = launch_with_queued_work();
  CutWindow* first_cut = cut_window();
  const uint64_t second_launch = hooked_launch("_Z6secondv");  // its record is out at once
  CutWindow* second_cut = cut_window();
  fake().complete_kernel_at_flush(correlation, clock::monotonic_ns(), 1);
  Trace first = finish_window(first_cut);
  Trace second = finish_window(second_cut);
  REQUIRE(first.device.size() == 1);
  CHECK(first.host[first.device[0].host].id == first_launch);
  REQUIRE(second.device.size() == 1);
  CHECK(second.host[second.device[0].host].id == second_launch);
  CHECK(first.drops.late_device_records + second.drops.late_device_records == 0);
  CHECK(first.drops.unmatched_device_records + second.drops.unmatched_device_records == 0);
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
