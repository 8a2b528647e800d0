#include "agent/launcher/supervise.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace profagent::launcher {
namespace {

constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// What the program must start with: the launcher's signal mask and SIGCHLD action as it
// inherited them (dispositions of the forwarded signals are never changed: ignored ones stay
// ignored across exec, as without the launcher).
struct Inherited {
  sigset_t mask;
  struct sigaction sigchld;
};

// The forwarded signals the launcher does not ignore, and SIGCHLD: blocked before the fork
// so that none is lost between fork and sigwaitinfo, and taken synchronously (no handler
// runs in the launcher).
sigset_t waited_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int sig : kForwarded) {
    struct sigaction current{};
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler != SIG_IGN) sigaddset(&set, sig);
  }
  return set;
}

Inherited take_over_signals(const sigset_t& waited) {
  Inherited inherited{};
  sigprocmask(SIG_BLOCK, &waited, &inherited.mask);
  // A parent that ignores SIGCHLD would have the child reaped behind our back (no status).
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGCHLD, &dfl, &inherited.sigchld);
  return inherited;
}

[[noreturn]] void exec_child(const std::vector<std::string>& command, const Inherited& inherited) {
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  sigaction(SIGCHLD, &inherited.sigchld, nullptr);
  sigprocmask(SIG_SETMASK, &inherited.mask, nullptr);  // pending signals then act as usual
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "profagent: cannot run %s\n", argv[0]);
  _exit(127);
}

// Did the program receive this signal itself? The kernel (si_code SI_KERNEL) sends the
// terminal's Ctrl-C and Ctrl-\ (SIGINT, SIGQUIT), and SIGHUP when the terminal's
// controlling process ends, to the whole foreground process group — the program's too
// while it stays in ours (as under a shell).
// A hang-up's SIGHUP goes to the session leader alone: if that is the launcher, pass it on.
bool program_received_it(int sig, const siginfo_t& info, pid_t pid) {
  if (info.si_code != SI_KERNEL) return false;  // kill(), sigqueue(): sent to us
  if (sig == SIGHUP && getsid(0) == getpid()) return false;
  return getpgid(pid) == getpgrp();
}

// Is `sig` already pending for the program (/proc/PID/status, SigPnd or ShdPnd)? Then a
// forwarded copy would be merged into it by the kernel anyway: skipping it changes nothing,
// and avoids a second delivery when the sender signalled the whole process group (kill
// -TERM -PGID reaches the program before the launcher) and the program takes the first
// copy before ours arrives.
bool pending_in(pid_t pid, int sig) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/status", int(pid));
  FILE* status = std::fopen(path, "re");
  if (status == nullptr) return false;
  bool pending = false;
  char line[256];
  while (!pending && std::fgets(line, sizeof line, status) != nullptr) {
    if (std::strncmp(line, "SigPnd:", 7) != 0 && std::strncmp(line, "ShdPnd:", 7) != 0) continue;
    pending = (std::strtoull(line + 7, nullptr, 16) >> (sig - 1)) & 1;
  }
  std::fclose(status);
  return pending;
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Waits for the child, passing signals on, until it ended; its exit code, or -1 if lost.
int supervise(pid_t pid, const sigset_t& waited) {
  for (;;) {
    siginfo_t info{};
    const int sig = sigwaitinfo(&waited, &info);
    if (sig < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (sig != SIGCHLD) {
      if (!program_received_it(sig, info, pid) && !pending_in(pid, sig)) kill(pid, sig);
      continue;
    }
    int status = 0;
    const pid_t ended = waitpid(pid, &status, WNOHANG);  // SIGCHLD also reports stops
    if (ended == pid) return exit_code_of(status);
    if (ended < 0 && errno != EINTR) return -1;
  }
}

}  // namespace

int run_and_forward(const std::vector<std::string>& command, pid_t& pid) {
  const sigset_t waited = waited_signals();
  const Inherited inherited = take_over_signals(waited);
  pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "profagent: cannot fork\n");
    return 1;
  }
  if (pid == 0) exec_child(command, inherited);
  const int code = supervise(pid, waited);
  if (code < 0) std::fprintf(stderr, "profagent: lost the program (waiting for it failed)\n");
  return code < 0 ? 1 : code;
}

}  // namespace profagent::launcher
