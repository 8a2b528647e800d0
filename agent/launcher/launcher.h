// The `profagent` command: `profagent run [options] -- CMD ARGS...` runs CMD with
// libprofagent.so preloaded and the PROFAGENT_* variables its options say, returns CMD's exit
// code, and says which files were written. Pure parts (option parsing, environment
// building) are here so unit tests can reach them; main.cpp does the process work.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace profagent::launcher {

struct Options {
  bool help = false;
  std::map<std::string, std::string> variables;  // PROFAGENT_* to set
  std::string output_dir;                        // --output-dir (empty: the agent's default)
  // The Python start-up hook on PYTHONPATH (phase ranges; steps with --step-on python);
  // off with --no-python-hook.
  bool python_hook = true;
  bool python_steps = false;                     // --step-on includes python
  std::vector<std::string> command;
};

// Parses argv[1..]; on a bad command line returns nullopt and sets `error` (one line).
std::optional<Options> parse_arguments(const std::vector<std::string>& args, std::string& error);

// `value` prepended to a ':'-separated list (or alone when the list is empty).
std::string prepend_path(const std::string& value, const char* list);

// `profagent --help`.
const std::string& help_text();

}  // namespace profagent::launcher
