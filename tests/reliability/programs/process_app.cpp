// process_app: programs of the shapes a profiler can break — the process's
// threads, signals, descriptors and ways out. tests/reliability/cases_process.py runs each mode
// with and without libprofagent.so and compares stdout, stderr, exit status and the files the
// program wrote.
//
//   process_app <mode> [args...]       (the modes are the table at the end of the file)
//
// Modes print "expect {...}" with the hooked calls they made where the trace is checked.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {
void** __cudaRegisterFatBinary(void* fat_cubin);
void __cudaRegisterFatBinaryEnd(void** handle);
void __cudaRegisterFunction(void** handle, const char* host_fun, char* device_fun, const char* device_name,
                            int thread_limit, uint3* tid, uint3* bid, dim3* block, dim3* grid, int* wsize);
}

extern char** environ;

namespace {

// cudaMalloc + cudaFree: hooked calls that enqueue no device work, so the simulated device
// starts none of its own threads (a runtime that starts no threads of its own).
void allocations(int count) {
  for (int i = 0; i < count; ++i) {
    void* device = nullptr;
    cudaMalloc(&device, 4096);
    cudaFree(device);
  }
}

double seconds_since(const timespec& start) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return double(now.tv_sec - start.tv_sec) + double(now.tv_nsec - start.tv_nsec) / 1e9;
}

// ---- pthread_exit: main leaves first, the worker finishes --------------------------------------

pthread_t g_main_thread;

void* worker_after_main(void*) {
  pthread_join(g_main_thread, nullptr);  // main has really called pthread_exit
  allocations(10);
  std::printf("worker: 10 allocations done\n");
  std::printf("expect {\"cudaMalloc\": 10, \"cudaFree\": 10}\n");
  return nullptr;  // the last thread: glibc calls exit(0), which flushes stdout
}

int main_pthread_exit() {
  std::printf("main: starting the worker, then pthread_exit\n");  // buffered (a pipe)
  g_main_thread = pthread_self();
  pthread_t worker{};
  if (pthread_create(&worker, nullptr, worker_after_main, nullptr) != 0) return 1;
  pthread_detach(worker);
  pthread_exit(nullptr);
}

// ---- a blocked signal taken with sigwait / signalfd ----------------------------------------------

// Blocks SIGUSR1 before the first CUDA call, keeps calling CUDA for `ms` (the agent's timer
// and exporter threads are busy meanwhile), then sends SIGUSR1 to the process and takes it.
int blocked_signal(const std::string& how, long ms) {
  sigset_t usr1{};
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
  const int fd = how == "signalfd" ? signalfd(-1, &usr1, SFD_CLOEXEC) : -1;
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  int calls = 0;
  while (seconds_since(start) * 1000 < double(ms)) allocations(1), ++calls;
  kill(getpid(), SIGUSR1);
  int got = 0;
  if (how == "signalfd") {
    signalfd_siginfo info{};
    if (read(fd, &info, sizeof info) == ssize_t(sizeof info)) got = int(info.ssi_signo);
  } else {
    sigwait(&usr1, &got);
  }
  std::printf("took signal %d by %s\n", got, how.c_str());
  return got == SIGUSR1 ? 0 : 1;
}

// ---- plain work (stderr a closed pipe) ---------------------------------------------------------

int work(int count) {
  allocations(count);
  std::printf("did %d allocations\n", count);
  std::printf("expect {\"cudaMalloc\": %d}\n", count);
  return 0;
}

// ---- fds 0-2 closed and reopened as the program's data files -----------------------------------

int reopened_std_fds(const char* dir) {
  allocations(2);
  close(0), close(1), close(2);
  const char* names[] = {"in.dat", "out.dat", "err.dat"};
  for (const char* name : names) {  // lowest free numbers: they become fds 0, 1 and 2
    const std::string path = std::string(dir) + "/" + name;
    if (open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644) < 0) return 1;
  }
  for (int fd = 0; fd < 3; ++fd) {
    const std::string line = "data of fd " + std::to_string(fd) + "\n";
    if (write(fd, line.data(), line.size()) != ssize_t(line.size())) return 2;
  }
  allocations(3);
  (void)!write(2, "after more work\n", 16);
  return 0;
}

// ---- siglongjmp out of a blocking hooked call --------------------------------------------------

sigjmp_buf g_jump;
std::atomic<bool> g_in_sync{false};
std::atomic<bool> g_jumped{false};
char g_long_stub;

void jump_out(int) {
  if (g_in_sync.load()) siglongjmp(g_jump, 1);
}

// Sends SIGUSR1 to main every 20 ms until main jumped out of the synchronize.
void* interrupter(void*) {
  const timespec period{0, 20'000'000};
  while (!g_jumped.load()) {
    nanosleep(&period, nullptr);
    pthread_kill(g_main_thread, SIGUSR1);
  }
  return nullptr;
}

int longjmp_out_of_hook() {
  g_main_thread = pthread_self();
  void** module = __cudaRegisterFatBinary(nullptr);
  __cudaRegisterFunction(module, &g_long_stub, const_cast<char*>("long_kernel"), "long_kernel", -1, nullptr,
                         nullptr, nullptr, nullptr, nullptr);
  __cudaRegisterFatBinaryEnd(module);
  struct sigaction action{};
  action.sa_handler = jump_out;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, nullptr);
  cudaLaunchKernel(&g_long_stub, dim3(1), dim3(1), nullptr, 0, nullptr);  // DEVSIM_KERNEL_NS: long
  pthread_t thread{};
  pthread_create(&thread, nullptr, interrupter, nullptr);
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  if (sigsetjmp(g_jump, 1) == 0) {
    g_in_sync = true;
    cudaDeviceSynchronize();  // blocks until the long kernel ended, unless interrupted
    g_in_sync = false;
    std::printf("the synchronize was not interrupted\n");
    return 3;
  }
  g_in_sync = false;
  g_jumped = true;
  pthread_join(thread, nullptr);
  const bool early = seconds_since(start) < 1.0;  // the kernel takes longer: we left it blocked
  // Recorded again. Allocations only: a free synchronizes, and the long kernel still runs (the
  // simulated device's own wait was left by the jump as it was; only the agent must recover).
  for (int i = 0; i < 5; ++i) {
    void* device = nullptr;
    cudaMalloc(&device, 4096);
  }
  std::printf("jumped out of cudaDeviceSynchronize %s\n", early ? "while it blocked" : "late");
  std::printf("expect {\"cudaLaunchKernel\": 1, \"cudaMalloc\": 5}\n");
  return early ? 0 : 4;
}

// ---- closefrom(3), then the program's own files, then SIGTERM ------------------------------------

int closefrom_then_sigterm(const char* dir) {
  allocations(3);  // the first CUDA call installs the agent's opt-in handler
  closefrom(3);
  for (int i = 0; i < 12; ++i) {  // the lowest numbers again: those the agent might still use
    const std::string path = std::string(dir) + "/file" + std::to_string(i) + ".dat";
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const std::string line = "file " + std::to_string(i) + "\n";
    if (fd < 0 || write(fd, line.data(), line.size()) != ssize_t(line.size())) return 1;
  }
  std::printf("expect {\"cudaMalloc\": 3}\n");
  std::fflush(stdout);
  kill(getpid(), SIGTERM);  // default action: the process dies of it
  return 2;
}

// ---- quick_exit, execveat ----------------------------------------------------------------------

void said_at_quick_exit() {
  std::printf("at_quick_exit handler ran\n");
  std::fflush(stdout);
}

int quick_exit_with(int status) {
  at_quick_exit(said_at_quick_exit);
  allocations(4);
  std::printf("expect {\"cudaMalloc\": 4}\n");
  std::fflush(stdout);
  quick_exit(status);
}

int execveat_self(const char* self) {
  allocations(3);
  std::printf("before execveat\n");
  std::fflush(stdout);
  char* argv[] = {const_cast<char*>(self), const_cast<char*>("work"), const_cast<char*>("2"), nullptr};
  execveat(AT_FDCWD, self, argv, environ, 0);
  std::printf("execveat failed\n");
  return 1;
}

// ---- chdir after start-up ------------------------------------------------------------------------

int chdir_then_work(const char* to) {
  allocations(2);
  if (chdir(to) != 0) return 1;
  allocations(2);
  std::printf("expect {\"cudaMalloc\": 4}\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const char* arg = argc > 2 ? argv[2] : "";
  if (mode == "pthread_exit") return main_pthread_exit();
  if (mode == "sigwait" || mode == "signalfd") return blocked_signal(mode, std::atol(arg));
  if (mode == "work") return work(std::atoi(arg));
  if (mode == "reopen_std_fds") return reopened_std_fds(arg);
  if (mode == "longjmp") return longjmp_out_of_hook();
  if (mode == "closefrom_sigterm") return closefrom_then_sigterm(arg);
  if (mode == "quick_exit") return quick_exit_with(std::atoi(arg));
  if (mode == "execveat") return execveat_self(argv[0]);
  if (mode == "chdir") return chdir_then_work(arg);
  std::fprintf(stderr, "usage: process_app pthread_exit | sigwait MS | signalfd MS | work N | "
                       "reopen_std_fds DIR | longjmp | closefrom_sigterm DIR | quick_exit STATUS | "
                       "execveat | chdir DIR\n");
  return 2;
}
