// Config parsing, table-driven: each row sets some PROFAGENT_* variables and says what the
// Config must hold and how many warnings (each naming its variable) must come out.
#define CATCH_CONFIG_MAIN
#include <algorithm>
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "agent/config.h"

using profagent::agent::Config;
using profagent::agent::CuptiMode;
using profagent::agent::LogLevel;

namespace {

using Env = std::map<std::string, std::string>;

Config parse(const Env& env, std::vector<std::string>& warnings) {
  return profagent::agent::parse_config(
      [&](const char* name) -> const char* {
        auto found = env.find(name);
        return found == env.end() ? nullptr : found->second.c_str();
      },
      warnings);
}

struct Row {
  const char* what;
  Env env;
  std::function<bool(const Config&)> holds;
  size_t warnings;
};

}  // namespace

TEST_CASE("no variable set gives the documented defaults and no warning") {
  std::vector<std::string> warnings;
  const Config config = parse({}, warnings);
  CHECK(warnings.empty());
  CHECK(config.output_dir == "./profagent_out");
  CHECK_FALSE(config.schedule_given);
  CHECK(config.activity_cpu);
  CHECK(config.activity_cuda);
  CHECK(config.log_level == LogLevel::Warn);
  CHECK(config.cupti == CuptiMode::Auto);
  CHECK(config.sort_by == "cuda_time_total");
  CHECK(config.row_limit == 100);
}

TEST_CASE("each variable is parsed forgivingly, and a bad value keeps the default with one warning") {
  const std::vector<Row> rows = {
      {"output dir", {{"PROFAGENT_OUTPUT_DIR", "/tmp/x"}}, [](auto& c) { return c.output_dir == "/tmp/x"; }, 0},
      {"empty output dir", {{"PROFAGENT_OUTPUT_DIR", " "}}, [](auto& c) { return c.output_dir == "./profagent_out"; }, 1},
      {"trace formats", {{"PROFAGENT_TRACE_FORMAT", " Perfetto, json.GZ "}},
       [](auto& c) { return profagent::exporters::trace_formats_text(c.trace_formats) == "json.gz,perfetto"; }, 0},
      {"unknown trace format", {{"PROFAGENT_TRACE_FORMAT", "json,protobuf"}},
       [](auto& c) { return profagent::exporters::trace_formats_text(c.trace_formats) == "json"; }, 1},
      {"schedule string", {{"PROFAGENT_SCHEDULE", "skip_first=10,wait=5,warmup=1,active=3,repeat=2"}},
       [](auto& c) { return c.schedule_given && c.skip_first == 10 && c.wait == 5 && c.warmup == 1 && c.active == 3 && c.repeat == 2; }, 0},
      {"schedule with spaces and any case", {{"PROFAGENT_SCHEDULE", " WAIT = 2 , active=4 "}},
       [](auto& c) { return c.wait == 2 && c.active == 4 && c.skip_first == 0; }, 0},
      {"schedule unknown key", {{"PROFAGENT_SCHEDULE", "wait=1,sleep=2"}},
       [](auto& c) { return !c.schedule_given && c.wait == 0; }, 1},
      {"schedule active=0 is rejected", {{"PROFAGENT_SCHEDULE", "active=0"}}, [](auto& c) { return c.active == 1; }, 1},
      {"separate variables override the string", {{"PROFAGENT_SCHEDULE", "wait=5,active=2"}, {"PROFAGENT_WAIT", "7"}},
       [](auto& c) { return c.wait == 7 && c.active == 2; }, 0},
      {"warmup alone sets a schedule", {{"PROFAGENT_WARMUP", "3"}}, [](auto& c) { return c.schedule_given && c.warmup == 3; }, 0},
      {"negative count", {{"PROFAGENT_SKIP_FIRST", "-1"}}, [](auto& c) { return c.skip_first == 0 && !c.schedule_given; }, 1},
      {"count with junk", {{"PROFAGENT_REPEAT", "3x"}}, [](auto& c) { return c.repeat == 0; }, 1},
      {"active 0", {{"PROFAGENT_ACTIVE", "0"}}, [](auto& c) { return c.active == 1 && !c.schedule_given; }, 1},
      {"step_on stored", {{"PROFAGENT_STEP_ON", "cudaGraphLaunch"}}, [](auto& c) { return c.step_on == "cudaGraphLaunch"; }, 0},
      {"activities cpu only", {{"PROFAGENT_ACTIVITIES", "CPU"}}, [](auto& c) { return c.activity_cpu && !c.activity_cuda; }, 0},
      {"activities both, spaced", {{"PROFAGENT_ACTIVITIES", "cuda , cpu"}}, [](auto& c) { return c.activity_cpu && c.activity_cuda; }, 0},
      {"activities unknown", {{"PROFAGENT_ACTIVITIES", "cpu,xpu"}}, [](auto& c) { return c.activity_cpu && c.activity_cuda; }, 1},
      {"activities empty", {{"PROFAGENT_ACTIVITIES", ""}}, [](auto& c) { return c.activity_cpu && c.activity_cuda; }, 1},
      {"booleans yes/On/1", {{"PROFAGENT_RECORD_SHAPES", "yes"}, {"PROFAGENT_PROFILE_MEMORY", "On"}, {"PROFAGENT_WITH_STACK", "1"}},
       [](auto& c) { return c.record_shapes && c.profile_memory && c.with_stack; }, 0},
      {"booleans no/FALSE/off", {{"PROFAGENT_RECORD_SHAPES", "no"}, {"PROFAGENT_PROFILE_MEMORY", "FALSE"}, {"PROFAGENT_WITH_STACK", "off"}},
       [](auto& c) { return !c.record_shapes && !c.profile_memory && !c.with_stack; }, 0},
      {"boolean garbage", {{"PROFAGENT_WITH_STACK", "maybe"}}, [](auto& c) { return !c.with_stack; }, 1},
      {"stack depth", {{"PROFAGENT_STACK_DEPTH", "48"}}, [](auto& c) { return c.stack_depth == 48; }, 0},
      {"stack depth above 64", {{"PROFAGENT_STACK_DEPTH", "65"}}, [](auto& c) { return c.stack_depth == 32; }, 1},
      {"stack depth 0", {{"PROFAGENT_STACK_DEPTH", "0"}}, [](auto& c) { return c.stack_depth == 32; }, 1},
      {"group by stack_n", {{"PROFAGENT_GROUP_BY", "Stack_N:5"}},
       [](auto& c) { return c.group_by_stack_n == 5 && !c.group_by_input_shape; }, 0},
      {"group by stack_n without N", {{"PROFAGENT_GROUP_BY", "stack_n:"}}, [](auto& c) { return c.group_by_stack_n == 0; }, 1},
      {"group by stack_n:0", {{"PROFAGENT_GROUP_BY", "stack_n:0"}}, [](auto& c) { return c.group_by_stack_n == 0; }, 1},
      {"group by input_shape", {{"PROFAGENT_GROUP_BY", "input_shape"}},
       [](auto& c) { return c.group_by_input_shape && c.group_by_stack_n == 0; }, 0},
      {"sort key", {{"PROFAGENT_SORT_BY", "Self_CPU_Time_Total"}}, [](auto& c) { return c.sort_by == "self_cpu_time_total"; }, 0},
      {"sort key unknown", {{"PROFAGENT_SORT_BY", "speed"}}, [](auto& c) { return c.sort_by == "cuda_time_total"; }, 1},
      {"row limit -1", {{"PROFAGENT_ROW_LIMIT", "-1"}}, [](auto& c) { return c.row_limit == -1; }, 0},
      {"row limit -2", {{"PROFAGENT_ROW_LIMIT", "-2"}}, [](auto& c) { return c.row_limit == 100; }, 1},
      {"log level", {{"PROFAGENT_LOG_LEVEL", "DEBUG"}}, [](auto& c) { return c.log_level == LogLevel::Debug; }, 0},
      {"log level off", {{"PROFAGENT_LOG_LEVEL", "off"}}, [](auto& c) { return c.log_level == LogLevel::Off; }, 0},
      {"log level warning alias", {{"PROFAGENT_LOG_LEVEL", "warning"}}, [](auto& c) { return c.log_level == LogLevel::Warn; }, 0},
      {"log level unknown", {{"PROFAGENT_LOG_LEVEL", "loud"}}, [](auto& c) { return c.log_level == LogLevel::Warn; }, 1},
      {"cupti off by boolean", {{"PROFAGENT_CUPTI", "0"}}, [](auto& c) { return c.cupti == CuptiMode::Off; }, 0},
      {"cupti on", {{"PROFAGENT_CUPTI", "on"}}, [](auto& c) { return c.cupti == CuptiMode::On; }, 0},
      {"cupti auto", {{"PROFAGENT_CUPTI", "AUTO"}}, [](auto& c) { return c.cupti == CuptiMode::Auto; }, 0},
      {"cupti unknown", {{"PROFAGENT_CUPTI", "sometimes"}}, [](auto& c) { return c.cupti == CuptiMode::Auto; }, 1},
      {"cupti lib", {{"PROFAGENT_CUPTI_LIB", "/opt/libcupti.so"}}, [](auto& c) { return c.cupti_lib == "/opt/libcupti.so"; }, 0},
      {"buffer size", {{"PROFAGENT_BUFFER_MB", "128"}}, [](auto& c) { return c.buffer_mb == 128; }, 0},
      {"buffer size 0", {{"PROFAGENT_BUFFER_MB", "0"}}, [](auto& c) { return c.buffer_mb == 256; }, 1},
      {"two bad values, two warnings", {{"PROFAGENT_BUFFER_MB", "x"}, {"PROFAGENT_CUPTI", "x"}},
       [](auto& c) { return c.buffer_mb == 256 && c.cupti == CuptiMode::Auto; }, 2},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    std::vector<std::string> warnings;
    const Config config = parse(row.env, warnings);
    CHECK(row.holds(config));
    REQUIRE(warnings.size() == row.warnings);
    for (const std::string& warning : warnings) {
      bool names_a_set_variable = false;
      for (const auto& [name, value] : row.env) {
        if (warning.rfind(name + " ", 0) == 0) names_a_set_variable = true;
      }
      CHECK(names_a_set_variable);
      CHECK(warning.find("default") != std::string::npos);
    }
  }
}

TEST_CASE("a warning names the default it falls back to and never echoes the value") {
  std::vector<std::string> warnings;
  parse({{"PROFAGENT_ROW_LIMIT", "secret-token"}}, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "PROFAGENT_ROW_LIMIT has an invalid value; using the default (100)");
}

TEST_CASE("PROFAGENT_WINDOW_WAIT_MS: milliseconds from 0 to 600000, else one line and the default") {
  std::vector<std::string> warnings;
  CHECK(parse({}, warnings).window_wait_ms == 3000);
  CHECK(parse({{"PROFAGENT_WINDOW_WAIT_MS", "0"}}, warnings).window_wait_ms == 0);
  CHECK(parse({{"PROFAGENT_WINDOW_WAIT_MS", "250"}}, warnings).window_wait_ms == 250);
  CHECK(warnings.empty());
  for (const char* bad : {"-1", "600001", "1.5", "3s", ""}) {
    warnings.clear();
    CHECK(parse({{"PROFAGENT_WINDOW_WAIT_MS", bad}}, warnings).window_wait_ms == 3000);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == "PROFAGENT_WINDOW_WAIT_MS has an invalid value; using the default (3000)");
  }
}

TEST_CASE("PROFAGENT_PARTIAL_INTERVAL_MS: 0 (off) or 100 ms to a day, else one line and the default") {
  std::vector<std::string> warnings;
  CHECK(parse({}, warnings).partial_interval_ms == 10000);
  CHECK(parse({{"PROFAGENT_PARTIAL_INTERVAL_MS", "0"}}, warnings).partial_interval_ms == 0);
  CHECK(parse({{"PROFAGENT_PARTIAL_INTERVAL_MS", "100"}}, warnings).partial_interval_ms == 100);
  CHECK(parse({{"PROFAGENT_PARTIAL_INTERVAL_MS", "86400000"}}, warnings).partial_interval_ms == 86400000);
  CHECK(warnings.empty());
  for (const char* bad : {"-1", "99", "86400001", "1.5", "10s", ""}) {
    warnings.clear();
    CHECK(parse({{"PROFAGENT_PARTIAL_INTERVAL_MS", bad}}, warnings).partial_interval_ms == 10000);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0] == "PROFAGENT_PARTIAL_INTERVAL_MS has an invalid value; using the default (10000)");
  }
}

TEST_CASE("PROFAGENT_STREAM_AFTER_MB: 0 (half of PROFAGENT_BUFFER_MB) or N MiB, else one line and the default") {
  std::vector<std::string> warnings;
  CHECK(parse({}, warnings).stream_after_bytes() == size_t(128) << 20);
  CHECK(parse({{"PROFAGENT_BUFFER_MB", "64"}}, warnings).stream_after_bytes() == size_t(32) << 20);
  CHECK(parse({{"PROFAGENT_BUFFER_MB", "1"}}, warnings).stream_after_bytes() == size_t(1) << 20);
  CHECK(parse({{"PROFAGENT_STREAM_AFTER_MB", "2"}}, warnings).stream_after_bytes() == size_t(2) << 20);
  CHECK(warnings.empty());
  for (const char* bad : {"-1", "65537", "1.5", "2M", ""}) {
    warnings.clear();
    CHECK(parse({{"PROFAGENT_STREAM_AFTER_MB", bad}}, warnings).stream_after_mb == 0);
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].rfind("PROFAGENT_STREAM_AFTER_MB has an invalid value; using the default", 0) == 0);
  }
}

TEST_CASE("to_pairs lists every variable with its effective value") {
  std::vector<std::string> warnings;
  const Config config = parse({{"PROFAGENT_SCHEDULE", "wait=1,active=2"}, {"PROFAGENT_ACTIVITIES", "cuda"}}, warnings);
  std::map<std::string, std::string> pairs;
  for (const auto& [name, value] : config.to_pairs()) pairs[name] = value;
  CHECK(pairs.size() == 33);
  CHECK(pairs["PROFAGENT_TRACE_FORMAT"] == "json");
  CHECK(pairs["PROFAGENT_PARTIAL_INTERVAL_MS"] == "10000");
  CHECK(pairs["PROFAGENT_STREAM_AFTER_MB"] == "0 (half of PROFAGENT_BUFFER_MB: 128)");
  CHECK(pairs["PROFAGENT_SUMMARIES"] == "device,overview,model,distributed,operator,kernel,memory_manipulation,"
                                       "user_defined,perf,step_trace,op_type,memory");
  CHECK(pairs["PROFAGENT_FP_POINT"] == "(detect)");
  CHECK(pairs["PROFAGENT_STACK_DEPTH"] == "32");
  CHECK(pairs["PROFAGENT_GROUP_BY"] == "none");
  CHECK(pairs["PROFAGENT_HANDLE_SIGNALS"] == "false");
  CHECK(pairs["PROFAGENT_HANDLE_CRASHES"] == "true");
  CHECK(pairs["PROFAGENT_PYTHON_HOOK"] == "true");
  CHECK(pairs["PROFAGENT_CHILD"] == "light");
  CHECK(pairs["PROFAGENT_WAIT"] == "1");
  CHECK(pairs["PROFAGENT_ACTIVE"] == "2");
  CHECK(pairs["PROFAGENT_ACTIVITIES"] == "cuda");
  CHECK(pairs["PROFAGENT_OUTPUT_DIR"] == "./profagent_out");
  CHECK(pairs["PROFAGENT_LOG_LEVEL"] == "warn");
  CHECK(pairs["PROFAGENT_CUPTI"] == "auto");
  CHECK(pairs["PROFAGENT_ON_DEMAND"] == "false");
  CHECK(pairs["PROFAGENT_MAX_EVENTS"] == "0 (no limit)");
  CHECK(pairs["PROFAGENT_MIN_DURATION_US"] == "0");
}

TEST_CASE("PROFAGENT_MAX_EVENTS, PROFAGENT_MIN_DURATION_US: counts; a bad value warns and keeps no limit") {
  std::vector<std::string> warnings;
  const Config limited = parse({{"PROFAGENT_MAX_EVENTS", "1000"}, {"PROFAGENT_MIN_DURATION_US", " 5 "}}, warnings);
  CHECK(warnings.empty());
  CHECK(limited.max_events == 1000);
  CHECK(limited.min_duration_us == 5);
  for (const char* bad : {"-1", "x", "", "1e3"}) {
    warnings.clear();
    const Config config = parse({{"PROFAGENT_MAX_EVENTS", bad}, {"PROFAGENT_MIN_DURATION_US", bad}}, warnings);
    CHECK((config.max_events == 0 && config.min_duration_us == 0));
    CHECK(warnings.size() == 2);
  }
}

TEST_CASE("PROFAGENT_CHILD: light (default) or off, anything else warns and keeps light") {
  std::vector<std::string> warnings;
  CHECK(parse({}, warnings).child == profagent::agent::ChildPolicy::Light);
  CHECK(parse({{"PROFAGENT_CHILD", " OFF "}}, warnings).child == profagent::agent::ChildPolicy::Off);
  CHECK(warnings.empty());
  CHECK(parse({{"PROFAGENT_CHILD", "full"}}, warnings).child == profagent::agent::ChildPolicy::Light);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "PROFAGENT_CHILD has an invalid value; using the default (light)");
}

TEST_CASE("PROFAGENT_HANDLE_SIGNALS: off by default, a boolean, anything else warns and keeps off") {
  std::vector<std::string> warnings;
  CHECK_FALSE(parse({}, warnings).handle_signals);
  CHECK(parse({{"PROFAGENT_HANDLE_SIGNALS", "1"}}, warnings).handle_signals);
  CHECK(parse({{"PROFAGENT_HANDLE_SIGNALS", " Yes "}}, warnings).handle_signals);
  CHECK(warnings.empty());
  CHECK_FALSE(parse({{"PROFAGENT_HANDLE_SIGNALS", "sometimes"}}, warnings).handle_signals);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "PROFAGENT_HANDLE_SIGNALS has an invalid value; using the default (false)");
}

TEST_CASE("PROFAGENT_HANDLE_CRASHES: on by default, a boolean, anything else warns and keeps on") {
  std::vector<std::string> warnings;
  CHECK(parse({}, warnings).handle_crashes);
  CHECK_FALSE(parse({{"PROFAGENT_HANDLE_CRASHES", "0"}}, warnings).handle_crashes);
  CHECK_FALSE(parse({{"PROFAGENT_HANDLE_CRASHES", " off "}}, warnings).handle_crashes);
  CHECK(warnings.empty());
  CHECK(parse({{"PROFAGENT_HANDLE_CRASHES", "maybe"}}, warnings).handle_crashes);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "PROFAGENT_HANDLE_CRASHES has an invalid value; using the default (true)");
}

TEST_CASE("PROFAGENT_PYTHON_HOOK: on by default; off leaves Python alone; anything else warns and keeps on") {
  std::vector<std::string> warnings;
  CHECK(parse({}, warnings).python_hook);
  CHECK_FALSE(parse({{"PROFAGENT_PYTHON_HOOK", "off"}}, warnings).python_hook);
  CHECK(warnings.empty());
  CHECK(parse({{"PROFAGENT_PYTHON_HOOK", "later"}}, warnings).python_hook);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "PROFAGENT_PYTHON_HOOK has an invalid value; using the default (true)");
}

TEST_CASE("PROFAGENT_SUMMARIES: names, all, off/none, a bad name warns once and keeps the default") {
  std::vector<std::string> warnings;
  CHECK(parse({}, warnings).summaries == Config::default_summaries());
  const std::vector<std::string> defaults = Config::default_summaries();
  CHECK(defaults.size() == 12);
  CHECK(std::find(defaults.begin(), defaults.end(), "key_averages") == defaults.end());
  // In the printing order whatever the order given.
  CHECK(parse({{"PROFAGENT_SUMMARIES", "perf, device"}}, warnings).summaries ==
        std::vector<std::string>{"device", "perf"});
  CHECK(parse({{"PROFAGENT_SUMMARIES", "all"}}, warnings).summaries.size() == 13);
  CHECK(parse({{"PROFAGENT_SUMMARIES", "OFF"}}, warnings).summaries.empty());
  CHECK(parse({{"PROFAGENT_SUMMARIES", "none"}}, warnings).summaries.empty());
  CHECK(warnings.empty());
  CHECK(parse({{"PROFAGENT_SUMMARIES", "device,bogus"}}, warnings).summaries == Config::default_summaries());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].rfind("PROFAGENT_SUMMARIES has an invalid value; using the default (device,", 0) == 0);
  const Config points = parse({{"PROFAGENT_FP_POINT", "conv1"}, {"PROFAGENT_BP_POINT", " fcBackward "}}, warnings);
  CHECK(points.fp_point == "conv1");
  CHECK(points.bp_point == "fcBackward");
}
