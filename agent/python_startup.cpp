#include "agent/python_startup.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "agent/config.h"
#include "agent/launcher/unsplit_path.h"
#include "agent/lifecycle.h"
#include "agent/log.h"
#include "collector/process_info.h"
#include "collector/python_frames.h"
#include "collector/python_runtime.h"
#include "hooks/hook.h"  // PROFAGENT_EXPORT

namespace profagent::agent {
namespace {

// The hook's call wrapper is a stable-ABI extension for CPython 3.8 and later, and the hook
// needs audit hooks (3.8).
constexpr unsigned kOldestMinor = 8;

// The executable is a python interpreter ("python3", "python3.12", a venv's python resolves to
// one), not an application that embeds Python.
bool runs_python_executable() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  const char* file = std::strrchr(path, '/');
  return std::strncmp(file != nullptr ? file + 1 : path, "python", 6) == 0;
}

std::vector<std::string> own_arguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> arguments;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = text.find('\0', begin);
    arguments.push_back(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  if (!arguments.empty()) arguments.erase(arguments.begin());
  return arguments;
}

// <folder of this library>/profagent_python, as a path PYTHONPATH cannot split; "" with `why`.
std::string hook_folder(std::string& why) {
  const std::string library = collector::own_library_path();
  if (library.empty()) return why = "this library's path is unknown", std::string();
  const std::string folder = library.substr(0, library.rfind('/')) + "/profagent_python";
  if (access((folder + "/sitecustomize.py").c_str(), R_OK) != 0) {
    return why = folder + "/sitecustomize.py is missing", std::string();
  }
  return launcher::unsplit_path(folder, why);
}

// PYTHONPATH already starts with the folder (set by an older launcher, or by hand).
bool listed_first(const std::string& folder, const char* python_path) {
  if (python_path == nullptr) return false;
  const std::string first = std::string(python_path).substr(0, std::string(python_path).find(':'));
  char a[PATH_MAX], b[PATH_MAX];
  return realpath(first.c_str(), a) != nullptr && realpath(folder.c_str(), b) != nullptr && std::strcmp(a, b) == 0;
}

void leave_alone(const std::string& why) {
  hold_warning("Python hook not started (no phase ranges, no --step-on python steps): " + why);
}

void arrange() {
  bool found = false;
  void* library = collector::python_library(&found);
  if (!found || !runs_python_executable()) return;
  auto* initialized = reinterpret_cast<int (*)()>(collector::python_symbol(library, "Py_IsInitialized"));
  if (initialized == nullptr || initialized() != 0) return;  // already running: too late for start-up
  const collector::PythonVersion version = collector::python_version(library);
  if (version.major != 3 || version.minor < kOldestMinor) {
    return leave_alone(std::string("Python ") + version.text + " is older than 3.8");
  }
  if (const std::string option = python_option_without_hook(own_arguments()); !option.empty()) {
    return leave_alone("python was started with " + option);
  }
  std::string why;
  const std::string folder = hook_folder(why);
  if (folder.empty()) return leave_alone(why);
  const char* current = std::getenv("PYTHONPATH");
  if (listed_first(folder, current)) return;
  setenv("PYTHONPATH", python_path_with(folder, current).c_str(), 1);
}

}  // namespace

void arrange_python_hook() noexcept {
  if (state() != AgentState::Ready || !config().python_hook) return;
  try {
    arrange();
  } catch (...) {  // out of memory at load: Python starts without the hook, its environment untouched
    log(LogLevel::Warn, "Python hook not started: out of memory at start-up");
  }
}

}  // namespace profagent::agent

// The Python hook's start-up check of the layout Python frames are read with
// (collector/python_frames.h), through its call wrapper (agent/python/profagent_ranges.c), with
// the GIL held. Only when stacks are recorded (no frame is read otherwise). 1: frames are given.
PROFAGENT_EXPORT int profagent_check_python_frames(const uintptr_t* codes, int count, int line,
                                                   const char* function) noexcept {
  using namespace profagent::agent;
  if (state() != AgentState::Ready || !config().with_stack || codes == nullptr || count <= 0 || function == nullptr) {
    return 0;
  }
  return profagent::collector::check_python_frames(codes, size_t(count), line, function) ? 1 : 0;
}
