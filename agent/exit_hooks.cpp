// Exit paths that skip atexit handlers and ELF destructors (pitfalls §§ 6, 7, 9):
// `_exit`/`_Exit` (Python's os._exit, multiprocessing and DataLoader workers), `quick_exit`
// (it runs at_quick_exit handlers, then glibc's internal _exit, which no interposition sees)
// and the exec family (execveat included) (the process image is replaced; the new image starts a fresh agent from LD_PRELOAD).
// Each wrapper flushes — only if this process owns a trace — then makes the real call.
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
#include <vector>

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

// The arguments of execl/execlp/execle, as the argv array execv* expects.
std::vector<char*> collect_args(const char* first, va_list& list) {
  std::vector<char*> argv{const_cast<char*>(first)};
  while (argv.back() != nullptr) argv.push_back(va_arg(list, char*));
  return argv;
}

}  // namespace
}  // namespace profagent::agent

using profagent::agent::flush_if_owner;
using profagent::agent::next_definition;

extern "C" {

PROFAGENT_EXPORT void _exit(int status) {
  flush_if_owner("_exit");
  if (auto* real = next_definition<void(int)>("_exit")) real(status);
  syscall(SYS_exit_group, status);  // no next definition: end the process as _exit does
  __builtin_unreachable();
}

PROFAGENT_EXPORT void _Exit(int status) {
  flush_if_owner("_Exit");
  if (auto* real = next_definition<void(int)>("_Exit")) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

// The trace first, then the program's at_quick_exit handlers and the real quick_exit.
PROFAGENT_EXPORT void quick_exit(int status) {
  flush_if_owner("quick_exit");
  if (auto* real = next_definition<void(int)>("quick_exit")) real(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

// exec: the trace is written before the image is replaced. If exec then fails the process
// goes on with recording stopped (flush_all is once per process).
PROFAGENT_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  flush_if_owner("execve");
  auto* real = next_definition<int(const char*, char* const[], char* const[])>("execve");
  return real ? real(path, argv, envp) : (errno = ENOSYS, -1);
}

PROFAGENT_EXPORT int execv(const char* path, char* const argv[]) {
  flush_if_owner("execv");
  auto* real = next_definition<int(const char*, char* const[])>("execv");
  return real ? real(path, argv) : (errno = ENOSYS, -1);
}

PROFAGENT_EXPORT int execvp(const char* file, char* const argv[]) {
  flush_if_owner("execvp");
  auto* real = next_definition<int(const char*, char* const[])>("execvp");
  return real ? real(file, argv) : (errno = ENOSYS, -1);
}

PROFAGENT_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  flush_if_owner("execvpe");
  auto* real = next_definition<int(const char*, char* const[], char* const[])>("execvpe");
  return real ? real(file, argv, envp) : (errno = ENOSYS, -1);
}

PROFAGENT_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  flush_if_owner("fexecve");
  auto* real = next_definition<int(int, char* const[], char* const[])>("fexecve");
  return real ? real(fd, argv, envp) : (errno = ENOSYS, -1);
}

PROFAGENT_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) {
  flush_if_owner("execveat");
  auto* real = next_definition<int(int, const char*, char* const[], char* const[], int)>("execveat");
  return real ? real(dirfd, path, argv, envp, flags) : (errno = ENOSYS, -1);
}

PROFAGENT_EXPORT int execl(const char* path, const char* arg, ...) {
  va_list list;
  va_start(list, arg);
  std::vector<char*> argv = profagent::agent::collect_args(arg, list);
  va_end(list);
  return execv(path, argv.data());
}

PROFAGENT_EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list list;
  va_start(list, arg);
  std::vector<char*> argv = profagent::agent::collect_args(arg, list);
  va_end(list);
  return execvp(file, argv.data());
}

PROFAGENT_EXPORT int execle(const char* path, const char* arg, ...) {
  va_list list;
  va_start(list, arg);
  std::vector<char*> argv = profagent::agent::collect_args(arg, list);
  char* const* envp = va_arg(list, char* const*);  // follows the terminating null pointer
  va_end(list);
  return execve(path, argv.data(), envp);
}

}  // extern "C"
