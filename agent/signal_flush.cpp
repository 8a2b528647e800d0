#include "agent/signal_flush.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <string>

#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/threads.h"

namespace profagent::agent {
namespace {

// Futex words (32-bit, lock-free: the kernel reads them). handler -> flush thread: the signal
// number; flush thread -> handlers: 1 once the flush is over.
std::atomic<uint32_t> g_request{0};
std::atomic<uint32_t> g_done{0};
std::atomic<bool> g_flusher_alive{false};  // false: nobody would answer, a handler never waits
std::atomic<bool> g_started{false};
std::atomic<pid_t> g_flusher_tid{0};
std::atomic<bool> g_crash_flush{false};    // the flush under way is a crash's
static_assert(std::atomic<uint32_t>::is_always_lock_free && sizeof(std::atomic<uint32_t>) == 4,
              "futex words must be plain 32-bit words");
static_assert(std::atomic<bool>::is_always_lock_free, "handlers read these flags");
pid_t g_owner_pid = 0;  // a forked child has no flush thread: its handlers never wait

uint32_t* futex_word(std::atomic<uint32_t>& word) noexcept { return reinterpret_cast<uint32_t*>(&word); }

void futex_wake_all(std::atomic<uint32_t>& word) noexcept {
  syscall(SYS_futex, futex_word(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// Sleeps while `word` is 0, at most `ms` (spurious and EINTR wake-ups included).
void futex_wait_zero(std::atomic<uint32_t>& word, long ms) noexcept {
  const timespec timeout{ms / 1000, (ms % 1000) * 1'000'000L};
  syscall(SYS_futex, futex_word(word), FUTEX_WAIT_PRIVATE, 0, &timeout, nullptr, 0);
}

pid_t current_tid() noexcept { return pid_t(syscall(SYS_gettid)); }

long milliseconds_until(const timespec& deadline) noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (deadline.tv_sec - now.tv_sec) * 1000 + (deadline.tv_nsec - now.tv_nsec) / 1000000;
}

// Waits until `word` is not 0, at most `ms`.
void wait_nonzero(std::atomic<uint32_t>& word, long ms) noexcept {
  timespec deadline{};
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += ms / 1000;
  deadline.tv_nsec += (ms % 1000) * 1000000;  // may exceed 1 s: only subtracted
  for (;;) {
    if (word.load(std::memory_order_acquire) != 0) return;
    const long left = milliseconds_until(deadline);
    if (left <= 0) return;
    futex_wait_zero(word, left);
  }
}

void finish_flush() noexcept {
  g_done.store(1, std::memory_order_release);
  futex_wake_all(g_done);
}

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

// Lets a fault of the writer itself reach the crash handler (see on_crash_flush_thread).
void unblock_fault_signals() noexcept {
  sigset_t faults{};
  sigemptyset(&faults);
  for (const int number : kFaultSignals) sigaddset(&faults, number);
  pthread_sigmask(SIG_UNBLOCK, &faults, nullptr);
}

// The exit flush may be under way on another thread (a crash while the program exits): the
// process must not die before it is written.
void wait_for_running_flush() noexcept {
  for (int slice = 0; slice < 100 && !flush_finished(); ++slice) {
    const timespec pause{0, 20'000'000L};
    nanosleep(&pause, nullptr);
  }
}

void flush_requested(uint32_t number) {
  const int signal_number = int(number);
  if (is_crash_signal(signal_number)) {
    g_crash_flush.store(true, std::memory_order_release);
    unblock_fault_signals();
    if (flush_finished()) return;  // a crash after the exit flush (a late destructor): nothing to add
    log(LogLevel::Warn, std::string(signal_name(signal_number)) +
                            ": the program crashed; writing what was recorded until then, then it ends as it would have");
  }
  flush_all(signal_name(signal_number));
  wait_for_running_flush();
}

// Waits for a handler's request, in slices, until agent threads are told to stop (the
// program has no thread left, or the exit flush ran: agent/threads.h).
void flush_on_request(void*) noexcept {
  g_flusher_tid.store(current_tid(), std::memory_order_release);
  uint32_t number = 0;
  while ((number = g_request.load(std::memory_order_acquire)) == 0) {
    if (!keep_running()) {
      g_flusher_alive.store(false, std::memory_order_release);
      return;
    }
    futex_wait_zero(g_request, kAgentTickMs);
  }
  try {
    flush_requested(number);
  } catch (...) {  // building the crash line may run out of memory: the handlers are still answered
  }
  finish_flush();
}

}  // namespace

bool is_crash_signal(int number) noexcept {
  for (const int fault : kFaultSignals) {
    if (fault == number) return true;
  }
  return number == SIGABRT;
}

const char* signal_name(int number) noexcept {
  switch (number) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return "signal";
  }
}

// Started through agent/threads.h: every signal blocked, so no signal of the program is ever
// delivered to it.
bool start_signal_flush_thread() noexcept {
  if (g_started.exchange(true, std::memory_order_acq_rel)) return g_flusher_alive.load(std::memory_order_acquire);
  g_owner_pid = getpid();
  g_flusher_alive.store(true, std::memory_order_release);
  if (start_agent_thread("profagent-sig", flush_on_request, nullptr)) return true;
  g_flusher_alive.store(false, std::memory_order_release);
  return false;
}

void flush_for_signal(int number, long wait_ms) noexcept {
  if (getpid() != g_owner_pid || !g_flusher_alive.load(std::memory_order_acquire)) return;
  uint32_t none = 0;
  if (g_request.compare_exchange_strong(none, uint32_t(number), std::memory_order_acq_rel)) {
    futex_wake_all(g_request);
  }
  wait_nonzero(g_done, wait_ms);
}

bool on_crash_flush_thread() noexcept {
  return g_crash_flush.load(std::memory_order_acquire) &&
         g_flusher_tid.load(std::memory_order_acquire) == current_tid();
}

void abandon_crash_flush() noexcept {
  finish_flush();
  std::atomic<uint32_t> never{0};
  for (;;) futex_wait_zero(never, 60'000);
}

}  // namespace profagent::agent
