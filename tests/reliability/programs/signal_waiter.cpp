// signal_waiter: a CUDA program that waits for signals, for the launcher cases of
// tests/reliability/cases_markers.py (`profagent run` forwards signals).
//
//   signal_waiter handle SIG   prints "got <NAME>" for each of SIGTERM, SIGINT, SIGHUP,
//                              SIGQUIT, SIGUSR1, SIGUSR2 it receives; exits with status 3
//                              after SIG (a number)
//   signal_waiter default      leaves every signal at its default action (dies of it)
//
// Both print "ready <pid>" once they wait, after one allocation on the device.
#include <cuda_runtime_api.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

volatile sig_atomic_t g_exit_on = 0;
volatile sig_atomic_t g_done = 0;

void say(const char* text) {
  ssize_t ignored = write(STDOUT_FILENO, text, std::strlen(text));
  (void)ignored;
}

void on_signal(int sig) {
  char line[32] = "got SIG";
  std::strcat(line, sigabbrev_np(sig));
  std::strcat(line, "\n");
  say(line);
  if (sig == g_exit_on) g_done = 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "handle" && argc > 2) {
    g_exit_on = std::atoi(argv[2]);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) signal(sig, on_signal);
  } else if (mode != "default") {
    std::fprintf(stderr, "usage: signal_waiter handle SIG | default\n");
    return 64;
  }
  void* device = nullptr;
  if (cudaMalloc(&device, 256) != cudaSuccess || cudaFree(device) != cudaSuccess) return 2;
  // Blocked until sigsuspend, so that a signal cannot slip in between the test and the wait.
  sigset_t waited, before;
  sigemptyset(&waited);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaddset(&waited, sig);
  sigprocmask(SIG_BLOCK, &waited, &before);
  std::printf("ready %d\n", int(getpid()));
  std::fflush(stdout);
  while (!g_done) sigsuspend(&before);
  return 3;
}
