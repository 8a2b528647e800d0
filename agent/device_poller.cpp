#include "agent/device_poller.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <atomic>

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

void* poll_forever(void*) {
  collector::AgentBusy busy;  // nothing this thread does is the program's
  const timespec tick{0, kTickNs};
  for (int ticks = 0;; ++ticks) {
    collector::warm_host_buffers();
    nanosleep(&tick, nullptr);
    if (ticks % kTicksPerDevicePoll == kTicksPerDevicePoll - 1) collector::poll_device();
  }
  return nullptr;
}

}  // namespace

void start_device_poller() noexcept {
  if (g_started.exchange(true)) return;
  // The thread blocks every signal, so the program's handlers always run on its own threads.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  pthread_create(&thread, &attributes, poll_forever, nullptr);
  pthread_attr_destroy(&attributes);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace profagent::agent
