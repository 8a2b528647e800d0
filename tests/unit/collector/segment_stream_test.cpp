// Segments of the window being recorded (collector/segment_stream.h), through the session: the
// chunks taken go back to the pool, calls inside a range still open are held until it ends and
// then written inside it, a launch waits a few segments for its kernel, and the window's cut
// joins what is left (its tail) with what was held.
#include <catch2/catch.hpp>

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

#include "collector/segment_stream.h"
#include "collector/session.h"
#include "fake_backend.h"
#include "session_fixture.h"
#include "test_util.h"

using namespace profagent;
using namespace profagent::collector;
using namespace profagent::collector::testing;

namespace {

constexpr uint64_t kMarker = 0x5E6;

// Runtime calls on this thread, `count` of them, each now.
void calls(uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t at = now();
    record(make_event(EventKind::Runtime, at, at, kMarker));
  }
}

const HostRecord* find(const Trace& trace, uint64_t id) {
  auto found = std::find_if(trace.host.begin(), trace.host.end(), [&](const HostRecord& h) { return h.id == id; });
  return found == trace.host.end() ? nullptr : &*found;
}

uint64_t marked(const Trace& trace) {
  return uint64_t(std::count_if(trace.host.begin(), trace.host.end(), [](const HostRecord& h) { return h.arg1 == kMarker; }));
}

uint64_t open_range() {
  RangeInfo info;
  info.name = intern("outer");
  push_range(kNoName, &info);
  return new_event_id() - 1;  // the range's id: the one taken just before
}

}  // namespace

TEST_CASE("cut_segment: chunks go back to the pool; a range's calls wait for it and are written inside it", "[session]") {
  start_session_once();
  freeze_window();
  set_state(RecordState::Record);
  StreamLimits limits;
  StreamedSegment segment;

  const uint64_t range = open_range();
  calls(3 * kEventsPerChunk);
  const size_t buffered = buffered_host_events();
  REQUIRE(cut_segment(limits, segment));
  REQUIRE(segment.recording);
  CHECK(segment.first_of_window);
  CHECK(segment.chunks >= 2);                       // the chunks the writer left
  CHECK(buffered_host_events() < buffered);         // ... went back to the pool
  CHECK(marked(segment.trace) == 0);                // inside the open range: held
  CHECK(segment.held_events >= 2 * kEventsPerChunk);
  const uint32_t window = segment.trace.window;

  pop_range(kNoName);
  calls(2 * kEventsPerChunk);
  REQUIRE(cut_segment(limits, segment));
  CHECK_FALSE(segment.first_of_window);
  CHECK(segment.trace.window == window);
  const HostRecord* outer = find(segment.trace, range);
  REQUIRE(outer != nullptr);
  uint64_t inside = 0;
  for (const HostRecord& h : segment.trace.host) {
    if (h.arg1 != kMarker || h.start_ns < outer->start_ns || h.end_ns > outer->end_ns) continue;
    ++inside;
    CHECK(h.external_id == range);
    CHECK(h.parent >= 0);
  }
  CHECK(inside >= 2 * kEventsPerChunk);
  const uint64_t streamed = marked(segment.trace);

  // The cut: the tail, with what the segments held back.
  Trace tail = freeze_window();
  CHECK(tail.window == window);
  CHECK(tail.streamed.segments == 2);
  CHECK(tail.streamed.host_events == streamed + 1);  // with the range
  CHECK(streamed + marked(tail) == 5 * kEventsPerChunk);
  CHECK(find(tail, range) == nullptr);
  set_state(RecordState::Off);
}

TEST_CASE("cut_segment: a launch waits for its kernel, at most device_wait_segments segments", "[session]") {
  start_session_once();
  freeze_window();
  set_state(RecordState::Record);
  StreamLimits limits;
  limits.device_wait_segments = 2;
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
  const uint64_t late = hooked_launch("_Z4gemmv");  // one whose kernel came
  calls(2 * kEventsPerChunk);
  StreamedSegment segment;
  REQUIRE(cut_segment(limits, segment));
  CHECK(find(segment.trace, launch.id) == nullptr);  // waits for its kernel
  fake().complete_kernel_at_flush(correlation, clock::monotonic_ns(), 1);
  calls(kEventsPerChunk);
  REQUIRE(cut_segment(limits, segment));
  const HostRecord* written = find(segment.trace, launch.id);
  REQUIRE(written != nullptr);
  REQUIRE(find(segment.trace, late) != nullptr);
  REQUIRE(segment.trace.device.size() == 2);
  for (const DeviceRecord& d : segment.trace.device) {
    REQUIRE(d.host >= 0);
    CHECK(segment.trace.host[size_t(d.host)].correlation == d.correlation);
  }

  // A kernel that never comes: written without it after two segments, counted.
  HostEvent lost{};
  {
    RuntimeGuard guard;
    lost = make_event(EventKind::Launch, now(), 0);
    push_external_id(lost.id);
    fake().link_only();
    pop_external_id();
    lost.end = now();
    record(lost);
  }
  bool written_lost = false;
  for (int i = 0; i < 3 && !written_lost; ++i) {
    calls(kEventsPerChunk);
    REQUIRE(cut_segment(limits, segment));
    written_lost = find(segment.trace, lost.id) != nullptr;
    if (i < 1) CHECK_FALSE(written_lost);
  }
  CHECK(written_lost);
  Trace tail = freeze_window();
  CHECK(tail.streamed.written_without_device_record == 1);
  CHECK(tail.drops.late_device_records >= 1);
  set_state(RecordState::Off);
}

// Two threads cutting at once (the agent's thread and the exit's flush): their turns keep one
// cut at a time, so every call taken is written by exactly one segment, and a turn not given
// back is waited for, not raced (TSan runs this case).
TEST_CASE("cut_segment: two threads cut in turns and write each call once", "[session]") {
  start_session_once();
  freeze_window();
  set_state(RecordState::Record);
  calls(8 * kEventsPerChunk);
  StreamLimits limits;
  limits.segment_events = kEventsPerChunk;  // a chunk a segment: the cuts share the work
  std::mutex mutex;
  std::vector<uint64_t> written;
  uint64_t segments = 0;
  auto cutter = [&] {
    for (int i = 0; i < 8; ++i) {
      StreamedSegment segment;
      if (!cut_segment(limits, segment) || !segment.recording) continue;
      std::lock_guard lock(mutex);
      ++segments;
      for (const HostRecord& h : segment.trace.host) {
        if (h.arg1 == kMarker) written.push_back(h.id);
      }
    }
  };
  std::thread first(cutter), second(cutter);
  first.join();
  second.join();
  CHECK(segments == 16);
  std::sort(written.begin(), written.end());
  CHECK(std::adjacent_find(written.begin(), written.end()) == written.end());  // none twice
  CHECK(written.size() >= 7 * kEventsPerChunk);  // all but the writer's open chunk
  const Trace tail = freeze_window();
  CHECK(written.size() + marked(tail) == 8 * kEventsPerChunk);
}

// The cut carries to the next window what its writers committed before it that ended after it
// (other threads' calls around a step's end). A streamed window's segments join those first:
// left to its tail, they would come after the steps they fall in were folded.
TEST_CASE("cut_segment: what the last cut carried goes with the window's first segment", "[session]") {
  start_session_once();
  freeze_window();
  set_state(RecordState::Record);
  const uint64_t start = now();
  const HostEvent carried = make_event(EventKind::Runtime, start, start + (uint64_t{1} << 40), kMarker);
  record(carried);
  const Trace before = freeze_window();  // the cut: `carried` ends after it
  CHECK(find(before, carried.id) == nullptr);

  calls(2 * kEventsPerChunk);
  StreamLimits limits;
  StreamedSegment segment;
  REQUIRE(cut_segment(limits, segment));
  CHECK(segment.first_of_window);
  CHECK(find(segment.trace, carried.id) != nullptr);
  const uint64_t streamed = marked(segment.trace);
  const Trace tail = freeze_window();
  CHECK(find(tail, carried.id) == nullptr);  // written once
  CHECK(streamed + marked(tail) == 2 * kEventsPerChunk + 1);
  set_state(RecordState::Off);
}

// A streamed window's outputs (its traces, folds, stacks) are the agent's one window at a time:
// the next window's first segment waits until the streamed one is exported, and the events it
// finds meanwhile stay buffered, none lost, for the segment after the export or the cut.
TEST_CASE("cut_segment: the window after a streamed one is streamed once that one is exported", "[session]") {
  start_session_once();
  freeze_window();
  streamed_window_exported(UINT32_MAX);  // whatever an earlier case left
  set_state(RecordState::Record);
  calls(2 * kEventsPerChunk);
  StreamLimits limits;
  StreamedSegment segment;
  REQUIRE(cut_segment(limits, segment));
  REQUIRE(segment.recording);
  const uint32_t streamed = segment.trace.window;
  const Trace first = freeze_window();
  REQUIRE(first.window == streamed);
  REQUIRE(first.streamed.segments == 1);

  calls(2 * kEventsPerChunk);
  const size_t buffered = buffered_host_events();
  REQUIRE(cut_segment(limits, segment));
  CHECK_FALSE(segment.recording);  // window `streamed` is not exported yet
  CHECK(buffered_host_events() == buffered);  // nothing taken

  streamed_window_exported(streamed - 1);  // an earlier window's export does not let it go
  REQUIRE(cut_segment(limits, segment));
  CHECK_FALSE(segment.recording);

  streamed_window_exported(streamed);
  REQUIRE(cut_segment(limits, segment));
  REQUIRE(segment.recording);
  CHECK(segment.first_of_window);
  CHECK(segment.trace.window == streamed + 1);
  const uint64_t written = marked(segment.trace);
  CHECK(written >= kEventsPerChunk);
  const Trace tail = freeze_window();
  CHECK(tail.window == streamed + 1);
  CHECK(written + marked(tail) == 2 * kEventsPerChunk);
  streamed_window_exported(tail.window);
  set_state(RecordState::Off);
}
