// PROFAGENT_HANDLE_SIGNALS=1: the trace is written on SIGTERM/SIGINT, then the previous action runs
// (the design follows the lessons of rocprofiler-sdk and dd-trace-py: no interposed sigaction, a
// handler that only flags and wakes the flush thread, the real work on another thread
// (agent/signal_flush.h), a bounded wait, the default action by re-raising unblocked).
#include "agent/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "agent/log.h"
#include "agent/signal_actions.h"
#include "agent/signal_flush.h"

namespace profagent::agent {
namespace {

constexpr long kFlushWaitMs = 2000;  // torchrun and Slurm send SIGKILL some seconds later

struct HandledSignal {
  int number;
  struct sigaction previous;  // written before ours is installed, read-only afterwards
};
HandledSignal g_handled[] = {{SIGTERM, {}}, {SIGINT, {}}};

std::atomic<bool> g_first_signal_taken{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the handler's flag must be async-signal-safe");

const struct sigaction* previous_action(int number) noexcept {
  for (const HandledSignal& handled : g_handled) {
    if (handled.number == number) return &handled.previous;
  }
  return nullptr;
}

// ---- in the handler: async-signal-safe calls only ----------------------------------------

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

void honour_previous(int number, siginfo_t* info, void* context) noexcept {
  const struct sigaction* previous = previous_action(number);
  if (previous == nullptr || is_plain(*previous, SIG_DFL)) return die_by_default(number);
  if (is_plain(*previous, SIG_IGN)) return;
  call_previous(number, *previous, info, context);
}

// A second signal (another SIGTERM, or SIGINT during the SIGTERM's flush) goes straight to
// its previous action: a user pressing Ctrl-C twice means it.
void on_signal(int number, siginfo_t* info, void* context) noexcept {
  const int saved_errno = errno;
  if (!g_first_signal_taken.exchange(true)) flush_for_signal(number, kFlushWaitMs);
  honour_previous(number, info, context);
  errno = saved_errno;
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
  if (!start_signal_flush_thread()) return false;
  for (HandledSignal& handled : g_handled) install_one(handled);
  log(LogLevel::Debug, "SIGTERM and SIGINT write the trace (PROFAGENT_HANDLE_SIGNALS)");
  return true;
}

}  // namespace profagent::agent
