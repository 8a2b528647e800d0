// What the agent costs a process that never uses CUDA: runs a program (default /bin/true) N
// times without and N times with the agent preloaded, and prints the CPU time (user + system,
// from wait4's rusage of each child) per process: median and mean, and the difference.
//
// usage: startup_bench --agent libprofagent.so [--runs N] [--program PATH | -- PROGRAM ARGS...]
// Runs are interleaved (one without, one with) so a machine whose load changes during the
// bench affects both sides alike. Prints figures; never fails on time. It fails when the
// program does not exit 0, or when its output (stdout and stderr, captured on the first pair
// of runs) differs with the agent: a process that never uses CUDA must see no difference.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

extern char** environ;

namespace {

double cpu_ms(const rusage& usage) {
  auto ms = [](const timeval& t) { return double(t.tv_sec) * 1e3 + double(t.tv_usec) / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

// The environment of the child: ours, with LD_PRELOAD set to `preload` or removed.
std::vector<char*> child_environment(const std::string& preload_entry) {
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) env.push_back(*e);
  }
  if (!preload_entry.empty()) env.push_back(const_cast<char*>(preload_entry.c_str()));
  env.push_back(nullptr);
  return env;
}

struct Run {
  double cpu_ms = -1;    // -1: could not be started, or did not exit 0
  std::string output;    // stdout and stderr together, when captured
};

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, size_t(n));
  return text;
}

// One run of `argv`. With `capture`, its stdout and stderr come back through a pipe; without,
// they go to /dev/null (the CPU time is the child's either way: rusage is per process).
Run run_once(std::vector<char*>& argv, std::vector<char*>& env, bool capture) {
  int pipe_fds[2] = {-1, -1};
  if (capture && pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (capture) {
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const bool spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), env.data()) == 0;
  posix_spawn_file_actions_destroy(&actions);
  Run run;
  if (capture) {
    close(pipe_fds[1]);
    if (spawned) run.output = read_all(pipe_fds[0]);
    close(pipe_fds[0]);
  }
  if (!spawned) return {};
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  run.cpu_ms = cpu_ms(usage);
  return run;
}

void print_line(const char* label, std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
  std::printf("%-14s median %.3f ms  mean %.3f ms  (n=%zu)\n", label, values[values.size() / 2], mean,
              values.size());
}

std::string command_text(const std::vector<char*>& argv) {
  std::string text;
  for (const char* arg : argv) {
    if (arg == nullptr) break;
    text += (text.empty() ? "" : " ") + std::string(arg);
  }
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::string agent;
  std::vector<char*> command;
  int runs = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--") {
      command.assign(argv + i + 1, argv + argc);
      break;
    }
    if (i + 1 >= argc) break;
    if (flag == "--agent") agent = argv[++i];
    else if (flag == "--runs") runs = std::max(1, std::atoi(argv[++i]));
    else if (flag == "--program") command = {argv[++i]};
  }
  if (agent.empty()) {
    std::fprintf(stderr, "usage: startup_bench --agent libprofagent.so [--runs N] [--program PATH | -- PROGRAM ARGS...]\n");
    return 2;
  }
  if (command.empty()) command = {const_cast<char*>("/bin/true")};
  command.push_back(nullptr);
  const std::string name = command_text(command);
  std::vector<char*> plain = child_environment("");
  const std::string preload = "LD_PRELOAD=" + agent;
  std::vector<char*> with_agent = child_environment(preload);
  std::vector<double> without, with;
  for (int i = 0; i < runs; ++i) {
    const Run a = run_once(command, plain, i == 0);
    const Run b = run_once(command, with_agent, i == 0);
    if (a.cpu_ms < 0 || b.cpu_ms < 0) {
      std::fprintf(stderr, "startup_bench: %s did not run and exit 0%s\n", name.c_str(),
                   a.cpu_ms < 0 ? "" : " with the agent");
      return 1;
    }
    if (i == 0 && a.output != b.output) {
      std::fprintf(stderr, "startup_bench: %s printed other output with the agent:\n--- without\n%s--- with\n%s",
                   name.c_str(), a.output.c_str(), b.output.c_str());
      return 1;
    }
    without.push_back(a.cpu_ms);
    with.push_back(b.cpu_ms);
  }
  std::printf("CPU time per process of %s (user + system, rusage):\n", name.c_str());
  print_line("without agent", without);
  print_line("with agent", with);
  std::sort(without.begin(), without.end());
  std::sort(with.begin(), with.end());
  std::printf("agent cost     %.3f ms per process (median difference)\n",
              with[with.size() / 2] - without[without.size() / 2]);
  return 0;
}
