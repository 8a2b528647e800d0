// "profagent_cpu_times" in trace.json: the window's CPU times, with `ns` on the clock of
// baseTimeNanoseconds + ts, and no key at all when they were not read.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "exporters/exporter.h"
#include "synthetic_trace.h"

using namespace profagent;
using namespace profagent::exporters;
using Json = nlohmann::ordered_json;

namespace {

Json trace_json(const Trace& t) {
  MemorySink sink;
  ExportOptions options;
  options.write_table = options.write_summary = false;
  REQUIRE(export_window(t, options, sink).ok());
  REQUIRE(sink.files().size() == 1);
  return Json::parse(sink.files().begin()->second);
}

CpuTimes times(uint64_t ns, uint64_t process, uint64_t busy, uint64_t idle) {
  CpuTimes c;
  c.valid = true, c.ns = ns, c.process_ns = process, c.system_busy_ns = busy, c.system_idle_ns = idle, c.cpus = 8;
  return c;
}

}  // namespace

TEST_CASE("profagent_cpu_times holds both ends, ns placed as the events are", "[exporters][cpu_times]") {
  Trace t = test::sample_trace();
  t.cpu_start = times(test::kT0 - 1000, 11, 22, 33);   // read just before the first event
  t.cpu_end = times(test::kT0 + 500'000, 44, 55, 66);  // at the window's end
  const Json doc = trace_json(t);
  REQUIRE(doc.contains("profagent_cpu_times"));
  const Json& cpu = doc["profagent_cpu_times"];
  CHECK(cpu["start"]["process_ns"] == 11);
  CHECK(cpu["start"]["system_busy_ns"] == 22);
  CHECK(cpu["start"]["system_idle_ns"] == 33);
  CHECK(cpu["start"]["cpus"] == 8);
  CHECK(cpu["end"]["process_ns"] == 44);
  CHECK(cpu["end"]["system_busy_ns"] == 55);
  CHECK(cpu["end"]["system_idle_ns"] == 66);
  // Unix ns: the same clock as baseTimeNanoseconds + ts (µs) * 1000.
  const uint64_t unix_t0 = uint64_t(int64_t(test::kT0) + test::kUnixOffset);
  CHECK(cpu["start"]["ns"].get<uint64_t>() == unix_t0 - 1000);
  CHECK(cpu["end"]["ns"].get<uint64_t>() == unix_t0 + 500'000);
  const uint64_t base = doc["baseTimeNanoseconds"];
  double first_ts = 1e300;
  for (const Json& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "aten::mm") first_ts = e["ts"].get<double>();
  }
  CHECK(double(base) + first_ts * 1000 == Approx(double(unix_t0)).margin(1));
  // Next to the other profagent keys, before distributedInfo.
  std::vector<std::string> keys;
  for (const auto& item : doc.items()) keys.push_back(item.key());
  const auto at = std::find(keys.begin(), keys.end(), "profagent_cpu_times");
  REQUIRE(at != keys.end());
  CHECK(*(at - 1) == "profagent_window");
  CHECK(*(at + 1) == "distributedInfo");
}

TEST_CASE("profagent_cpu_times is left out unless both ends were read", "[exporters][cpu_times]") {
  Trace t = test::sample_trace();
  CHECK_FALSE(trace_json(t).contains("profagent_cpu_times"));
  t.cpu_start = times(test::kT0, 1, 2, 3);
  CHECK_FALSE(trace_json(t).contains("profagent_cpu_times"));
  t.cpu_end = times(test::kT0 + 10, 1, 2, 3);
  t.cpu_start.valid = false;
  CHECK_FALSE(trace_json(t).contains("profagent_cpu_times"));
}
