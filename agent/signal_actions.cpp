#include "agent/signal_actions.h"

#include <pthread.h>

namespace profagent::agent {
namespace {

// The mask the kernel would have set for the earlier handler. Returns the mask to restore.
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

}  // namespace

bool is_plain(const struct sigaction& action, void (*which)(int)) noexcept {
  return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == which;
}

void set_default_action(int number) noexcept {
  struct sigaction fallback{};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(number, &fallback, nullptr);
}

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

}  // namespace profagent::agent
