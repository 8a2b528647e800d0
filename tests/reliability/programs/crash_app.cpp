// crash_app: programs that crash after some CUDA work, and programs with signal handlers of
// their own, for tests/reliability/cases_crash.py (run with and without libprofagent.so).
//
//   crash_app crash HOW [thread]   3 rounds of work, "expect {...}", then the crash HOW:
//                                  assert, throw (an uncaught exception: std::terminate,
//                                  abort), abort, segv (a null write), bus (a read past the
//                                  end of a truncated mapping), fpe (integer division by
//                                  zero), ill (ud2), stack (unbounded recursion), raise_segv
//                                  (SIGSEGV sent with raise). `thread`: on a second thread
//                                  while main waits in a CUDA call; `threads`: on 4 threads
//                                  at once.
//   crash_app own_segv WHEN WHAT   the program's own SIGSEGV handler, installed `before` or
//                                  `after` its first CUDA call: `recover` (siglongjmp back,
//                                  more work, status 0) or `die` (a line, SIG_DFL, return:
//                                  the write faults again and the process dies of SIGSEGV)
//   crash_app crash_at_exit        2 rounds of work, then a SIGSEGV in an exit handler that
//                                  runs after the agent wrote the trace
//   crash_app xfsz_handler         its own SIGXFSZ handler; a handler registered with atexit
//                                  before any CUDA call (so it runs after the agent's exit
//                                  flush) prints how often it ran; status 0
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

// One round: 4 hooked calls (cudaMalloc, cudaMemset, cudaFree, cudaDeviceSynchronize).
void work(int rounds) {
  for (int i = 0; i < rounds; ++i) {
    void* device = nullptr;
    cudaMalloc(&device, 4096);
    cudaMemset(device, 0, 4096);
    cudaFree(device);
    cudaDeviceSynchronize();
  }
}

void say(const char* line) { (void)!write(STDOUT_FILENO, line, std::strlen(line)); }

volatile int* volatile g_null = nullptr;
volatile int g_zero = 0;
volatile int g_seven = 7;  // 7 / g_zero: GCC turns 1 / x into a comparison, never dividing

int recurse(int depth) {
  volatile char frame[1024];
  frame[0] = char(depth);
  return recurse(depth + 1) + frame[0];
}

// A read past the end of a file that shrank under its mapping: SIGBUS.
void bus_error() {
  char path[] = "/tmp/crash_app_bus_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0 || ftruncate(fd, 4096) != 0) return;
  auto* mapped = static_cast<volatile char*>(mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0));
  unlink(path);
  if (mapped == MAP_FAILED || ftruncate(fd, 0) != 0) return;
  (void)mapped[0];
}

void crash_by(const std::string& how) {
  if (how == "assert") assert(how == "an assertion that fails");
  if (how == "throw") throw std::runtime_error("nobody catches this");
  if (how == "abort") std::abort();
  if (how == "segv") *g_null = 1;
  if (how == "bus") bus_error();
  if (how == "fpe") std::printf("%d\n", g_seven / g_zero);
  if (how == "ill") __builtin_trap();
  if (how == "stack") std::printf("%d\n", recurse(0));
  if (how == "raise_segv") raise(SIGSEGV);
  say("did not crash\n");
}

// `threads` threads crash (0: main itself); several start together, as after one bad launch.
int crash(const std::string& how, int threads) {
  work(3);
  std::printf("expect {\"cudaMalloc\": 3, \"cudaFree\": 3}\n");
  std::fflush(stdout);
  if (threads == 0) {
    crash_by(how);
    return 0;
  }
  static std::atomic<int> ready{0};
  for (int t = 0; t < threads; ++t) {
    std::thread([how, threads] {
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      crash_by(how);
    }).detach();
  }
  for (;;) cudaDeviceSynchronize();  // main is inside a CUDA call when the threads crash
}

sigjmp_buf g_back;
bool g_recover = false;

void own_segv(int sig) {
  say("own SIGSEGV handler ran\n");
  if (g_recover) siglongjmp(g_back, 1);
  signal(sig, SIG_DFL);  // returning re-runs the faulting write, which now ends the process
}

int own_segv_handler(const std::string& when, const std::string& what) {
  g_recover = what == "recover";
  if (when == "before") signal(SIGSEGV, own_segv);
  work(2);
  if (when == "after") signal(SIGSEGV, own_segv);
  if (sigsetjmp(g_back, 1) == 0) *g_null = 1;
  work(1);  // only reached after a recovery
  std::printf("expect {\"cudaMalloc\": 3, \"cudaFree\": 3}\n");
  return 0;
}

volatile sig_atomic_t g_xfsz_calls = 0;
void count_xfsz(int) { g_xfsz_calls = g_xfsz_calls + 1; }
void report_xfsz() {
  char line[64];
  const int n = std::snprintf(line, sizeof line, "SIGXFSZ handler ran %d times\n", int(g_xfsz_calls));
  (void)!write(STDOUT_FILENO, line, size_t(n));
}

int xfsz_handler() {
  signal(SIGXFSZ, count_xfsz);
  std::atexit(report_xfsz);  // before the first CUDA call: runs after the agent's exit flush
  work(2);
  std::printf("expect {\"cudaMalloc\": 2, \"cudaFree\": 2}\n");
  return 0;
}

}  // namespace

// A crash after the agent's exit flush: an exit handler registered before the first CUDA call
// runs after the agent's.
void crash_late() { *g_null = 2; }

int crash_at_exit() {
  std::atexit(crash_late);
  work(2);
  std::printf("expect {\"cudaMalloc\": 2, \"cudaFree\": 2}\n");
  std::fflush(stdout);  // stdio is flushed after the exit handlers, which crash first
  return 0;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const std::string first = argc > 2 ? argv[2] : "";
  const std::string second = argc > 3 ? argv[3] : "";
  if (mode == "crash") return crash(first, second == "thread" ? 1 : second == "threads" ? 4 : 0);
  if (mode == "own_segv") return own_segv_handler(first, second);
  if (mode == "xfsz_handler") return xfsz_handler();
  if (mode == "crash_at_exit") return crash_at_exit();
  std::fprintf(stderr, "usage: crash_app crash HOW [thread|threads] | own_segv before|after recover|die | crash_at_exit | xfsz_handler\n");
  return 2;
}
