// What profagent itself cost, as the exporters write it: the overhead line under the window's
// table (stderr and table.txt) and summaries, the trace's profagent_overhead object, and the
// profagent track holding the agent's work as slices.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "exporters/exporter.h"
#include "exporters/summaries/overhead_line.h"
#include "synthetic_trace.h"

using namespace profagent;
using namespace profagent::exporters;
using Json = nlohmann::ordered_json;

namespace {

// The sample trace (a 500 us window) with the agent's cost of a known run.
Trace costed_trace() {
  Trace t = test::sample_trace();
  AgentCost& c = t.agent_cost;
  c.measured = true;
  c.record_cost_ps = 25'500;  // 25.5 ns per recorded call
  c.hooked_calls = 2000;      // 51 us
  c.boundary_ns = 4000;       // + 4 us = 55 us: 11 % of the window
  c.agent_cpu_ns = 1'234'567;
  c.memory_bytes = 3 << 20;
  c.slices.push_back({"join window", 4242, t.end_ns + 1000, t.end_ns + 901'000});
  c.slices.push_back({"poll device", 4243, test::kT0 + 100'000, test::kT0 + 130'000});
  return t;
}

const char* const kLine =
    "profagent overhead: ~0.055 ms on the program's threads (11.00 % of the window), 1.235 ms on its own "
    "threads, 3.0 MiB\n";

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

}  // namespace

TEST_CASE("the overhead line says the window's cost in its parts", "[exporters][overhead]") {
  Trace t = costed_trace();
  CHECK(t.agent_cost.program_ns() == 55'000);
  CHECK(overhead_line(t) == kLine);
  t.drops.host_events = 7;
  t.drops.late_device_records = 2;
  CHECK(ends_with(overhead_line(t), "3.0 MiB; 9 records lost\n"));
  t.agent_cost.measured = false;  // a trace another tool wrote
  CHECK(overhead_line(t).empty());
}

TEST_CASE("with device tracing, CUPTI's work in the CUDA calls is part of the program's figure", "[exporters][overhead]") {
  Trace t = costed_trace();
  AgentCost& c = t.agent_cost;
  c.cupti_calls = 1500;
  c.cupti_call_cost_ps = 150'000;  // 150 ns per traced call: 225 us
  CHECK(c.cupti_ns() == 225'000);
  CHECK(c.program_ns() == 280'000);  // 51 + 225 + 4 us: 56 % of the 500 us window
  CHECK(overhead_line(t) ==
        "profagent overhead: ~0.280 ms on the program's threads (56.00 % of the window), of which ~0.225 ms CUPTI, "
        "1.235 ms on its own threads, 3.0 MiB\n");
  c.cupti_call_cost_ps = 0;  // traced, but the probe never ran (a window shorter than the poller's tick)
  CHECK(overhead_line(t) ==
        "profagent overhead: ~0.055 ms on the program's threads (11.00 % of the window), of which CUPTI's share is "
        "not measured, 1.235 ms on its own threads, 3.0 MiB\n");
  c.cupti_calls = 0;  // host-only: no clause
  CHECK(overhead_line(t) == kLine);

  c.cupti_calls = 1500;
  c.cupti_call_cost_ps = 150'000;
  MemorySink sink;
  ExportOptions options;
  options.write_table = options.write_summary = false;
  REQUIRE(export_window(t, options, sink).ok());
  const Json cost = Json::parse(sink.files().begin()->second)["profagent_overhead"];
  CHECK(cost["cupti_call_cost_ps"] == 150'000);
  CHECK(cost["cupti_calls"] == 1500);
  CHECK(cost["cupti_ns"] == 225'000);
  CHECK(cost["program_ns"] == 280'000);
}

TEST_CASE("the table on stderr, table.txt and summary.txt end with the overhead line", "[exporters][overhead]") {
  const Trace t = costed_trace();
  MemorySink sink;
  ExportOptions options;
  options.summaries.names = {"overview"};
  const ExportResult result = export_window(t, options, sink);
  REQUIRE(result.ok());
  CHECK(ends_with(result.table, kLine));
  int files = 0;
  for (const auto& [name, text] : sink.files()) {
    if (ends_with(name, ".table.txt") || ends_with(name, ".summary.txt")) {
      INFO(name);
      CHECK(ends_with(text, kLine));
      ++files;
    }
  }
  CHECK(files == 2);
}

TEST_CASE("the trace carries the cost and the agent's work on a profagent track", "[exporters][overhead]") {
  const Trace t = costed_trace();
  MemorySink sink;
  ExportOptions options;
  options.write_table = options.write_summary = false;
  REQUIRE(export_window(t, options, sink).ok());
  const Json doc = Json::parse(sink.files().begin()->second);
  REQUIRE(doc.contains("profagent_overhead"));
  const Json& cost = doc["profagent_overhead"];
  CHECK(cost["record_cost_ps"] == 25'500);
  CHECK(cost["hooked_calls"] == 2000);
  CHECK(cost["boundary_ns"] == 4000);
  CHECK(cost["program_ns"] == 55'000);
  CHECK(cost["agent_cpu_ns"] == 1'234'567);
  CHECK(cost["memory_bytes"] == 3 << 20);

  const uint64_t track = uint64_t(test::kPid) + (1u << 22);
  int slices = 0;
  bool named = false;
  double window_end_ts = 0, join_ts = 0;
  for (const Json& e : doc["traceEvents"]) {
    if (e.value("cat", "") == "profagent") {
      CHECK(e["pid"] == track);
      CHECK(e["ph"] == "X");
      ++slices;
      if (e["name"] == "join window") {
        CHECK(e["tid"] == 4242);
        CHECK(e["dur"].get<double>() == Approx(900.0));
        join_ts = e["ts"].get<double>();
      }
    }
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == track) named = e["args"]["name"] == "profagent";
    if (e["ph"] == "i" && e["name"] == "Record Window End") window_end_ts = e["ts"].get<double>();
  }
  CHECK(slices == 2);
  CHECK(named);
  // The join ran after the window (1 us after its end): it does not move the closing instant.
  CHECK(window_end_ts > 0);
  CHECK(window_end_ts == Approx(join_ts - 1.0).margin(0.001));
}

TEST_CASE("a trace without the agent's cost has neither key nor track", "[exporters][overhead]") {
  const Trace t = test::sample_trace();
  MemorySink sink;
  ExportOptions options;
  options.write_table = options.write_summary = false;
  REQUIRE(export_window(t, options, sink).ok());
  const std::string text = sink.files().begin()->second;
  CHECK(text.find("profagent_overhead") == std::string::npos);
  CHECK(text.find("\"cat\":\"profagent\"") == std::string::npos);
}
