// What the kernel would do with a signal, done by hand from a handler of the agent's that
// stands in front of the program's: restore the default action, or run the program's earlier
// handler exactly as the kernel would have run it. Async-signal-safe (sigaction,
// pthread_sigmask, raise only).
#pragma once

#include <signal.h>

namespace profagent::agent {

// Whether `action` is the plain disposition `which` (SIG_DFL or SIG_IGN).
bool is_plain(const struct sigaction& action, void (*which)(int)) noexcept;

// Puts the default action back for `number`.
void set_default_action(int number) noexcept;

// Calls the program's earlier handler as the kernel would have: its mask (its sa_mask, plus
// the signal itself unless SA_NODEFER), SA_RESETHAND honoured, the signature its SA_SIGINFO
// flag says. The mask of the caller is restored afterwards.
void call_previous(int number, const struct sigaction& previous, siginfo_t* info, void* context) noexcept;

}  // namespace profagent::agent
