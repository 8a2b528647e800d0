// Parsing of the PROFAGENT_* variables. Each variable has one small parser that either
// stores a value or returns false; a false gives one warning and keeps the default.
#include "agent/config.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <unistd.h>

#include "exporters/summaries/summaries.h"

namespace profagent::agent {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

bool parse_bool(std::string_view text, bool& out) {
  const std::string word = lower(trim(text));
  if (word == "1" || word == "true" || word == "yes" || word == "on") return out = true, true;
  if (word == "0" || word == "false" || word == "no" || word == "off") return out = false, true;
  return false;
}

template <typename Int>
bool parse_int(std::string_view text, Int& out, Int min, Int max) {
  text = trim(text);
  Int value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < min || value > max) return false;
  out = value;
  return true;
}

bool parse_count(std::string_view text, uint64_t& out) {
  return parse_int<uint64_t>(text, out, 0, uint64_t(1) << 53);
}

// "skip_first=10,wait=5,warmup=1,active=3,repeat=2"; any subset, any order.
bool parse_schedule(std::string_view text, Config& config) {
  Config parsed = config;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string key = lower(trim(item.substr(0, eq)));
    const std::string_view value = item.substr(eq + 1);
    uint64_t* field = key == "skip_first" ? &parsed.skip_first
                      : key == "wait"     ? &parsed.wait
                      : key == "warmup"   ? &parsed.warmup
                      : key == "active"   ? &parsed.active
                      : key == "repeat"   ? &parsed.repeat
                                          : nullptr;
    if (field == nullptr || !parse_count(value, *field)) return false;
  }
  if (parsed.active == 0) return false;
  config = parsed;
  return true;
}

bool parse_activities(std::string_view text, Config& config) {
  bool cpu = false, cuda = false;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string word = lower(trim(text.substr(0, comma)));
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (word == "cpu") cpu = true;
    else if (word == "cuda") cuda = true;
    else return false;
  }
  if (!cpu && !cuda) return false;
  config.activity_cpu = cpu;
  config.activity_cuda = cuda;
  return true;
}

// torch's sort keys (exporters/summaries/tables.h: one list for the agent and the report).
bool parse_sort_by(std::string_view text, std::string& out) {
  const std::string key = lower(trim(text));
  if (!exporters::is_valid_sort_key(key)) return false;
  out = key;
  return true;
}

// As key_averages(group_by_input_shape=True) or (group_by_stack_n=N): exporters::parse_group_by.
bool parse_group_by(std::string_view text, Config& c) {
  exporters::TableOptions table;
  if (!exporters::parse_group_by(text, table)) return false;
  c.group_by_input_shape = table.group_by_input_shape, c.group_by_stack_n = table.group_by_stack_n;
  return true;
}

std::string group_by_text(const Config& c) {
  exporters::TableOptions table;
  table.group_by_input_shape = c.group_by_input_shape, table.group_by_stack_n = c.group_by_stack_n;
  return exporters::group_by_text(table);
}

constexpr std::array<std::string_view, 7> kLevelNames = {"trace", "debug", "info", "warn",
                                                          "error", "critical", "off"};

bool parse_log_level(std::string_view text, LogLevel& out) {
  std::string word = lower(trim(text));
  if (word == "warning") word = "warn";
  if (word == "err") word = "error";
  for (size_t i = 0; i < kLevelNames.size(); ++i) {
    if (kLevelNames[i] == word) return out = LogLevel(i), true;
  }
  return false;
}

bool parse_cupti(std::string_view text, CuptiMode& out) {
  const std::string word = lower(trim(text));
  if (word == "auto") return out = CuptiMode::Auto, true;
  bool enabled = false;
  if (!parse_bool(word, enabled)) return false;
  out = enabled ? CuptiMode::On : CuptiMode::Off;
  return true;
}

bool parse_child(std::string_view text, ChildPolicy& out) {
  const std::string word = lower(trim(text));
  if (word == "light") return out = ChildPolicy::Light, true;
  if (word == "off") return out = ChildPolicy::Off, true;
  return false;
}

bool parse_text(std::string_view text, std::string& out) {
  text = trim(text);
  if (text.empty()) return false;
  out = std::string(text);
  return true;
}

// "off" / "none": no summary file; otherwise the names `profagent report --summary` takes.
bool parse_summaries(std::string_view text, Config& c) {
  const std::string word = lower(trim(text));
  if (word == "off" || word == "none") return c.summaries.clear(), true;
  std::string error;
  std::vector<std::string> names;
  if (!exporters::parse_summary_names(trim(text), names, error) || names.empty()) return false;
  c.summaries = std::move(names);
  return true;
}

std::string summaries_text(const Config& c) {
  if (c.summaries.empty()) return "off";
  std::string text;
  for (const std::string& name : c.summaries) text += (text.empty() ? "" : ",") + name;
  return text;
}

const char* bool_text(bool value) { return value ? "true" : "false"; }

const char* cupti_text(CuptiMode mode) {
  return mode == CuptiMode::Auto ? "auto" : mode == CuptiMode::On ? "on" : "off";
}

std::string activities_text(const Config& config) {
  if (config.activity_cpu && config.activity_cuda) return "cpu,cuda";
  return config.activity_cpu ? "cpu" : "cuda";
}

// One row per variable: its name (after PROFAGENT_), how it is parsed, and how its default
// is described in the warning.
struct Variable {
  const char* suffix;
  bool (*parse)(std::string_view text, Config& config);
  std::string (*shown)(const Config& config);
};

#define PROFAGENT_COUNT_VARIABLE(suffix, field)                                                 \
  Variable {                                                                                    \
    suffix, [](std::string_view t, Config& c) { return parse_count(t, c.field) && (c.schedule_given = true); }, \
        [](const Config& c) { return std::to_string(c.field); }                                 \
  }
#define PROFAGENT_BOOL_VARIABLE(suffix, field)                                                    \
  Variable {                                                                                      \
    suffix, [](std::string_view t, Config& c) { return parse_bool(t, c.field); },                 \
        [](const Config& c) { return std::string(bool_text(c.field)); }                           \
  }

// PROFAGENT_PARTIAL_INTERVAL_MS: 0 (off), or 100 ms to a day.
constexpr uint32_t kMinPartialIntervalMs = 100;
constexpr uint32_t kMaxPartialIntervalMs = 86'400'000;

const std::array<Variable, 34> kVariables = {{
    {"OUTPUT_DIR", [](std::string_view t, Config& c) { return parse_text(t, c.output_dir); },
     [](const Config& c) { return c.output_dir; }},
    {"TRACE_FORMAT", [](std::string_view t, Config& c) { return exporters::parse_trace_formats(t, c.trace_formats); },
     [](const Config& c) { return exporters::trace_formats_text(c.trace_formats); }},
    {"SCHEDULE", [](std::string_view t, Config& c) { return parse_schedule(t, c) && (c.schedule_given = true); },
     [](const Config&) { return std::string("(none)"); }},
    PROFAGENT_COUNT_VARIABLE("SKIP_FIRST", skip_first),
    PROFAGENT_COUNT_VARIABLE("WAIT", wait),
    PROFAGENT_COUNT_VARIABLE("WARMUP", warmup),
    {"ACTIVE",
     [](std::string_view t, Config& c) {
       uint64_t v = 0;
       return parse_int<uint64_t>(t, v, 1, uint64_t(1) << 53) && (c.active = v, c.schedule_given = true);
     },
     [](const Config& c) { return std::to_string(c.active); }},
    PROFAGENT_COUNT_VARIABLE("REPEAT", repeat),
    {"STEP_ON", [](std::string_view t, Config& c) { return parse_text(t, c.step_on); },
     [](const Config& c) { return c.step_on.empty() ? std::string("(none)") : c.step_on; }},
    PROFAGENT_BOOL_VARIABLE("ON_DEMAND", on_demand),
    {"WINDOW_WAIT_MS",
     [](std::string_view t, Config& c) { return parse_int<uint32_t>(t, c.window_wait_ms, 0, collector::kMaxWindowWaitMs); },
     [](const Config& c) { return std::to_string(c.window_wait_ms); }},
    {"PARTIAL_INTERVAL_MS",
     [](std::string_view t, Config& c) {
       return parse_int<uint32_t>(t, c.partial_interval_ms, 0, kMaxPartialIntervalMs) &&
              (c.partial_interval_ms == 0 || c.partial_interval_ms >= kMinPartialIntervalMs);
     },
     [](const Config& c) { return c.partial_interval_ms == 0 ? std::string("0 (off)") : std::to_string(c.partial_interval_ms); }},
    {"STREAM_AFTER_MB", [](std::string_view t, Config& c) { return parse_int<uint32_t>(t, c.stream_after_mb, 0, 65536); },
     [](const Config& c) {
       return c.stream_after_mb == 0 ? "0 (half of PROFAGENT_BUFFER_MB: " + std::to_string(c.stream_after_bytes() >> 20) + ")"
                                     : std::to_string(c.stream_after_mb);
     }},
    {"ACTIVITIES", parse_activities, activities_text},
    PROFAGENT_BOOL_VARIABLE("RECORD_SHAPES", record_shapes),
    PROFAGENT_BOOL_VARIABLE("PROFILE_MEMORY", profile_memory),
    PROFAGENT_BOOL_VARIABLE("WITH_STACK", with_stack),
    {"STACK_DEPTH", [](std::string_view t, Config& c) { return parse_int<uint32_t>(t, c.stack_depth, 1, exporters::kMaxStackFrames); },
     [](const Config& c) { return std::to_string(c.stack_depth); }},
    {"SORT_BY", [](std::string_view t, Config& c) { return parse_sort_by(t, c.sort_by); },
     [](const Config& c) { return c.sort_by; }},
    {"GROUP_BY", parse_group_by, group_by_text},
    {"ROW_LIMIT", [](std::string_view t, Config& c) { return parse_int<int64_t>(t, c.row_limit, -1, INT32_MAX); },
     [](const Config& c) { return std::to_string(c.row_limit); }},
    {"SUMMARIES", parse_summaries, summaries_text},
    {"FP_POINT", [](std::string_view t, Config& c) { return parse_text(t, c.fp_point); },
     [](const Config& c) { return c.fp_point.empty() ? std::string("(detect)") : c.fp_point; }},
    {"BP_POINT", [](std::string_view t, Config& c) { return parse_text(t, c.bp_point); },
     [](const Config& c) { return c.bp_point.empty() ? std::string("(detect)") : c.bp_point; }},
    {"LOG_LEVEL", [](std::string_view t, Config& c) { return parse_log_level(t, c.log_level); },
     [](const Config& c) { return std::string(kLevelNames[size_t(c.log_level)]); }},
    {"CUPTI", [](std::string_view t, Config& c) { return parse_cupti(t, c.cupti); },
     [](const Config& c) { return std::string(cupti_text(c.cupti)); }},
    {"CUPTI_LIB", [](std::string_view t, Config& c) { return parse_text(t, c.cupti_lib); },
     [](const Config& c) { return c.cupti_lib.empty() ? std::string("(search)") : c.cupti_lib; }},
    {"BUFFER_MB", [](std::string_view t, Config& c) { return parse_int<uint32_t>(t, c.buffer_mb, 1, 65536); },
     [](const Config& c) { return std::to_string(c.buffer_mb); }},
    {"MAX_EVENTS", [](std::string_view t, Config& c) { return parse_count(t, c.max_events); },
     [](const Config& c) { return c.max_events == 0 ? std::string("0 (no limit)") : std::to_string(c.max_events); }},
    {"MIN_DURATION_US", [](std::string_view t, Config& c) { return parse_int<uint64_t>(t, c.min_duration_us, 0, 3'600'000'000); },
     [](const Config& c) { return std::to_string(c.min_duration_us); }},
    {"CHILD", [](std::string_view t, Config& c) { return parse_child(t, c.child); },
     [](const Config& c) { return std::string(c.child == ChildPolicy::Off ? "off" : "light"); }},
    PROFAGENT_BOOL_VARIABLE("HANDLE_SIGNALS", handle_signals),
    PROFAGENT_BOOL_VARIABLE("HANDLE_CRASHES", handle_crashes),
    PROFAGENT_BOOL_VARIABLE("PYTHON_HOOK", python_hook),
}};

#undef PROFAGENT_COUNT_VARIABLE
#undef PROFAGENT_BOOL_VARIABLE

}  // namespace

Config parse_config(const EnvLookup& lookup, std::vector<std::string>& warnings) {
  Config config;
  std::string name;
  name.reserve(48);  // one buffer for every name (most are longer than the string's inline room)
  for (const Variable& variable : kVariables) {
    name.assign("PROFAGENT_").append(variable.suffix);
    const char* value = lookup(name.c_str());
    if (value == nullptr) continue;
    Config attempt = config;  // a failed parse must not leave half a value behind
    if (variable.parse(value, attempt)) {
      config = std::move(attempt);
    } else {
      // Never echo the value itself (environment values may be secrets; logs never carry them).
      warnings.push_back(name + " has an invalid value; using the default (" + variable.shown(config) + ")");
    }
  }
  return config;
}

namespace {

// A relative output directory (the default ./profagent_out included) is resolved once, against
// the working directory at start-up: a program that chdir()s later (a daemon's chdir("/"))
// still writes where it was started, not into /profagent_out.
void anchor_output_dir(Config& config, std::vector<std::string>& warnings) {
  std::string_view dir = config.output_dir;
  if (dir.empty() || dir.front() == '/') return;
  while (dir.size() > 2 && dir.substr(0, 2) == "./") dir.remove_prefix(2);
  char* cwd = getcwd(nullptr, 0);  // glibc allocates any length
  if (cwd == nullptr) {
    warnings.push_back("the working directory cannot be read; PROFAGENT_OUTPUT_DIR is taken relative to the "
                       "working directory at exit");
    return;
  }
  const std::string base(cwd);
  free(cwd);
  config.output_dir = (base == "/" ? "" : base) + "/" + std::string(dir);
}

// The environment's PROFAGENT_* entries ("NAME=value"), found in one pass: a getenv per name
// compared each of the 34 names with every variable of the environment (~12 k instructions at
// every process's start-up, also in one that never uses CUDA). Read as secure_getenv reads it:
// a process in secure-execution mode never gets here (agent/lifecycle.cpp).
std::vector<const char*> profagent_entries() {
  std::vector<const char*> found;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "PROFAGENT_", 10) == 0) found.push_back(*entry);
  }
  return found;
}

}  // namespace

Config load_config(std::vector<std::string>& warnings) {
  const std::vector<const char*> entries = profagent_entries();
  auto lookup = [&entries](const char* name) -> const char* {
    const size_t length = std::strlen(name);
    for (const char* entry : entries) {  // the first one, as getenv
      if (std::strncmp(entry, name, length) == 0 && entry[length] == '=') return entry + length + 1;
    }
    return nullptr;
  };
  Config config = parse_config(lookup, warnings);
  anchor_output_dir(config, warnings);
  return config;
}

std::vector<std::string> Config::default_summaries() {
  std::vector<std::string> names;
  for (std::string_view name : exporters::kSummaryNames) {
    if (name != "key_averages") names.emplace_back(name);  // already <stem>.table.txt
  }
  return names;
}

std::vector<std::pair<std::string, std::string>> Config::to_pairs() const {
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const Variable& variable : kVariables) {
    if (std::string_view(variable.suffix) == "SCHEDULE") continue;  // its parts are listed
    pairs.emplace_back(std::string("PROFAGENT_") + variable.suffix, variable.shown(*this));
  }
  return pairs;
}

}  // namespace profagent::agent
