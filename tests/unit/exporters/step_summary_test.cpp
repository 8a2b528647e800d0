// The exit table's per-step part: every step in the table file, at most ~20 lines on stderr.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>

#include "exporters/exporter.h"
#include "exporters/summaries/step_summary.h"
#include "synthetic_trace.h"

using namespace profagent;
using namespace profagent::exporters;

namespace {

// `count` steps of 100 µs, except step `slow` of 900 µs.
Trace stepped_trace(uint64_t count, uint64_t slow) {
  Trace t = test::sample_trace();
  uint64_t at = test::kT0;
  for (uint64_t n = 0; n < count; ++n) {
    const uint64_t length = n == slow ? 900'000 : 100'000;
    t.steps.push_back({n, at, at + length});
    at += length;
  }
  return t;
}

std::size_t count_lines(const std::string& text, const std::string& containing) {
  std::istringstream in(text);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(containing) != std::string::npos;
  return n;
}

}  // namespace

TEST_CASE("5000 steps: stderr gets a summary of at most 20 lines, the file every step", "[exporters][steps]") {
  const Trace t = stepped_trace(5000, 4321);
  MemorySink sink;
  ExportOptions options;
  options.write_trace = options.write_summary = false;
  const ExportResult result = export_window(t, options, sink);
  REQUIRE(result.ok());
  const std::string steps_part = result.table.substr(result.table.find("\nSteps: "));
  CHECK(count_lines(steps_part, "") <= 21);  // the leading blank line and at most 20
  CHECK(steps_part.find("Steps: 5000  step time avg 0.100ms  min 0.100ms  max 0.900ms  total 500.800ms") !=
        std::string::npos);
  CHECK(count_lines(steps_part, "ProfilerStep#") == kBriefFirstSteps + kBriefSlowestSteps);
  CHECK(steps_part.find("ProfilerStep#4321") != std::string::npos);  // the slowest is shown
  CHECK(steps_part.find("4985 more steps") != std::string::npos);
  const std::string& file = sink.files().begin()->second;
  CHECK(count_lines(file, "ProfilerStep#") == 5000);
  CHECK(steps_part.find(sink.files().begin()->first) != std::string::npos);  // says where they are
}

TEST_CASE("a few steps are all printed", "[exporters][steps]") {
  const Trace t = stepped_trace(12, 3);
  CHECK(count_lines(render_step_summary_brief(t, "x.table.txt"), "ProfilerStep#") == 12);
  CHECK(render_step_summary_brief(t, "x.table.txt") == render_step_summary(t));
}
