#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "agent/launcher/launcher.h"
#include "agent/step_on.h"
#include "collector/step_markers.h"
#include "exporters/summaries/step_summary.h"

using profagent::agent::parse_step_on;
using profagent::launcher::parse_arguments;

TEST_CASE("PROFAGENT_STEP_ON items of every kind") {
  std::vector<std::string> warnings;
  const auto on = parse_step_on(
      "api:cudaDeviceSynchronize, kernel:^sgemm, range:ProfilerStep#.*,profiler-api,python,time:250",
      warnings);
  CHECK(warnings.empty());
  CHECK(on.markers.apis == std::vector<std::string>{"cudaDeviceSynchronize"});
  CHECK(on.markers.kernels == std::vector<std::string>{"^sgemm"});
  CHECK(on.markers.ranges == std::vector<std::string>{"ProfilerStep#.*"});
  CHECK(on.markers.profiler_api);
  CHECK(on.python);
  CHECK(on.time_ms == 250);
}

TEST_CASE("PROFAGENT_STEP_ON: bad items are one warning naming the variable, the rest is kept") {
  std::vector<std::string> warnings;
  const auto on = parse_step_on("bogus,api:,time:0,time:x,api:cudaGraphLaunch", warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].rfind("PROFAGENT_STEP_ON: 4 items ignored (item 1, 2, 3, 4)", 0) == 0);
  CHECK(warnings[0].find("bogus") == std::string::npos);  // values are not echoed
  CHECK(on.markers.apis == std::vector<std::string>{"cudaGraphLaunch"});
  CHECK(on.time_ms == 0);
}

TEST_CASE("PROFAGENT_STEP_ON time:MS: 1 ms to one day") {
  std::vector<std::string> warnings;
  CHECK(parse_step_on("time:1", warnings).time_ms == 1);
  CHECK(parse_step_on("time:86400000", warnings).time_ms == 86400000);
  CHECK(warnings.empty());
  CHECK(parse_step_on("time:86400001", warnings).time_ms == 0);
  CHECK(parse_step_on("time:18446744073709551615", warnings).time_ms == 0);
  CHECK(warnings.size() == 2);
}

TEST_CASE("PROFAGENT_STEP_ON: 18,000 bad items are still one short line") {
  std::string text;
  for (int i = 0; i < 18000; ++i) text += "x,";
  std::vector<std::string> warnings;
  parse_step_on(text, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("18000 items ignored (item 1, 2, 3, 4, 5 and 17995 more)") != std::string::npos);
  CHECK(warnings[0].size() < 200);
}

TEST_CASE("api:NAME matches the symbol and its per-thread-stream variants only") {
  const std::vector<std::string> apis{"cudaStreamSynchronize"};
  CHECK(profagent::collector::api_name_matches(apis, "cudaStreamSynchronize"));
  CHECK(profagent::collector::api_name_matches(apis, "cudaStreamSynchronize_ptsz"));
  CHECK_FALSE(profagent::collector::api_name_matches(apis, "cudaStreamSynchronizeX"));
  CHECK_FALSE(profagent::collector::api_name_matches(apis, "cudaDeviceSynchronize"));
}

TEST_CASE("launcher: options become variables, the command follows --") {
  std::string error;
  const auto options = parse_arguments({"run", "--skip-first", "10", "--wait=5", "--warmup", "1", "--active", "3",
                                        "--repeat", "2", "--step-on", "api:cudaGraphLaunch, python",
                                        "--output-dir", "out", "--", "python3", "train.py", "--lr", "1"},
                                       error);
  REQUIRE(options);
  CHECK(error.empty());
  CHECK(options->variables.at("PROFAGENT_SKIP_FIRST") == "10");
  CHECK(options->variables.at("PROFAGENT_WAIT") == "5");
  CHECK(options->variables.at("PROFAGENT_ACTIVE") == "3");
  CHECK(options->variables.at("PROFAGENT_OUTPUT_DIR") == "out");
  CHECK(options->python_hook);
  CHECK(options->python_steps);
  CHECK(options->command == std::vector<std::string>{"python3", "train.py", "--lr", "1"});
}

TEST_CASE("launcher: the command may start without --, bad lines are one error") {
  std::string error;
  auto options = parse_arguments({"run", "./app", "--wait", "x"}, error);
  REQUIRE(options);
  CHECK(options->command == std::vector<std::string>{"./app", "--wait", "x"});
  CHECK(options->python_hook);  // every run, unless --no-python-hook
  CHECK_FALSE(options->python_steps);
  options = parse_arguments({"run", "--no-python-hook", "--", "python3", "x.py"}, error);
  REQUIRE(options);
  CHECK_FALSE(options->python_hook);
  CHECK(options->command == std::vector<std::string>{"python3", "x.py"});
  for (std::vector<std::string> bad : {std::vector<std::string>{"run", "--active", "0", "app"},
                                       {"run", "--wait", "-1", "app"}, {"run", "--nope", "1", "app"},
                                       {"run", "--wait"}, {"run"}, {"walk", "app"}, {},
                                       {"run", "--no-python-hook", "--step-on", "python", "app"}}) {
    error.clear();
    CHECK_FALSE(parse_arguments(bad, error));
    CHECK_FALSE(error.empty());
    CHECK(error.find('\n') == std::string::npos);
  }
  CHECK(profagent::launcher::prepend_path("/a.so", "/b.so") == "/a.so:/b.so");
  CHECK(profagent::launcher::prepend_path("/a.so", nullptr) == "/a.so");
}

TEST_CASE("per-step summary: device busy is the union of device intervals inside each step") {
  profagent::Trace trace;
  trace.steps = {{0, 1000, 2000}, {1, 2000, 4000}};
  auto kernel = [](uint64_t start, uint64_t end) {
    profagent::DeviceRecord d;
    d.start_ns = start, d.end_ns = end;
    return d;
  };
  // Step 0: [1100,1500) and an overlapping [1400,1600) are 500 ns, plus the first 100 ns of
  // [1900,2100) that straddles the boundary: 600 of 1000. Step 1: the other 100 ns of it; the
  // Sync record over the whole step counts nothing.
  trace.device = {kernel(1100, 1500), kernel(1400, 1600), kernel(1900, 2100)};
  profagent::DeviceRecord sync = kernel(2000, 4000);
  sync.kind = profagent::DeviceKind::Sync;
  trace.device.push_back(sync);
  const auto figures = profagent::exporters::step_figures(trace);
  REQUIRE(figures.size() == 2);
  CHECK(figures[0].length_ns == 1000);
  CHECK(figures[0].device_busy_ns == 600);
  CHECK(figures[1].device_busy_ns == 100);
  const std::string text = profagent::exporters::render_step_summary(trace);
  CHECK(text.find("Steps: 2") != std::string::npos);
  CHECK(text.find("60.00%") != std::string::npos);
  CHECK(text.find("5.00%") != std::string::npos);
  CHECK(profagent::exporters::render_step_summary(profagent::Trace{}).empty());
}
