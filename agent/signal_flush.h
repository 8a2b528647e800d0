// The agent's thread that writes the trace on behalf of a signal handler (SIGTERM/SIGINT with
// PROFAGENT_HANDLE_SIGNALS, crashes with PROFAGENT_HANDLE_CRASHES): agent/signals.h and
// agent/crash_signals.h.
//
// Handler and thread talk through two futex words, never through a file descriptor: a program
// may close every descriptor above 2 (closefrom) and open its own files, which then get the
// numbers of ours; a byte written "to our pipe" would land in its file. A futex needs no
// descriptor and FUTEX_WAKE/FUTEX_WAIT are plain system calls (async-signal-safe).
//
// Why the flush runs on its own thread: the signal may interrupt a thread holding an agent,
// CUPTI, runtime or allocator lock; flushing on that thread could deadlock forever. On the
// flush thread it can at worst take longer than the handler waits, and the process then ends
// by its previous action without a trace, as it would without the agent.
#pragma once

namespace profagent::agent {

// Starts the flush thread once (later calls return its state). False if it could not start.
bool start_signal_flush_thread() noexcept;

// In a handler (async-signal-safe): asks the flush thread to write the trace for signal
// `number`, unless a signal asked already, then waits until that flush is over, at most
// `wait_ms`. Returns at once when no flush thread is running (not started, already stopped
// after the exit flush, or a forked child).
void flush_for_signal(int number, long wait_ms) noexcept;

// Whether the calling thread is the flush thread while it writes the trace of a crash. The
// synchronous fault signals are unblocked on it for that flush, so that a fault in the writing
// itself reaches the crash handler, which then gives up the flush (below) instead of ending
// the process with the writer's signal rather than the program's.
bool on_crash_flush_thread() noexcept;

// On the flush thread, from the crash handler: the flush is over (failed), its waiters are
// woken, and the thread sleeps until the process ends, which the crashing thread now sees to.
[[noreturn]] void abandon_crash_flush() noexcept;

// The synchronous fault signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL) and SIGABRT: a crash.
bool is_crash_signal(int number) noexcept;

// "SIGSEGV", ... for the signals the agent handles; "signal" for any other.
const char* signal_name(int number) noexcept;

}  // namespace profagent::agent
