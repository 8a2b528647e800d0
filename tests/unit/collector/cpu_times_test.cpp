// Window CPU times (collector/cpu_times.h): /proc/stat's "cpu" line parsed from given text, and
// the times a real window gets at its start and end.
#include <catch2/catch.hpp>

#include <time.h>

#include "collector/cpu_times.h"
#include "collector/session.h"
#include "session_fixture.h"

using namespace profagent;
using namespace profagent::collector;

namespace {

uint64_t thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return uint64_t(t.tv_sec) * 1'000'000'000 + uint64_t(t.tv_nsec);
}

// Spins until this thread has used `ns` of CPU; returns how much it used.
uint64_t spin_for_cpu(uint64_t ns) {
  const uint64_t start = thread_cpu_ns();
  volatile uint64_t sink = 0;
  while (thread_cpu_ns() - start < ns) {
    for (int i = 0; i < 10000; ++i) sink = sink + uint64_t(i);
  }
  return thread_cpu_ns() - start;
}

}  // namespace

TEST_CASE("cpu times: the cpu line of /proc/stat is split into busy and idle", "[cpu_times]") {
  SystemTicks ticks;
  // user nice system idle iowait irq softirq steal guest guest_nice
  REQUIRE(parse_proc_stat_cpu_line("cpu  100 5 50 1000 20 3 2 1 7 9\ncpu0 1 2 3 4 5 6 7 8 0 0\n", ticks));
  CHECK(ticks.busy == 100 + 5 + 50 + 3 + 2 + 1);  // guest is already inside user
  CHECK(ticks.idle == 1000 + 20);

  SECTION("eight fields are enough (older kernels have no guest columns)") {
    REQUIRE(parse_proc_stat_cpu_line("cpu 1 2 3 4 5 6 7 8\n", ticks));
    CHECK(ticks.busy == 1 + 2 + 3 + 6 + 7 + 8);
    CHECK(ticks.idle == 4 + 5);
  }
  SECTION("anything else is refused") {
    CHECK_FALSE(parse_proc_stat_cpu_line("", ticks));
    CHECK_FALSE(parse_proc_stat_cpu_line("cpu0 1 2 3 4 5 6 7 8\n", ticks));  // a per-CPU line
    CHECK_FALSE(parse_proc_stat_cpu_line("cpu 1 2 3 4 5 6 7\ncpu0 8 9\n", ticks));  // seven, not from line 2
    CHECK_FALSE(parse_proc_stat_cpu_line("intr 1 2 3 4 5 6 7 8\n", ticks));
    CHECK_FALSE(parse_proc_stat_cpu_line("cpu 1 2 x 4 5 6 7 8\n", ticks));
  }
}

TEST_CASE("cpu times: ticks become ns with the given USER_HZ, unreadable text is not valid", "[cpu_times]") {
  const CpuTimes times = cpu_times_from("cpu 150 0 50 1000 0 0 0 0\n", 7, 42, 100, 4);
  REQUIRE(times.valid);
  CHECK(times.ns == 42);
  CHECK(times.process_ns == 7);
  CHECK(times.system_busy_ns == 2'000'000'000);  // 200 ticks at 100 Hz
  CHECK(times.system_idle_ns == 10'000'000'000);
  CHECK(times.cpus == 4);
  CHECK(cpu_times_from("cpu 3 0 0 0 0 0 0 0\n", 0, 0, 300, 1).system_busy_ns == 10'000'000);
  CHECK_FALSE(cpu_times_from("", 7, 42, 100, 4).valid);             // /proc/stat unreadable
  CHECK_FALSE(cpu_times_from("cpu 1 2 3 4 5 6 7 8\n", 7, 42, 0, 4).valid);  // no USER_HZ
}

TEST_CASE("cpu times: a window gets plausible times at its start and end", "[cpu_times]") {
  testing::start_session_once();
  set_state(RecordState::Record);
  freeze_window();  // what came before is another window
  const uint64_t wall_start = clock::monotonic_ns();
  const uint64_t spun = spin_for_cpu(200'000'000);
  const uint64_t wall = clock::monotonic_ns() - wall_start;
  const Trace trace = freeze_window();
  set_state(RecordState::Off);

  const CpuTimes& a = trace.cpu_start;
  const CpuTimes& b = trace.cpu_end;
  REQUIRE(a.valid);
  REQUIRE(b.valid);
  CHECK(a.cpus >= 1);
  CHECK(b.cpus == a.cpus);
  // The window's ends on the agent clock, around the spin.
  CHECK(a.ns <= wall_start);
  CHECK(b.ns >= wall_start + wall);
  CHECK(b.ns - a.ns < wall + 2'000'000'000);
  // The process used at least the spin's CPU, and not much more: its other threads sleep.
  const uint64_t process = b.process_ns - a.process_ns;
  CHECK(process >= spun);
  CHECK(process < spun + spun / 2);
  // The spin ran on some CPU: the system was busy at least that long (less two 10 ms ticks of
  // rounding), and every CPU's time adds up to the wall time (each CPU reports in ticks).
  REQUIRE(b.system_busy_ns >= a.system_busy_ns);
  REQUIRE(b.system_idle_ns >= a.system_idle_ns);
  const uint64_t busy = b.system_busy_ns - a.system_busy_ns;
  const uint64_t all = busy + (b.system_idle_ns - a.system_idle_ns);
  CHECK(busy + 20'000'000 >= spun);
  const double per_cpu = double(all) / double(a.cpus);
  CHECK(per_cpu > 0.7 * double(b.ns - a.ns) - 20e6);
  CHECK(per_cpu < 1.3 * double(b.ns - a.ns) + 20e6);
}

// The first window's start (collector/cpu_times.h): the clock and the process's CPU time at once,
// the system's times only when something is recorded, read once.
TEST_CASE("cpu times: a deferred start reads the system's times later, once", "[cpu_times]") {
  const uint64_t before = clock::monotonic_ns();
  const CpuTimes unrecorded = begin_deferred_start();
  CHECK_FALSE(unrecorded.valid);
  CHECK(unrecorded.ns >= before);
  // Nothing recorded: no system times, and no valid start.
  CHECK_FALSE(complete_deferred_start(unrecorded).valid);
  read_deferred_system_times();  // completed: nothing waits for it any more
  CHECK_FALSE(complete_deferred_start(unrecorded).valid);

  const CpuTimes start = begin_deferred_start();
  const CpuTimes at_begin = read_cpu_times();
  const uint64_t spun = spin_for_cpu(100'000'000);
  read_deferred_system_times();  // the first event, after the spin
  const CpuTimes after_first_read = read_cpu_times();
  spin_for_cpu(100'000'000);
  read_deferred_system_times();  // a later thread's first event: not read again
  const CpuTimes done = complete_deferred_start(start);

  REQUIRE(at_begin.valid);
  REQUIRE(done.valid);
  CHECK(done.ns == start.ns);  // the window's start and process time are the start's
  CHECK(done.process_ns == start.process_ns);
  CHECK(done.cpus == at_begin.cpus);
  // Read after the first spin (which kept a CPU busy; two 10 ms ticks of rounding), not
  // after the second.
  CHECK(done.system_busy_ns + 20'000'000 >= at_begin.system_busy_ns + spun);
  CHECK(done.system_busy_ns <= after_first_read.system_busy_ns);
  CHECK(done.system_idle_ns <= after_first_read.system_idle_ns);
}
