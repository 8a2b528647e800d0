// Crash handling, on by default (PROFAGENT_HANDLE_CRASHES=0 turns it off): a program that dies
// of SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT (a failed assert(), an uncaught C++ exception
// through std::terminate, abort()) leaves the trace of what was recorded until then and the
// closing line, then dies exactly as it would have: same signal, same wait status, same core
// dump. Crashing programs are the ones users most want to see.
//
// Installed at the first CUDA call, like the SIGTERM handler (agent/signals.h): a process
// without CUDA is untouched, and the handlers a program set up before (a language runtime, a
// crash reporter, Python's faulthandler) are found and chained. Never over a signal the
// process ignores. How the handler decides:
//
// - The program had a handler: it runs first, exactly as the kernel would have run it (its
//   mask, flags and signature). A handler that recovers (siglongjmp, a JIT or a garbage
//   collector that uses faults, a fixed mapping) means no crash: nothing is written. Only
//   when it hands the signal back to the default action (SIG_DFL, with the fault about to
//   happen again or the signal pending) is the trace written before returning. A handler
//   that ends the process itself (re-raising with SA_NODEFER, _exit) leaves no trace.
// - Otherwise (the default action): the agent's flush thread (agent/signal_flush.h) writes
//   the trace while the handler waits, at most 10 s; then the default action is restored and
//   the signal happens again: a fault by returning to the faulting instruction (the kernel's
//   own signal, registers and core; the approach of Breakpad and Crashpad), a signal that was
//   sent (abort, raise, kill) by sending it again to this thread, delivered as the handler
//   returns.
// - Nothing is written for a crash inside the agent's own work (tls_agent_busy: its threads,
//   its exit flush, CUPTI callbacks), nor in a forked child; a crash in the writing itself
//   gives the flush up. Several threads crashing at once all wait for the one flush.
// - A stack overflow needs a stack to run the handler on: the thread that makes the first
//   CUDA call (usually main) gets a 64 KiB alternate signal stack unless it has one. Other
//   threads without one die of the overflow as without the agent, with no trace.
// - A handler the program installs after ours replaces it: its own behaviour applies.
#pragma once

namespace profagent::agent {

// Installs the handlers and starts the flush thread; false (nothing installed) on failure.
bool install_crash_handlers() noexcept;

}  // namespace profagent::agent
