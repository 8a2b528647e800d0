// The agent's own threads (window exporter, time:MS timer, device poller, signal flush
// thread) are all started here, so that each of them keeps two promises, which follow from
// "the program must behave exactly as without the agent":
//
// - It never takes a signal of the program. It is created with every signal blocked (the
//   mask is set around pthread_create, so it is inherited from the thread's first
//   instruction), whatever thread starts it, the library constructor included. A program that
//   blocks SIGUSR1 and takes it with sigwait/signalfd gets it, as without the agent.
//
// - It never keeps the process alive. When the main thread called pthread_exit, glibc ends
//   the process (exit(0): atexit handlers, stdio flush, our exit flush) only once the last
//   thread is gone (nptl's start_thread: "If this is the last thread we terminate the process
//   now"). Each agent thread wakes at least every kAgentTickMs and asks keep_running(): once
//   the thread-group leader is a zombie and every other live thread of the process is an
//   agent thread, the answer is false for good, every agent thread returns, and the last one
//   to end makes glibc call exit(0), exactly as the program's last thread would have.
//   The answer is also false after the exit flush: there is nothing left to do.
#pragma once

#include <cstdint>

namespace profagent::agent {

// From the main thread, before the first agent thread (the library constructor): lets
// keep_running() learn that main called pthread_exit without opening anything. Elsewhere it
// does nothing, and keep_running() reads the leader's state in /proc instead.
void watch_main_thread() noexcept;

// Longest an agent thread may sleep between two keep_running() calls.
inline constexpr long kAgentTickMs = 100;

// Starts a detached agent thread running body(arg) with every signal blocked and the
// collector's AgentBusy set (nothing it does is the program's). `name` (<= 15 chars) is its
// thread name in /proc. False if the thread could not be created (nothing was started).
bool start_agent_thread(const char* name, void (*body)(void*), void* arg) noexcept;

// False once agent threads should return (see above). Cheap: a load while the main thread
// lives; after it called pthread_exit, at most one look at /proc/self/task per kAgentTickMs.
bool keep_running() noexcept;

// After the exit flush: agent threads return at their next wake-up.
void stop_agent_threads() noexcept;

// CPU time the agent's threads have used so far in this process: the live ones read now (one
// clock_gettime each), the ended ones as they ended. Sampled at window edges for the
// overhead line (agent/agent_cost.h).
uint64_t agent_threads_cpu_ns() noexcept;

}  // namespace profagent::agent
