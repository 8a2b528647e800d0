// Exit paths that skip atexit handlers and ELF destructors, so the one flush must be reached
// from here too:
// `_exit`/`_Exit` (Python's os._exit, multiprocessing and DataLoader workers), `quick_exit`
// (it runs at_quick_exit handlers, then glibc's internal _exit, which no interposition sees)
// and the exec family (execveat included) (the process image is replaced; the new image starts a fresh agent from LD_PRELOAD).
// Each wrapper flushes — only if this process owns a trace — then makes the real call.
// All are noexcept, as C and glibc declare them: none is a cancellation point, and the only
// program code they run (at_quick_exit handlers) may not throw either.
//
// "Owns a trace": the agent is READY and getpid() is the pid the agent last saw in a
// constructor or a fork child handler. A vfork child (or posix_spawn's clone) runs no atfork
// handler and shares the parent's memory: its getpid() differs, so it never flushes — it
// would otherwise write (and mark as written) the parent's trace from the child.
//
// Forked children follow PROFAGENT_CHILD: `light` (default) keeps recording CPU-side calls
// into the child's own buffers and writes them under the child's pid; `off` records and
// writes nothing. Either way the parent's buffers are never flushed by a child (the
// collector forgets them in its own atfork child handler).
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>

extern char** environ;

#include "agent/child_environment.h"
#include "agent/lifecycle.h"
#include "hooks/hook.h"  // PROFAGENT_EXPORT

namespace profagent::agent {
namespace {

std::atomic<pid_t> g_owner_pid{0};

void child_after_fork() noexcept {
  g_owner_pid.store(getpid(), std::memory_order_relaxed);
  if (state() == AgentState::Ready && config().child == ChildPolicy::Off) silence_forked_child();
}

__attribute__((constructor)) void remember_owner() {
  g_owner_pid.store(getpid(), std::memory_order_relaxed);
  pthread_atfork(nullptr, nullptr, &child_after_fork);
}

bool owns_trace() noexcept {
  return state() == AgentState::Ready && g_owner_pid.load(std::memory_order_relaxed) == getpid();
}

void flush_if_owner(const char* reason) noexcept {
  if (owns_trace()) flush_all(reason);
}

template <typename Fn>
Fn* next_definition(const char* name) noexcept {
  return reinterpret_cast<Fn*>(dlsym(RTLD_NEXT, name));
}

// execl/execlp/execle count their arguments first, then build the argv array execv* expects
// on the stack, as glibc's own execl does: they may run in a vfork child, which shares the
// parent's memory, so a malloc there could corrupt (or deadlock) the parent's heap.
size_t count_args(const char* first, va_list list) noexcept {
  va_list counting;
  va_copy(counting, list);
  size_t count = 1;  // `first`, and each argument up to and including the null pointer
  for (const char* arg = first; arg != nullptr; arg = va_arg(counting, const char*)) ++count;
  va_end(counting);
  return count;
}

void fill_args(char** argv, size_t count, const char* first, va_list& list) noexcept {
  argv[0] = const_cast<char*>(first);
  for (size_t i = 1; i < count; ++i) argv[i] = argv[i - 1] == nullptr ? nullptr : va_arg(list, char*);
}

}  // namespace
}  // namespace profagent::agent

using profagent::agent::child_environment;
using profagent::agent::child_environment_room;
using profagent::agent::flush_if_owner;
using profagent::agent::next_definition;

extern "C" {

PROFAGENT_EXPORT void _exit(int status) noexcept {
  flush_if_owner("_exit");
  if (auto* real = next_definition<void(int)>("_exit")) real(status);
  syscall(SYS_exit_group, status);  // no next definition: end the process as _exit does
  __builtin_unreachable();
}

PROFAGENT_EXPORT void _Exit(int status) noexcept {
  flush_if_owner("_Exit");
  if (auto* real = next_definition<void(int)>("_Exit")) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

// The trace first, then the program's at_quick_exit handlers and the real quick_exit.
PROFAGENT_EXPORT void quick_exit(int status) noexcept {
  flush_if_owner("quick_exit");
  if (auto* real = next_definition<void(int)>("quick_exit")) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

// exec: the trace is written before the image is replaced. If exec then fails the process
// goes on with recording stopped (flush_all is once per process). A new image that does not
// preload the agent gets its environment without the agent's own variables
// (agent/child_environment.h); `scratch` is a VLA, as glibc's execl builds its argv.
PROFAGENT_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
  flush_if_owner("execve");
  auto* real = next_definition<int(const char*, char* const[], char* const[])>("execve");
  const size_t room = child_environment_room(envp);
  char* scratch[room + 1];
  return real ? real(path, argv, child_environment(envp, scratch, room)) : (errno = ENOSYS, -1);
}

PROFAGENT_EXPORT int execv(const char* path, char* const argv[]) noexcept {
  return execve(path, argv, environ);
}

PROFAGENT_EXPORT int execvp(const char* file, char* const argv[]) noexcept {
  return execvpe(file, argv, environ);
}

PROFAGENT_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
  flush_if_owner("execvpe");
  auto* real = next_definition<int(const char*, char* const[], char* const[])>("execvpe");
  const size_t room = child_environment_room(envp);
  char* scratch[room + 1];
  return real ? real(file, argv, child_environment(envp, scratch, room)) : (errno = ENOSYS, -1);
}

PROFAGENT_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
  flush_if_owner("fexecve");
  auto* real = next_definition<int(int, char* const[], char* const[])>("fexecve");
  const size_t room = child_environment_room(envp);
  char* scratch[room + 1];
  return real ? real(fd, argv, child_environment(envp, scratch, room)) : (errno = ENOSYS, -1);
}

PROFAGENT_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) noexcept {
  flush_if_owner("execveat");
  auto* real = next_definition<int(int, const char*, char* const[], char* const[], int)>("execveat");
  const size_t room = child_environment_room(envp);
  char* scratch[room + 1];
  return real ? real(dirfd, path, argv, child_environment(envp, scratch, room), flags) : (errno = ENOSYS, -1);
}

// The VLAs below are what glibc's execl allocates itself: the program's stack use is unchanged.
PROFAGENT_EXPORT int execl(const char* path, const char* arg, ...) noexcept {
  va_list list;
  va_start(list, arg);
  const size_t count = profagent::agent::count_args(arg, list);
  char* argv[count];
  profagent::agent::fill_args(argv, count, arg, list);
  va_end(list);
  return execv(path, argv);
}

PROFAGENT_EXPORT int execlp(const char* file, const char* arg, ...) noexcept {
  va_list list;
  va_start(list, arg);
  const size_t count = profagent::agent::count_args(arg, list);
  char* argv[count];
  profagent::agent::fill_args(argv, count, arg, list);
  va_end(list);
  return execvp(file, argv);
}

PROFAGENT_EXPORT int execle(const char* path, const char* arg, ...) noexcept {
  va_list list;
  va_start(list, arg);
  const size_t count = profagent::agent::count_args(arg, list);
  char* argv[count];
  profagent::agent::fill_args(argv, count, arg, list);
  char* const* envp = va_arg(list, char* const*);  // follows the terminating null pointer
  va_end(list);
  return execve(path, argv, envp);
}

}  // extern "C"
