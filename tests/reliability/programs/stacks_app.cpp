// Programs of tests/reliability/cases_stacks.py: CUDA calls made from known call chains, so the
// call stacks the agent records can be checked frame by frame and line by line.
//   stacks_app chains N     N steps: main -> run_steps -> step -> layer -> cudaLaunchKernel and
//                           main -> run_steps -> step -> update -> cudaLaunchKernel
//   stacks_app threads T N  T threads at once, each running the chains N times
//   stacks_app signal N     N launches while a timer's signal handler opens ranges and calls
//                           cudaMemsetAsync
//   stacks_app fork N       the chains, then a forked child runs them too (and exits)
//   stacks_app no_unwind N  launches from under a frame without unwind info and with a garbage
//                           frame pointer, from a linked function and from a JIT-copied one
// Each prints "expect {...}": the call counts and the lines of the calls.
// Built with -g -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls; every function of a
// chain is noinline, so each is its own frame.
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fake_module.h"

#define NOINLINE __attribute__((noinline))

namespace {

char g_stubs[8];  // layer_kernel, update_kernel (one distinct address each)
int g_layer_line = 0, g_update_line = 0, g_signal_line = 0, g_no_unwind_line = 0;
std::atomic<long> g_failures{0};
void* g_device = nullptr;

void check(cudaError_t status) {
  if (status != cudaSuccess) g_failures.fetch_add(1);
}

NOINLINE void layer(int i) {
  g_layer_line = __LINE__ + 1;
  check(cudaLaunchKernel(&g_stubs[0], dim3(1 + i % 2), dim3(32), nullptr, 0, nullptr));
  asm volatile("" ::: "memory");  // keeps the call from being a tail call
}

NOINLINE void update(int i) {
  g_update_line = __LINE__ + 1;
  check(cudaLaunchKernel(&g_stubs[1], dim3(1 + i % 3), dim3(64), nullptr, 0, nullptr));
  asm volatile("" ::: "memory");
}

NOINLINE void step(int i) {
  layer(i);
  update(i);
  asm volatile("" ::: "memory");
}

NOINLINE void run_steps(long n) {
  for (long i = 0; i < n; ++i) step(int(i));
  check(cudaDeviceSynchronize());
}

void print_expect(long launches, long syncs, long other) {
  std::printf("expect {\"cudaLaunchKernel\": %ld, \"cudaDeviceSynchronize\": %ld, \"other\": %ld, "
              "\"layer_line\": %d, \"update_line\": %d, \"signal_line\": %d, \"no_unwind_line\": %d, "
              "\"failures\": %ld}\n",
              launches, syncs, other, g_layer_line, g_update_line, g_signal_line, g_no_unwind_line,
              g_failures.load());
}

int chains(long n) {
  run_steps(n);
  print_expect(2 * n, 1, 0);
  return 0;
}

void* thread_main(void* arg) {
  run_steps(*static_cast<long*>(arg));
  return nullptr;
}

int threads(long count, long n) {
  std::vector<pthread_t> ids(size_t(count), pthread_t{});
  for (pthread_t& id : ids) pthread_create(&id, nullptr, thread_main, &n);
  for (pthread_t id : ids) pthread_join(id, nullptr);
  print_expect(2 * n * count, count, 0);
  return 0;
}

// ---- a signal handler making CUDA calls --------------------------------------------------
// The handler opens and closes a range on every signal (the agent takes a stack there, also
// when the signal interrupted the agent's own unwinding of a launch), and makes a CUDA call when
// the thread is not inside CUDA itself (the CUDA runtime is not async-signal-safe: a program
// must not re-enter it from a handler, with or without the agent).
std::atomic<long> g_handled{0}, g_handler_cuda{0};
volatile sig_atomic_t g_in_cuda = 0;

NOINLINE void on_alarm(int) {
  const int saved = errno;
  if (profagent_range_push) profagent_range_push("in_handler");
  if (profagent_range_pop) profagent_range_pop();
  if (!g_in_cuda) {
    g_signal_line = __LINE__ + 1;
    check(cudaMemsetAsync(g_device, 0, 64, nullptr));
    g_handler_cuda.fetch_add(1);
  }
  g_handled.fetch_add(1);
  errno = saved;
}

NOINLINE void signal_step(int i) {
  g_in_cuda = 1;
  layer(i);
  g_in_cuda = 0;
  for (volatile int spin = 0; spin < 20000; spin = spin + 1) {
  }
}

int signal_calls(long n) {
  if (cudaMalloc(&g_device, 64) != cudaSuccess) return 5;
  struct sigaction action {};
  action.sa_handler = on_alarm;
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, nullptr);
  // To this thread only (the runtime's own threads must not take it): a thread-directed timer.
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGALRM;
  event._sigev_un._tid = gettid();
  timer_t timer{};
  // Every 100 us of this thread's CPU time, not of wall time: on a loaded host a handler that
  // takes longer than the period in wall time (preempted) would find the next signal pending at
  // once, and the loop would never run again (a livelock until the test's timeout).
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer) != 0) return 6;
  const itimerspec every_100us{{0, 100000}, {0, 100000}};
  timer_settime(timer, 0, &every_100us, nullptr);
  long done = 0;
  while (done < n || g_handler_cuda.load() < 50) {
    signal_step(int(done));
    ++done;
  }
  timer_delete(timer);
  g_in_cuda = 1;  // a signal still pending must not enter CUDA from here on
  check(cudaDeviceSynchronize());
  std::printf("handled %ld signals, %ld made a CUDA call\n", g_handled.load(), g_handler_cuda.load());
  print_expect(done, 1, g_handler_cuda.load());
  return 0;
}

// ---- fork ----------------------------------------------------------------------------------
int fork_chains(long n) {
  run_steps(n);
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {  // launches only: the simulated device has no thread in the child to wait for
    for (long i = 0; i < n; ++i) step(int(i));
    std::_Exit(g_failures.load() == 0 ? 0 : 3);
  }
  int status = 0;
  waitpid(child, &status, 0);
  print_expect(2 * n, 1, WIFEXITED(status) ? WEXITSTATUS(status) : 100);
  return 0;
}

// ---- frames without unwind info -------------------------------------------------------------
extern "C" void no_cfi_call(void (*fn)(int), int arg);  // below: no CFI, rbp made garbage

NOINLINE void launch_under_no_cfi(int i) {
  g_no_unwind_line = __LINE__ + 1;
  check(cudaLaunchKernel(&g_stubs[0], dim3(1), dim3(32), nullptr, 0, nullptr));
  asm volatile("" ::: "memory");
}

int no_unwind(long n) {
  // The same bytes copied to an anonymous executable page: code no module holds (as JIT code).
  const size_t size = 64;
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return 4;
  std::memcpy(page, reinterpret_cast<const void*>(&no_cfi_call), size);
  auto* jit = reinterpret_cast<void (*)(void (*)(int), int)>(page);
  for (long i = 0; i < n; ++i) {
    no_cfi_call(launch_under_no_cfi, int(i));
    jit(launch_under_no_cfi, int(i));
  }
  check(cudaDeviceSynchronize());
  print_expect(2 * n, 1, 0);
  return 0;
}

}  // namespace

// No .cfi directives: no unwind info for this function. It points rbp at an unmapped page, so
// an unwinder that falls back to the frame-pointer chain reads garbage. Position-independent
// (an indirect call), so its bytes also run when copied elsewhere.
asm(R"(
  .text
  .globl no_cfi_call
  .type no_cfi_call, @function
no_cfi_call:
  push %rbp
  push %rbx
  mov $0x1000, %rbp
  mov %rdi, %rax
  mov %esi, %edi
  sub $8, %rsp
  call *%rax
  add $8, %rsp
  pop %rbx
  pop %rbp
  ret
  .size no_cfi_call, .-no_cfi_call
)");

int main(int argc, char** argv) {
  // The runtime keeps the name pointers (as it keeps nvcc's string literals): names live to the end.
  static const std::vector<std::string> names = {"layer_kernel", "update_kernel"};
  register_fake_kernels(g_stubs, names);
  const std::string mode = argc > 1 ? argv[1] : "chains";
  const long a = argc > 2 ? std::atol(argv[2]) : 10;
  const long b = argc > 3 ? std::atol(argv[3]) : 10;
  int status = 2;
  if (mode == "chains") status = chains(a);
  else if (mode == "threads") status = threads(a, b);
  else if (mode == "signal") status = signal_calls(a);
  else if (mode == "fork") status = fork_chains(a);
  else if (mode == "no_unwind") status = no_unwind(a);
  std::fflush(stdout);
  return status;
}
