// PROFAGENT_HANDLE_SIGNALS=1: the trace is written on SIGTERM/SIGINT, then the previous action runs
// (the design follows the lessons of rocprofiler-sdk and dd-trace-py: no interposed sigaction, a
// handler that only flags and wakes the flush thread, the real work on another thread, a bounded
// wait, the default action by re-raising unblocked).
//
// Handler and flush thread talk through two futex words, never through a file descriptor: a
// program may close every descriptor above 2 (closefrom) and open its own files, which then
// get the numbers of ours; a byte written "to our pipe" would land in its file. A futex needs
// no descriptor and FUTEX_WAKE/FUTEX_WAIT are plain system calls (async-signal-safe).
//
// Why the flush runs on its own thread: the signal may interrupt a thread holding an agent,
// CUPTI or runtime lock; flushing on that thread could deadlock forever. On the flush thread it
// can at worst take longer than the 2 s the handler waits, and the process then ends by its
// previous action without a trace, as it would without the agent.
#include "agent/signals.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "agent/lifecycle.h"
#include "agent/log.h"
#include "agent/threads.h"

namespace profagent::agent {
namespace {

constexpr int kFlushWaitMs = 2000;

struct HandledSignal {
  int number;
  struct sigaction previous;  // written before ours is installed, read-only afterwards
};
HandledSignal g_handled[] = {{SIGTERM, {}}, {SIGINT, {}}};

// Futex words (32-bit, lock-free: the kernel reads them). handler -> flush thread: the signal
// number; flush thread -> handler: 1 once the flush is over.
std::atomic<uint32_t> g_request{0};
std::atomic<uint32_t> g_done{0};
std::atomic<bool> g_flusher_alive{false};  // false: nobody would answer, the handler never waits
std::atomic<bool> g_first_signal_taken{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the handler's flag must be async-signal-safe");
static_assert(sizeof(std::atomic<uint32_t>) == 4 && std::atomic<uint32_t>::is_always_lock_free,
              "futex words must be plain 32-bit words");
pid_t g_owner_pid = 0;             // a forked child has no flush thread: it never waits

const struct sigaction* previous_action(int number) noexcept {
  for (const HandledSignal& handled : g_handled) {
    if (handled.number == number) return &handled.previous;
  }
  return nullptr;
}

bool is_plain(const struct sigaction& action, void (*which)(int)) noexcept {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == which;
}

// ---- futex words -----------------------------------------------------------------------------

uint32_t* futex_word(std::atomic<uint32_t>& word) noexcept { return reinterpret_cast<uint32_t*>(&word); }

void futex_wake(std::atomic<uint32_t>& word) noexcept {
  syscall(SYS_futex, futex_word(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

// Sleeps while `word` is 0, at most `ms` (spurious and EINTR wake-ups included).
void futex_wait_zero(std::atomic<uint32_t>& word, long ms) noexcept {
  const timespec timeout{ms / 1000, (ms % 1000) * 1'000'000L};
  syscall(SYS_futex, futex_word(word), FUTEX_WAIT_PRIVATE, 0, &timeout, nullptr, 0);
}

// ---- in the handler: async-signal-safe calls only ----------------------------------------

long milliseconds_until(const timespec& deadline) noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (deadline.tv_sec - now.tv_sec) * 1000 + (deadline.tv_nsec - now.tv_nsec) / 1000000;
}

// Asks the flush thread to write the trace and waits for it, at most kFlushWaitMs.
void flush_with_bound(int number) noexcept {
  if (!g_flusher_alive.load(std::memory_order_acquire)) return;
  g_request.store(uint32_t(number), std::memory_order_release);
  futex_wake(g_request);
  timespec deadline{};
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += kFlushWaitMs / 1000;
  deadline.tv_nsec += long(kFlushWaitMs % 1000) * 1000000;  // may exceed 1 s: only subtracted
  for (;;) {
    if (g_done.load(std::memory_order_acquire) != 0) return;
    const long left = milliseconds_until(deadline);
    if (left <= 0) return;
    futex_wait_zero(g_done, left);
  }
}

void set_default_action(int number) noexcept {
  struct sigaction fallback{};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(number, &fallback, nullptr);
}

// The default action of SIGTERM/SIGINT ends the process: reinstall it and let the signal be
// delivered again. raise() alone would only leave it pending (it is blocked while its handler
// runs), hence the unblock.
void die_by_default(int number) noexcept {
  set_default_action(number);
  raise(number);
  sigset_t only{};
  sigemptyset(&only);
  sigaddset(&only, number);
  pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
}

// The mask the kernel would have set for the earlier handler: its sa_mask, plus the signal
// itself unless SA_NODEFER. Returns the mask to restore afterwards.
sigset_t apply_previous_mask(int number, const struct sigaction& previous) noexcept {
  sigset_t mask = previous.sa_mask;
  const bool nodefer = (previous.sa_flags & SA_NODEFER) != 0;
  if (!nodefer) sigaddset(&mask, number);
  sigset_t before{};
  pthread_sigmask(SIG_BLOCK, &mask, &before);
  if (nodefer) {
    sigset_t only{};
    sigemptyset(&only);
    sigaddset(&only, number);
    pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  }
  return before;
}

// Calls the program's earlier handler as the kernel would have: its mask, SA_RESETHAND
// honoured, the signature its SA_SIGINFO flag says.
void call_previous(int number, const struct sigaction& previous, siginfo_t* info, void* context) noexcept {
  if ((previous.sa_flags & SA_RESETHAND) != 0) set_default_action(number);
  const sigset_t before = apply_previous_mask(number, previous);
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    previous.sa_sigaction(number, info, context);
  } else {
    previous.sa_handler(number);
  }
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

void honour_previous(int number, siginfo_t* info, void* context) noexcept {
  const struct sigaction* previous = previous_action(number);
  if (previous == nullptr || is_plain(*previous, SIG_DFL)) return die_by_default(number);
  if (is_plain(*previous, SIG_IGN)) return;
  call_previous(number, *previous, info, context);
}

void on_signal(int number, siginfo_t* info, void* context) noexcept {
  const int saved_errno = errno;
  if (getpid() == g_owner_pid && !g_first_signal_taken.exchange(true)) flush_with_bound(number);
  honour_previous(number, info, context);
  errno = saved_errno;
}

// ---- the flush thread ---------------------------------------------------------------------

// Waits for the handler's request, in slices, until agent threads are told to stop (the
// program has no thread left, or the exit flush ran: agent/threads.h).
void flush_on_request(void*) noexcept {
  uint32_t number = 0;
  while ((number = g_request.load(std::memory_order_acquire)) == 0) {
    if (!keep_running()) {
      g_flusher_alive.store(false, std::memory_order_release);
      return;
    }
    futex_wait_zero(g_request, kAgentTickMs);
  }
  flush_all(number == SIGINT ? "SIGINT" : "SIGTERM");
  g_done.store(1, std::memory_order_release);
  futex_wake(g_done);
}

// Started through agent/threads.h: every signal blocked, so no signal of the program is ever
// delivered to it.
bool start_flush_thread() noexcept {
  g_flusher_alive.store(true, std::memory_order_release);
  if (start_agent_thread("profagent-sig", flush_on_request, nullptr)) return true;
  g_flusher_alive.store(false, std::memory_order_release);
  return false;
}

// A signal the process ignores (nohup, a launcher's SIG_IGN) stays ignored and untouched.
void install_one(HandledSignal& handled) noexcept {
  struct sigaction current{};
  if (sigaction(handled.number, nullptr, &current) != 0 || is_plain(current, SIG_IGN)) return;
  handled.previous = current;
  struct sigaction ours{};
  ours.sa_sigaction = on_signal;
  ours.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_RESTART | SA_ONSTACK));
  sigemptyset(&ours.sa_mask);
  sigaction(handled.number, &ours, nullptr);
}

}  // namespace

bool install_signal_handlers() noexcept {
  g_owner_pid = getpid();
  if (!start_flush_thread()) return false;
  for (HandledSignal& handled : g_handled) install_one(handled);
  log(LogLevel::Debug, "SIGTERM and SIGINT write the trace (PROFAGENT_HANDLE_SIGNALS)");
  return true;
}

}  // namespace profagent::agent
