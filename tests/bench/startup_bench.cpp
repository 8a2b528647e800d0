// What the agent costs a process that never uses CUDA: runs a program (default /bin/true) N
// times without and N times with the agent preloaded, and prints the CPU time (user + system,
// from wait4's rusage of each child) per process: median and mean, and the difference.
//
// usage: startup_bench --agent libprofagent.so [--runs N] [--program PATH]
// Runs are interleaved (one without, one with) so a machine whose load changes during the
// bench affects both sides alike. Prints figures; never fails on time.
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

// One run; the child's CPU time in ms, or -1 when it could not be started or failed.
double run_once(const std::string& program, std::vector<char*>& env) {
  char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, env.data()) != 0) return -1;
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return cpu_ms(usage);
}

void print_line(const char* label, std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
  std::printf("%-14s median %.3f ms  mean %.3f ms  (n=%zu)\n", label, values[values.size() / 2], mean,
              values.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::string agent, program = "/bin/true";
  int runs = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--agent") agent = argv[i + 1];
    else if (flag == "--runs") runs = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--program") program = argv[i + 1];
  }
  if (agent.empty()) {
    std::fprintf(stderr, "usage: startup_bench --agent libprofagent.so [--runs N] [--program PATH]\n");
    return 2;
  }
  std::vector<char*> plain = child_environment("");
  const std::string preload = "LD_PRELOAD=" + agent;
  std::vector<char*> with_agent = child_environment(preload);
  std::vector<double> without, with;
  for (int i = 0; i < runs; ++i) {
    const double a = run_once(program, plain);
    const double b = run_once(program, with_agent);
    if (a < 0 || b < 0) {
      std::fprintf(stderr, "startup_bench: %s did not run and exit 0\n", program.c_str());
      return 1;
    }
    without.push_back(a);
    with.push_back(b);
  }
  std::printf("CPU time per process of %s (user + system, rusage):\n", program.c_str());
  print_line("without agent", without);
  print_line("with agent", with);
  std::sort(without.begin(), without.end());
  std::sort(with.begin(), with.end());
  std::printf("agent cost     %.3f ms per process (median difference)\n",
              with[with.size() / 2] - without[without.size() / 2]);
  return 0;
}
