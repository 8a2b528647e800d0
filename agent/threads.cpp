#include "agent/threads.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cxxabi.h>

#include <atomic>
#include <cstdlib>

#include "collector/api.h"

namespace profagent::agent {
namespace {

// The tids of live agent threads. A thread removes itself when its body returned (a tid the
// kernel reuses for a program thread must not look like ours); between that and its real end
// it counts as a program thread, which only delays the stop by one tick.
constexpr int kMaxAgentThreads = 16;
std::atomic<pid_t> g_agent_tids[kMaxAgentThreads];

std::atomic<bool> g_stop{false};

// CPU time of agent threads that ended; a thread adds its own and leaves the registry under
// the mutex, so agent_threads_cpu_ns() never reads the clock of a tid that is gone.
pthread_mutex_t g_cpu_mutex = PTHREAD_MUTEX_INITIALIZER;
uint64_t g_ended_cpu_ns = 0;

uint64_t ns_of(const timespec& ts) noexcept { return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec); }

// The CPU clock of thread `tid` of this process, as the kernel numbers it (what glibc's
// pthread_getcpuclockid computes from the thread's tid: per-thread, scheduler time).
clockid_t thread_cpu_clock(pid_t tid) noexcept { return clockid_t((~unsigned(tid) << 3) | 6u); }
std::atomic<int64_t> g_last_check_ms{0};

// Whether the main thread called pthread_exit, learnt without a file descriptor: glibc runs
// pthread key destructors in pthread_exit, never in exit(), so a key given a value on the main
// thread has its destructor run there exactly when main leaves by pthread_exit. Until then
// keep_running() opens nothing: looking at /proc on every tick would take a descriptor number
// now and then, and a program that closes 0-2 and opens its data files in their place (the
// lowest free numbers) would get one of them shifted.
enum MainWatch : uint8_t { kNotWatched, kWatched, kMainExited };
std::atomic<uint8_t> g_main_watch{kNotWatched};
pthread_key_t g_main_key;

void main_thread_exited(void*) noexcept { g_main_watch.store(kMainExited, std::memory_order_release); }

pid_t current_tid() noexcept { return pid_t(syscall(SYS_gettid)); }

int64_t monotonic_ms() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t(now.tv_sec) * 1000 + now.tv_nsec / 1'000'000;
}

bool register_tid(pid_t tid) noexcept {
  for (auto& slot : g_agent_tids) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, tid)) return true;
  }
  return false;  // more agent threads than slots: this one simply counts as the program's
}

void unregister_tid_slot(pid_t tid) noexcept {
  for (auto& slot : g_agent_tids) {
    pid_t expected = tid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

// Leaves the registry with the thread's CPU time added to the ended ones (called by the thread).
void unregister_tid(pid_t tid) noexcept {
  timespec own{};
  const bool read = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &own) == 0;
  pthread_mutex_lock(&g_cpu_mutex);
  if (read) g_ended_cpu_ns += ns_of(own);
  unregister_tid_slot(tid);
  pthread_mutex_unlock(&g_cpu_mutex);
}

bool is_agent_tid(pid_t tid) noexcept {
  for (const auto& slot : g_agent_tids) {
    if (slot.load(std::memory_order_relaxed) == tid) return true;
  }
  return false;
}

// The state letter of /proc/self/task/<tid>/stat ('R', 'S', 'Z', ...), 0 if unreadable (the
// thread is gone). The comm field may hold ')' itself: the state follows the last one.
char task_state(pid_t tid) noexcept {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", int(tid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[512];
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  const char* paren = nullptr;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p == ')') paren = p;
  }
  return paren != nullptr && paren[1] == ' ' ? paren[2] : 0;
}

bool is_dead(char state) noexcept { return state == 0 || state == 'Z' || state == 'X'; }

// True when the leader called pthread_exit (zombie until the group ends) and no thread but
// the agent's is still alive.
bool only_agent_threads_left() noexcept {
  const pid_t leader = getpid();
  const uint8_t watch = g_main_watch.load(std::memory_order_acquire);
  if (watch == kWatched) return false;  // the common case: main is alive, nothing to read
  // Not watched (the agent was loaded by another thread): the leader's state tells.
  if (watch == kNotWatched && !is_dead(task_state(leader))) return false;
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return false;  // cannot tell: keep running, as before
  bool only_ours = true;
  while (const dirent* entry = readdir(tasks)) {
    const pid_t tid = pid_t(std::atoi(entry->d_name));
    if (tid <= 0 || tid == leader || is_agent_tid(tid)) continue;
    if (!is_dead(task_state(tid))) {
      only_ours = false;
      break;
    }
  }
  closedir(tasks);
  return only_ours;
}

struct Start {
  const char* name;
  void (*body)(void*);
  void* arg;
};

// What a new thread is to run, in static slots rather than on the heap: its first malloc or
// free would give the thread a malloc arena of its own (64 MiB of address space reserved),
// enough under `ulimit -v` to leave the exit flush without memory (reliability.
// address_space_limit). The creator fills a free slot; the thread copies it and frees it.
struct StartSlot {
  std::atomic<bool> used{false};
  Start start{};
};
StartSlot g_start_slots[kMaxAgentThreads];

StartSlot* claim_slot(const Start& start) noexcept {
  for (StartSlot& slot : g_start_slots) {
    bool expected = false;
    if (slot.used.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
      slot.start = start;
      return &slot;
    }
  }
  return nullptr;
}

// The thread's start routine (a C boundary): nothing escapes it but a forced unwind
// (pthread_exit, cancellation), which must reach glibc.
void* run_agent_thread(void* raw) {
  auto* slot = static_cast<StartSlot*>(raw);
  const Start start = slot->start;
  slot->used.store(false, std::memory_order_release);
  const pid_t tid = current_tid();
  register_tid(tid);
  prctl(PR_SET_NAME, start.name, 0, 0, 0);
  try {
    collector::AgentBusy busy;  // nothing this thread does is the program's
    start.body(start.arg);
  } catch (abi::__forced_unwind&) {
    unregister_tid(tid);
    throw;
  } catch (...) {
    static collector::SwallowedSite site{"an agent thread's work failed: the thread ended early"};
    collector::note_swallowed(site);
  }
  unregister_tid(tid);
  return nullptr;  // if this was the process's last thread, glibc now calls exit(0)
}

// A forked child has none of the parent's threads.
void forget_threads_in_child() noexcept {
  for (auto& slot : g_agent_tids) slot.store(0, std::memory_order_relaxed);
  g_cpu_mutex = PTHREAD_MUTEX_INITIALIZER;  // the parent's threads may have held it
  g_ended_cpu_ns = 0;
  g_stop.store(false, std::memory_order_relaxed);
  g_last_check_ms.store(0, std::memory_order_relaxed);
  // The forking thread is the child's leader: watched only if it was the watched main thread.
  if (g_main_watch.load(std::memory_order_relaxed) != kNotWatched) {
    g_main_watch.store(pthread_getspecific(g_main_key) != nullptr ? kWatched : kNotWatched);
  }
}

pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
void install_atfork() { pthread_atfork(nullptr, nullptr, forget_threads_in_child); }

}  // namespace

void watch_main_thread() noexcept {
  if (pid_t(syscall(SYS_gettid)) != getpid()) return;  // not the main thread: /proc will tell
  uint8_t expected = kNotWatched;
  if (!g_main_watch.compare_exchange_strong(expected, kWatched)) return;
  if (pthread_key_create(&g_main_key, main_thread_exited) != 0 ||
      pthread_setspecific(g_main_key, &g_main_key) != 0) {
    g_main_watch.store(kNotWatched, std::memory_order_release);
  }
}

bool start_agent_thread(const char* name, void (*body)(void*), void* arg) noexcept {
  pthread_once(&g_atfork_once, install_atfork);
  StartSlot* slot = claim_slot({name, body, arg});
  if (slot == nullptr) return false;
  // Inherited mask: the thread never has a signal unblocked, not even for one instruction.
  sigset_t all{}, before{};
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  pthread_t thread{};
  const bool started = pthread_create(&thread, &attributes, run_agent_thread, slot) == 0;
  pthread_attr_destroy(&attributes);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (!started) slot->used.store(false, std::memory_order_release);
  return started;
}

bool keep_running() noexcept {
  if (g_stop.load(std::memory_order_acquire)) return false;
  const int64_t now = monotonic_ms();
  int64_t last = g_last_check_ms.load(std::memory_order_relaxed);
  if (now - last < kAgentTickMs) return true;
  if (!g_last_check_ms.compare_exchange_strong(last, now)) return true;  // another thread looks
  if (only_agent_threads_left()) g_stop.store(true, std::memory_order_release);
  return !g_stop.load(std::memory_order_acquire);
}

void stop_agent_threads() noexcept { g_stop.store(true, std::memory_order_release); }

uint64_t agent_threads_cpu_ns() noexcept {
  pthread_mutex_lock(&g_cpu_mutex);
  uint64_t total = g_ended_cpu_ns;
  for (const auto& slot : g_agent_tids) {
    const pid_t tid = slot.load(std::memory_order_relaxed);
    timespec ts{};
    if (tid != 0 && clock_gettime(thread_cpu_clock(tid), &ts) == 0) total += ns_of(ts);
  }
  pthread_mutex_unlock(&g_cpu_mutex);
  return total;
}

}  // namespace profagent::agent
