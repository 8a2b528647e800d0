#include "agent/crash_signals.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "agent/log.h"
#include "agent/signal_actions.h"
#include "agent/signal_flush.h"
#include "collector/api.h"

namespace profagent::agent {
namespace {

// Longer than SIGTERM's 2 s: no supervisor is about to kill a crashed process, and the trace
// is all that is left of the run. Reached only when the writing is stuck (a lock held by the
// crashed thread) or the trace is very large.
constexpr long kCrashWaitMs = 10'000;
constexpr size_t kAlternateStackBytes = 64 * 1024;

struct CrashSignal {
  int number;
  struct sigaction previous;  // written before ours is installed, read-only afterwards
};
CrashSignal g_crashes[] = {{SIGSEGV, {}}, {SIGBUS, {}}, {SIGFPE, {}}, {SIGILL, {}}, {SIGABRT, {}}};

const CrashSignal* crash_signal(int number) noexcept {
  for (const CrashSignal& crash : g_crashes) {
    if (crash.number == number) return &crash;
  }
  return nullptr;
}

// ---- in the handler: async-signal-safe calls only ----------------------------------------

// Raised by the instruction that faulted (si_code > 0: the kernel's SEGV_MAPERR, FPE_INTDIV,
// ..., SI_KERNEL); <= 0 is a signal someone sent (kill, raise, abort, sigqueue).
bool raised_by_instruction(int number, const siginfo_t* info) noexcept {
  return number != SIGABRT && info != nullptr && info->si_code > 0;
}

// The default action, then the signal again (see crash_signals.h). A sent signal is blocked
// while this handler runs: sent again to this thread, it is delivered as the handler returns.
void end_by_default(int number, const siginfo_t* info) noexcept {
  set_default_action(number);
  if (!raised_by_instruction(number, info)) syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), number);
}

bool is_default_now(int number) noexcept {
  struct sigaction now{};
  return sigaction(number, nullptr, &now) == 0 && is_plain(now, SIG_DFL);
}

bool pending(int number) noexcept {
  sigset_t set{};
  return sigpending(&set) == 0 && sigismember(&set, number) == 1;
}

// After the program's own handler returned: the process dies once we return if the default
// action is back and the signal comes again (the fault re-runs, or the handler re-raised it
// while it was blocked).
bool handed_back_to_default(int number, const siginfo_t* info) noexcept {
  return is_default_now(number) && (raised_by_instruction(number, info) || pending(number));
}

bool may_write() noexcept { return collector::tls_agent_busy == 0; }

void on_crash(int number, siginfo_t* info, void* context) noexcept {
  const int saved_errno = errno;
  if (on_crash_flush_thread()) abandon_crash_flush();  // the writer itself faulted
  const CrashSignal* crash = crash_signal(number);
  if (crash == nullptr || is_plain(crash->previous, SIG_DFL)) {
    if (may_write()) flush_for_signal(number, kCrashWaitMs);
    end_by_default(number, info);
  } else {
    call_previous(number, crash->previous, info, context);
    if (may_write() && handed_back_to_default(number, info)) flush_for_signal(number, kCrashWaitMs);
  }
  errno = saved_errno;
}

// ---- installing ---------------------------------------------------------------------------

// For a stack overflow on this thread: the handler cannot run on the exhausted stack. A
// guard page below it, leaked with the thread (one per process).
void give_this_thread_an_alternate_stack() noexcept {
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 || (current.ss_flags & SS_DISABLE) == 0) return;  // the program's
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  void* mapping = mmap(nullptr, kAlternateStackBytes + page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) return;
  mprotect(mapping, page, PROT_NONE);
  stack_t ours{};
  ours.ss_sp = static_cast<char*>(mapping) + page;
  ours.ss_size = kAlternateStackBytes;
  if (sigaltstack(&ours, nullptr) != 0) munmap(mapping, kAlternateStackBytes + page);
}

// On the alternate stack only where the kernel would have run the program's handler there
// too (or where the default action is all there was): a program handler without SA_ONSTACK
// keeps its own stack.
void install_one(CrashSignal& crash) noexcept {
  struct sigaction current{};
  if (sigaction(crash.number, nullptr, &current) != 0 || is_plain(current, SIG_IGN)) return;
  crash.previous = current;
  const bool on_stack = is_plain(current, SIG_DFL) || (current.sa_flags & SA_ONSTACK) != 0;
  struct sigaction ours{};
  ours.sa_sigaction = on_crash;
  ours.sa_flags = SA_SIGINFO | (on_stack ? SA_ONSTACK : 0) | (current.sa_flags & SA_RESTART);
  sigemptyset(&ours.sa_mask);
  sigaction(crash.number, &ours, nullptr);
}

}  // namespace

bool install_crash_handlers() noexcept {
  if (!start_signal_flush_thread()) return false;
  give_this_thread_an_alternate_stack();
  for (CrashSignal& crash : g_crashes) install_one(crash);
  log(LogLevel::Debug, "SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT write the trace (PROFAGENT_HANDLE_CRASHES)");
  return true;
}

}  // namespace profagent::agent
