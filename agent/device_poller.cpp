#include "agent/device_poller.h"

#include <time.h>

#include <atomic>

#include "agent/agent_cost.h"
#include "agent/log.h"
#include "agent/partial_writer.h"
#include "agent/threads.h"
#include "collector/api.h"
#include "collector/session.h"

namespace profagent::agent {
namespace {

// Device records every 100 ms: CUPTI fills a 4 MiB buffer with ~20 000 kernel records, so
// even a launch-bound program (~300 000 launches/s at 3 us each) needs a fraction of the
// 32-buffer pool per period. Host buffer memory is committed ahead of the writers every 10 ms
// (a fast writer takes ~2 MiB in that time).
constexpr long kTickNs = 10'000'000;
constexpr int kTicksPerDevicePoll = 10;

std::atomic<bool> g_started{false};

void poll_device() noexcept {
  AgentWork work("poll device");
  collector::poll_device();
}

// CUPTI's cost per call (agent/agent_cost.h), measured as soon as the device backend started
// (on the program's thread, right after this thread was started): the first window written
// waits for that figure, so the poller looks every millisecond, for kQuickLooks at most.
constexpr int kQuickLooks = 200;

void settle_cupti_cost() noexcept {
  const timespec look{0, 1'000'000};
  for (int looks = 0; looks < kQuickLooks && keep_running(); ++looks) {
    measure_cupti_cost();
    if (cupti_cost_settled()) return;
    if (looks % 10 == 9) collector::warm_host_buffers();
    nanosleep(&look, nullptr);
  }
}

// Until the program has no thread left or the exit flush ran (agent/threads.h). The record and
// CUPTI costs of the overhead lines are measured first: this thread starts at the first CUDA
// call, so a process that never uses CUDA never pays for them.
void poll_until_stopped(void*) noexcept {
  measure_record_cost();
  settle_cupti_cost();
  const timespec tick{0, kTickNs};
  for (int ticks = 0; keep_running(); ++ticks) {
    collector::warm_host_buffers();
    measure_cupti_cost();  // when the quick looks found no backend yet
    partial_writer_tick();
    nanosleep(&tick, nullptr);
    if (ticks % kTicksPerDevicePoll == kTicksPerDevicePoll - 1) poll_device();
  }
}

}  // namespace

void start_device_poller() noexcept {
  if (g_started.exchange(true)) return;
  if (!start_agent_thread("profagent-poll", poll_until_stopped, nullptr)) {
    log(LogLevel::Warn, "could not start the device poller; long runs may drop device records");
  }
}

}  // namespace profagent::agent
