// Config: every PROFAGENT_* variable, read once at start-up into one immutable struct. Defaults are
// the member initializers; parsing is forgiving (1/true/yes/on, 0/false/no/off, any case) and a bad
// value gives ONE warning naming the variable and the default that is used instead. The effective
// values go into the trace metadata through to_pairs(), so a trace always says how it was taken.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "collector/log.h"
#include "collector/window_wait.h"
#include "exporters/summaries/table_defaults.h"
#include "exporters/trace_format.h"

namespace profagent::agent {

enum class CuptiMode : uint8_t { Auto, On, Off };

// What a forked (not exec'd) child records: its own CPU-side calls into its own file named
// with its pid (Light), or nothing at all (Off). Never the parent's buffers.
enum class ChildPolicy : uint8_t { Light, Off };

using collector::LogLevel;  // PROFAGENT_LOG_LEVEL: the one logger's levels

struct Config {
  std::string output_dir = "./profagent_out";
  // PROFAGENT_TRACE_FORMAT: json (default), json.gz, perfetto, or several ("json,perfetto").
  exporters::TraceFormats trace_formats;

  // Step schedule as torch.profiler.schedule (stored only; the session applies it).
  bool schedule_given = false;  // any schedule variable set: otherwise the run is one window
  uint64_t skip_first = 0;
  uint64_t wait = 0;
  uint64_t warmup = 0;
  uint64_t active = 1;
  uint64_t repeat = 0;
  std::string step_on;          // what marks a step without code changes (stored as given)
  // PROFAGENT_ON_DEMAND: record nothing until `profagent trigger` asks for steps, through a
  // Unix socket the agent opens at the process's first CUDA call (agent/trigger_server.h).
  bool on_demand = false;
  // How long a window's join waits for the device work issued in the window (up to
  // kMaxWindowWaitMs); what has not come by then is counted as late (collector/session.h).
  uint32_t window_wait_ms = collector::kDefaultWindowWaitMs;
  // PROFAGENT_PARTIAL_INTERVAL_MS: how often the window being recorded is appended to its
  // crash-safe <stem>.trace.json.partial (agent/partial_writer.h); 0: never.
  uint32_t partial_interval_ms = 10000;
  // PROFAGENT_STREAM_AFTER_MB: host events buffered (MiB) past which the window being recorded
  // is streamed (collector/segment_stream.h); 0: half of buffer_mb.
  uint32_t stream_after_mb = 0;
  size_t stream_after_bytes() const { return size_t(stream_after_mb ? stream_after_mb : (buffer_mb + 1) / 2) << 20; }

  bool activity_cpu = true;     // PROFAGENT_ACTIVITIES=cpu,cuda
  bool activity_cuda = true;
  bool record_shapes = false;
  bool profile_memory = false;
  bool with_stack = false;
  uint32_t stack_depth = 32;    // PROFAGENT_STACK_DEPTH: frames kept per call stack (1..64)

  std::string sort_by = std::string(exporters::kDefaultSortKey);
  int64_t row_limit = exporters::kDefaultRowLimit;  // -1: no limit (as key_averages().table())
  bool group_by_input_shape = false;  // PROFAGENT_GROUP_BY=input_shape: Input Shapes column
  uint32_t group_by_stack_n = 0;      // PROFAGENT_GROUP_BY=stack_n:N: Source Location, N frames

  // PROFAGENT_SUMMARIES: the summaries written per window as <stem>.summary.txt (names as
  // `profagent report --summary`); empty: none. Default: all but key_averages (<stem>.table.txt).
  std::vector<std::string> summaries = default_summaries();
  std::string fp_point;         // PROFAGENT_FP_POINT: the step trace's FP operator ("" = detect)
  std::string bp_point;         // PROFAGENT_BP_POINT

  LogLevel log_level = LogLevel::Warn;
  CuptiMode cupti = CuptiMode::Auto;
  std::string cupti_lib;        // explicit libcupti path; empty: search
  uint32_t buffer_mb = 256;     // host event arena per process (collector default)
  // Size limits per window (collector/window_limits.h); 0: none.
  uint64_t max_events = 0;        // PROFAGENT_MAX_EVENTS: the window's first N host events
  uint64_t min_duration_us = 0;   // PROFAGENT_MIN_DURATION_US: shorter host calls left out
  ChildPolicy child = ChildPolicy::Light;  // PROFAGENT_CHILD=light|off
  // Opt-in (by default the agent touches no signal; they belong to the program): on
  // SIGTERM/SIGINT the trace is written, then the previous action runs (agent/signals.h).
  bool handle_signals = false;
  // On by default: a program that crashes (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) leaves the
  // trace recorded until then, and dies as it would have (agent/crash_signals.h).
  bool handle_crashes = true;
  // A CPython interpreter started under the agent gets the Python hook (phase ranges, steps
  // with PROFAGENT_STEP_ON=python) through PYTHONPATH (agent/python_startup.h); off: left alone.
  bool python_hook = true;

  static std::vector<std::string> default_summaries();

  // The effective configuration as (PROFAGENT_ variable, value) pairs.
  std::vector<std::pair<std::string, std::string>> to_pairs() const;
};

// Reads a variable; returns nullptr when it is not set.
using EnvLookup = std::function<const char*(const char*)>;

// Builds a Config from `lookup`; each rejected value appends one warning to `warnings`.
Config parse_config(const EnvLookup& lookup, std::vector<std::string>& warnings);

// parse_config over secure_getenv (nothing is read in secure-execution mode).
Config load_config(std::vector<std::string>& warnings);

}  // namespace profagent::agent
