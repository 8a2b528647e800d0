// `profagent run ... -- CMD`: sets the environment, runs CMD (supervise.h: forwarding the
// launcher's signals), reports.
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/launcher/launcher.h"
#include "agent/launcher/supervise.h"
#include "agent/launcher/trigger.h"
#include "agent/launcher/unsplit_path.h"
#include "agent/report/report_command.h"

namespace {

using profagent::launcher::Options;

void say(const std::string& line) { std::fprintf(stderr, "profagent: %s\n", line.c_str()); }

std::string own_directory() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return ".";
  std::string exe(path, size_t(n));
  return exe.substr(0, exe.rfind('/'));
}

bool readable(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

// <bin>/../lib/libprofagent.so, as the build tree and an install lay it out.
std::string find_agent(const std::string& bin) {
  if (const char* given = std::getenv("PROFAGENT_LIBRARY"); given != nullptr && *given) return given;
  return bin + "/../lib/libprofagent.so";
}

// False (with one line said) when the agent cannot be named in LD_PRELOAD.
bool set_environment(const Options& options, const std::string& agent) {
  std::string why;
  // The real path, in LD_PRELOAD as in the injection variables: the agent of each process then
  // knows their value as its own as it is, without resolving its path (one readlink per
  // component of it, in every process of the command).
  char real[PATH_MAX];
  const bool resolved = realpath(agent.c_str(), real) != nullptr;
  const std::string preload = profagent::launcher::unsplit_path(resolved ? std::string(real) : agent, why);
  if (preload.empty()) {
    say("cannot name the agent in LD_PRELOAD: " + why);
    return false;
  }
  for (const auto& [name, value] : options.variables) setenv(name.c_str(), value.c_str(), 1);
  setenv("LD_PRELOAD", profagent::launcher::prepend_path(preload, std::getenv("LD_PRELOAD")).c_str(), 1);
  // CUDA's tool injection: the driver loads the agent at cuInit even where the preload does not
  // reach, and hands it the calls no hook sees (agent/injection.h). Another tool's value stays.
  // NVTX's injection likewise: every NVTX copy in the program hands the agent its ranges
  // (agent/nvtx_injection.h).
  if (resolved) {
    setenv("CUDA_INJECTION64_PATH", real, 0);
    setenv("NVTX_INJECTION64_PATH", real, 0);
  }
  // The Python hook: the agent itself arranges it in each Python process it is loaded in
  // (agent/python_startup.h); --no-python-hook set PROFAGENT_PYTHON_HOOK=off above.
  return true;
}

// Files of this run: written after it started (the program and any process it started).
std::vector<std::string> files_written(const std::string& dir, time_t since) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* entry = readdir(d)) {
    const std::string path = dir + "/" + entry->d_name;
    struct stat st{};
    if (entry->d_name[0] == '.' || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (st.st_mtime >= since) files.push_back(path);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

void report(const Options& options, pid_t pid, int code, time_t since) {
  const char* env_dir = std::getenv("PROFAGENT_OUTPUT_DIR");
  const std::string dir = !options.output_dir.empty() ? options.output_dir
                          : env_dir != nullptr        ? env_dir
                                                      : "./profagent_out";
  const std::vector<std::string> files = files_written(dir, since);
  say(options.command[0] + " (pid " + std::to_string(pid) + ") exited with code " + std::to_string(code));
  if (files.empty()) {
    say("no file was written in " + dir + " (no CUDA used, or no recorded step: see the lines above)");
    return;
  }
  size_t traces = 0;
  for (const std::string& f : files) traces += f.ends_with(".trace.json");
  say(std::to_string(traces) + " trace(s) written in " + dir + ":");
  for (const std::string& f : files) std::fprintf(stderr, "  %s\n", f.c_str());
}

// The cross-rank tools are Python (agent/ranks: one program for the local and the Dask path),
// run from <bin>/../lib/profagent_ranks by PROFAGENT_PYTHON (default: python3 on PATH; --dask
// needs one with Dask's `distributed`). Replaces this process.
int run_ranks_tool(const char* script, const std::vector<std::string>& args) {
  const std::string path = own_directory() + "/../lib/profagent_ranks/" + script;
  const char* given = std::getenv("PROFAGENT_PYTHON");
  const std::string python = given != nullptr && *given != '\0' ? given : "python3";
  std::vector<char*> argv{const_cast<char*>(python.c_str()), const_cast<char*>(path.c_str())};
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  execvp(python.c_str(), argv.data());
  say("cannot run " + python + " for " + std::string(script) + ": " + std::strerror(errno));
  return 127;
}

bool wants_cross_rank(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--ranks" || arg == "--dask" || arg.rfind("--dask=", 0) == 0) return true;
  }
  return false;
}

// `profagent report ...`: summaries of saved traces (agent/report); with --ranks or --dask the
// cross-rank report of a folder of per-rank traces (agent/ranks/profagent_ranks.py).
int report_main(const std::vector<std::string>& args) {
  if (wants_cross_rank(args)) {
    std::vector<std::string> rest;
    for (const std::string& arg : args) {
      if (arg != "--ranks") rest.push_back(arg);
    }
    return run_ranks_tool("profagent_ranks.py", rest);
  }
  std::string error;
  const auto options = profagent::report::parse_report_arguments(args, error);
  if (!options) {
    say(error);
    return 2;
  }
  if (options->help) return std::fputs(profagent::report::kReportHelp, stdout), 0;
  return profagent::report::run_report(*options);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "report") return report_main({argv + 2, argv + argc});
  if (argc > 1 && std::string(argv[1]) == "merge") return run_ranks_tool("profagent_merge.py", {argv + 2, argv + argc});
  if (argc > 1 && std::string(argv[1]) == "trigger") return profagent::launcher::trigger_main({argv + 2, argv + argc});
  std::string error;
  const auto options = profagent::launcher::parse_arguments({argv + 1, argv + argc}, error);
  if (!options) {
    say(error);
    return 2;
  }
  if (options->help) {
    std::fputs(profagent::launcher::help_text().c_str(), stdout);
    return 0;
  }
  const std::string bin = own_directory();
  const std::string agent = find_agent(bin);
  if (!readable(agent)) {
    say("cannot find the agent library at " + agent + " (set PROFAGENT_LIBRARY)");
    return 2;
  }
  if (!set_environment(*options, agent)) return 2;
  const time_t since = time(nullptr) - 1;  // mtime has one-second resolution
  pid_t pid = 0;
  const int code = profagent::launcher::run_and_forward(options->command, pid);
  if (pid > 0) report(*options, pid, code, since);
  return code;
}
