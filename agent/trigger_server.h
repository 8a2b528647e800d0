// On-demand tracing of a running process (PROFAGENT_ON_DEMAND): the agent records nothing and
// listens on <user runtime dir>/<pid>.sock (agent/user_runtime_dir.h: mode 0700, this user's
// own) for `profagent trigger`, which asks for the next N steps (agent/trigger_protocol.h); the
// window is armed as one cycle of the step schedule (agent/windows.h: arm_trigger) and
// written as every step window is. No signal is used.
//
// The socket is made by an agent thread started at the process's first CUDA call — a process
// that never uses CUDA (a launcher, a shell, a DataLoader worker) has none — and removed at
// the exit flush. A connection from another user is answered with an error, nothing else.
#pragma once

namespace profagent::agent {

// At the first CUDA call, on demand only; does nothing after the first call or in a forked
// child that inherited the parent's (its first CUDA use was the parent's).
void start_trigger_server() noexcept;

// At the exit flush: removes this process's socket (never the parent's, in a forked child).
void stop_trigger_server() noexcept;

}  // namespace profagent::agent
