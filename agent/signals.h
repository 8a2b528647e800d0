// Opt-in SIGTERM/SIGINT handling, PROFAGENT_HANDLE_SIGNALS=1.
//
// Off by default: the agent then leaves SIGTERM and SIGINT alone (crashes are another matter:
// agent/crash_signals.h). When on, the first CUDA call installs one
// handler for SIGTERM and SIGINT (never interposing sigaction/signal; a signal the process
// ignores is left alone). Not at init: CPython installs its SIGINT handler only over SIG_DFL,
// so an earlier handler of ours would take KeyboardInterrupt away from Python programs. The
// handler does only async-signal-safe things: it claims a "first signal" flag, wakes the
// agent's flush thread (agent/signal_flush.h: a futex word, no file descriptor the program
// could have reused; the thread runs flush_all, the exit paths' idempotent flush), waits for
// its answer at most 2 s, then honours the previous action — the default
// one by re-raising the signal (same status as without the agent), a function by calling it.
// A second signal goes straight to the previous action.
//
// A handler the program installs after ours replaces it: ours then never runs and the program
// behaves as without the agent.
#pragma once

namespace profagent::agent {

// Installs the handlers and starts the flush thread; false (and nothing installed) on failure.
bool install_signal_handlers() noexcept;

}  // namespace profagent::agent
