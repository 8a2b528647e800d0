#include <charconv>
#include <cstdint>

#include "agent/launcher/launcher.h"
#include "exporters/trace_format.h"
#include "collector/window_wait.h"

namespace profagent::launcher {
namespace {

struct CountOption {
  const char* flag;
  const char* variable;
  uint64_t minimum;
};
constexpr CountOption kCounts[] = {
    {"--skip-first", "PROFAGENT_SKIP_FIRST", 0}, {"--wait", "PROFAGENT_WAIT", 0},
    {"--warmup", "PROFAGENT_WARMUP", 0},         {"--active", "PROFAGENT_ACTIVE", 1},
    {"--repeat", "PROFAGENT_REPEAT", 0},         {"--window-wait-ms", "PROFAGENT_WINDOW_WAIT_MS", 0},
    {"--max-events", "PROFAGENT_MAX_EVENTS", 0}, {"--min-duration-us", "PROFAGENT_MIN_DURATION_US", 0},
};

bool whole_number(const std::string& text, uint64_t minimum) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc{} && end == text.data() + text.size() && value >= minimum;
}

bool has_python_item(const std::string& spec) {
  size_t begin = 0;
  while (begin <= spec.size()) {
    size_t end = spec.find(',', begin);
    if (end == std::string::npos) end = spec.size();
    std::string item = spec.substr(begin, end - begin);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item == "python") return true;
    begin = end + 1;
  }
  return false;
}

// Applies `flag value`; false with `error` set when either is wrong.
bool apply(const std::string& flag, const std::string& value, Options& options, std::string& error) {
  for (const CountOption& count : kCounts) {
    if (flag != count.flag) continue;
    if (!whole_number(value, count.minimum)) {
      error = flag + " needs a whole number >= " + std::to_string(count.minimum) + ", got '" + value + "'";
      return false;
    }
    options.variables[count.variable] = value;
    return true;
  }
  if (flag == "--step-on") {
    options.variables["PROFAGENT_STEP_ON"] = value;
    options.python_steps = has_python_item(value);
    return true;
  }
  if (flag == "--format") {
    exporters::TraceFormats formats;
    if (!exporters::parse_trace_formats(value, formats)) {
      error = "--format needs json, json.gz or perfetto (or several, comma-separated), got '" + value + "'";
      return false;
    }
    options.variables["PROFAGENT_TRACE_FORMAT"] = value;
    return true;
  }
  if (flag == "--output-dir") {
    options.variables["PROFAGENT_OUTPUT_DIR"] = options.output_dir = value;
    return true;
  }
  error = "unknown option " + flag + " (see profagent --help)";
  return false;
}

// Parses the options after "run" up to the command; returns the index of the command.
size_t parse_run_options(const std::vector<std::string>& args, size_t i, Options& options,
                         std::string& error) {
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") return i + 1;
    if (arg == "-h" || arg == "--help") return options.help = true, args.size();
    if (arg.rfind("--", 0) != 0) return i;  // the command starts
    if (arg == "--no-python-hook") {
      options.python_hook = false;
      options.variables["PROFAGENT_PYTHON_HOOK"] = "off";
      continue;
    }
    if (arg == "--on-demand") {
      options.variables["PROFAGENT_ON_DEMAND"] = "1";
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      error = flag + " needs a value";
      return 0;
    }
    if (!apply(flag, value, options, error)) return 0;
  }
  return i;
}

}  // namespace

std::optional<Options> parse_arguments(const std::vector<std::string>& args, std::string& error) {
  Options options;
  if (args.empty()) {
    error = "no command given (see profagent --help)";
    return std::nullopt;
  }
  if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    options.help = true;
    return options;
  }
  if (args[0] != "run") {
    error = "unknown command '" + args[0] + "': the commands are 'run', 'report' and 'trigger' (see profagent --help)";
    return std::nullopt;
  }
  const size_t command = parse_run_options(args, 1, options, error);
  if (!error.empty()) return std::nullopt;
  if (options.help) return options;
  if (options.python_steps && !options.python_hook) {
    error = "--step-on python needs the Python hook: drop --no-python-hook";
    return std::nullopt;
  }
  options.command.assign(args.begin() + long(command), args.end());
  if (options.command.empty()) {
    error = "no program to run after the options (profagent run [options] -- CMD ARGS...)";
    return std::nullopt;
  }
  return options;
}

std::string prepend_path(const std::string& value, const char* list) {
  if (list == nullptr || *list == '\0') return value;
  return value + ":" + list;
}

const std::string& help_text() {
  static const std::string text = R"(profagent: profile a CUDA program without changing it.

usage: profagent run [options] [--] CMD [ARGS...]
       profagent report [options] PATH...   (summaries of saved traces: profagent report --help)
       profagent merge DIR [-o OUT]         (the per-rank traces of DIR as one trace)
       profagent trigger PID|--all [--steps N] [--output-dir DIR]
                                            (trace a process started with --on-demand)
       profagent --help

Runs CMD with libprofagent.so preloaded (LD_PRELOAD, prepended to any existing one) and
named in CUDA_INJECTION64_PATH unless another tool set it (then device tracing is off), so
driver-API-only and statically linked CUDA programs are traced too, and in
NVTX_INJECTION64_PATH unless another tool set it, so every NVTX range is recorded. CMD's
exit code is returned (128+N if a signal N killed it). When CMD ends, the files written are
listed: per window <host>.<pid>.w<N>[.steps<a>-<b>].trace.json (open in ui.perfetto.dev or
chrome://tracing), .table.txt (torch.profiler-style table), .summary.txt (Paddle's and
MindInsight's summaries; PROFAGENT_SUMMARIES chooses them, `off`: none) and .summary.ndjson.

Which steps are recorded, as torch.profiler.schedule (steps count from 0):
  --skip-first N   ignore the first N steps                     (PROFAGENT_SKIP_FIRST)
  --wait N         then, in each cycle, N idle steps              (PROFAGENT_WAIT)
  --warmup N       then N steps traced but thrown away            (PROFAGENT_WARMUP)
  --active N       then N recorded steps (N >= 1); the window is
                   written after the last of them                 (PROFAGENT_ACTIVE)
  --repeat N       at most N cycles (0: for the whole run)        (PROFAGENT_REPEAT)
Without any of these the whole run is one window, written at exit.
  --on-demand      record nothing until `profagent trigger PID` asks for the next
                   steps (profagent trigger --help)          (PROFAGENT_ON_DEMAND)
  --window-wait-ms N  how long a window waits, after its last step, for the device
                   work issued in it (default )" + std::to_string(collector::kDefaultWindowWaitMs) + R"(); what has not come by then is
                   counted as late, never put into another window (PROFAGENT_WINDOW_WAIT_MS)

What marks a step (--step-on SPEC, comma-separated, one or more; PROFAGENT_STEP_ON):
  api:NAME         each call of the CUDA runtime or driver function NAME, e.g.
                   api:cudaDeviceSynchronize, api:cuLaunchKernel
  kernel:REGEX     each launch of a kernel whose demangled name matches REGEX
  range:REGEX      each profagent_range_push whose name matches REGEX
                   (REGEX: RE2 syntax, searched anywhere in the first 16 KiB of the name)
  profiler-api     the program's cudaProfilerStart/cudaProfilerStop delimit the windows
  python           each torch.optim.Optimizer.step() of a Python program (marked by the
                   Python hook below, after the step returned; the script is not edited)
  time:MS          a step every MS milliseconds
The program may also call profagent_step() itself (C, or ctypes.CDLL(None).profagent_step).
A marker ends the step AFTER the marking call returned: that call belongs to the step it ends.

Python programs (also under plain LD_PRELOAD): the agent puts a start-up hook first on
PYTHONPATH of each Python interpreter it starts in; the hook takes itself off again (PYTHONPATH,
sys.path, children), hides the agent's own variables from os.environ and runs the
sitecustomize Python would have run. When the program imports torch it marks the training
phases with ranges named
as torch.profiler's own annotations, which the summaries read as Dataloader, Forward,
Backward and Optimization:
  enumerate(DataLoader)#<Iter>.__next__   each DataLoader iteration
  nn.Module: <Class>                      the outermost nn.Module call (nested ones are not)
  autograd.backward#Tensor.backward       loss.backward() (and
                                          autograd.backward#torch.autograd.backward)
  Optimizer.step#<Class>.step, Optimizer.zero_grad#<Class>.zero_grad
Return values and exceptions are the program's own; torch is not imported by the hook.
  --no-python-hook leave PYTHONPATH alone: no phase ranges (and no --step-on python)
                   (PROFAGENT_PYTHON_HOOK=off)

Output:
  --output-dir DIR where the files go (default ./profagent_out) (PROFAGENT_OUTPUT_DIR)
  --format F       the trace's format: json (default), json.gz, perfetto, or several
                   comma-separated (PROFAGENT_TRACE_FORMAT)
  --max-events N   each window keeps its first N host events (those that ended first) and
                   the device work started by then; the rest is counted in the trace's
                   profagent_drops and said once (0: no limit)   (PROFAGENT_MAX_EVENTS)
  --min-duration-us N  host calls, operators and ranges shorter than N us are left out,
                   except those device work is linked to; counted   (PROFAGENT_MIN_DURATION_US)
Other PROFAGENT_* variables in the environment (PROFAGENT_SORT_BY, PROFAGENT_LOG_LEVEL, ...)
are passed through unchanged.

example: record steps 10-12 of a PyTorch training script, one step per optimizer step:
  profagent run --skip-first 10 --active 3 --repeat 1 --step-on python -- python3 train.py
)";
  return text;
}

}  // namespace profagent::launcher
