// The per-thread marks a take gives a streamed window (thread_buffer.h TakenThread): every event
// of a thread not taken yet starts at or after them. A thread inside a call across a take holds
// from the end of its last event committed before the call; a thread that records nothing holds
// nothing; an idle thread's few events are taken from its open chunk.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "collector/thread_buffer.h"
#include "test_util.h"

using namespace profagent;
using namespace profagent::collector;
using namespace profagent::collector::testing;

namespace {

constexpr uint64_t kNone = ~uint64_t{0};

struct Stages {  // the worker and the test take turns: no sleeps
  std::mutex mutex;
  std::condition_variable changed;
  int stage = 0;
  void set(int s) {
    std::lock_guard lock(mutex);
    stage = s;
    changed.notify_all();
  }
  void wait(int s) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return stage >= s; });
  }
};

// The worker's listing in a take (REQUIREd to be there).
TakenThread taken_of(uint32_t tid) {
  TakenChunks taken = take_closed_chunks(SIZE_MAX);
  CHECK(taken.read_at != 0);
  for (TakenThread& t : taken.threads) {
    if (t.events.tid == tid) return std::move(t);
  }
  FAIL("the thread is not listed");
  return {};
}

}  // namespace

TEST_CASE("marks: a thread inside a call across takes holds from its last event's end", "[buffers][segments]") {
  drain_all();
  Stages stages;
  uint32_t tid = 0;
  std::thread worker([&] {
    tid = this_tid();
    record(make_event(EventKind::Runtime, 100, 200, 0xC001));
    call_entered();  // as a hook does before reading its start
    stages.set(1);
    stages.wait(2);
    record(make_event(EventKind::Runtime, 300, 400, 0xC001));  // the call's event
    call_left();
    stages.set(3);
    stages.wait(4);
  });
  stages.wait(1);
  TakenThread first = taken_of(tid);  // its one event stays in its chunk, which it still writes
  CHECK(first.events.events.empty());
  CHECK(first.not_taken_start == 100);
  TakenThread second = taken_of(tid);  // nothing new since: taken from the open chunk
  REQUIRE(second.events.events.size() == 1);
  CHECK(second.events.events[0].start == 100);
  CHECK(second.not_taken_start == 200);  // the call in flight began after that event ended
  CHECK(second.outermost_scope_start == kNone);
  stages.set(2);
  stages.wait(3);
  TakenThread third = taken_of(tid);  // the call's event committed, not taken yet
  CHECK(third.events.events.empty());
  CHECK(third.not_taken_start == 300);
  TakenThread fourth = taken_of(tid);
  REQUIRE(fourth.events.events.size() == 1);
  CHECK(fourth.not_taken_start == kNone);  // idle, in no call: it holds nothing
  stages.set(4);
  worker.join();
  drain_all();
}

TEST_CASE("marks: a scope open is published, its start read inside call_entered", "[buffers][segments]") {
  drain_all();
  Stages stages;
  uint32_t tid = 0;
  uint64_t start = 0;
  std::thread worker([&] {
    tid = this_tid();
    (void)new_event_id();  // registered, as a hook is before it opens a scope
    start = open_scope();
    stages.set(1);
    stages.wait(2);
    record(make_event(EventKind::Range, start, start + 1, 0xC002));
    scope_closed();
  });
  stages.wait(1);
  TakenThread open = taken_of(tid);
  CHECK(open.outermost_scope_start == start);
  CHECK(open.not_taken_start == kNone);  // not in a call: open_scope() left it
  stages.set(2);
  worker.join();
  drain_all();
}
