// trace.json as Perfetto and HTA read it (notes/trace-format.md §4.1 checklist).
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "exporters/chrome_trace.h"
#include "exporters/exporter.h"
#include "exporters/tables.h"
#include "synthetic_trace.h"

using namespace profagent;
using namespace profagent::exporters;
using Json = nlohmann::ordered_json;

namespace {

std::string trace_text(const Trace& t) {
  MemorySink sink;
  ExportOptions options;
  options.write_table = options.write_summary = false;
  const ExportResult result = export_window(t, options, sink);
  REQUIRE(result.ok());
  REQUIRE(sink.files().size() == 1);
  return sink.files().begin()->second;
}

Json events_of(const Json& doc, const std::string& ph) {
  Json out = Json::array();
  for (const Json& e : doc["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

const Json* find_x(const Json& doc, const std::string& name) {
  for (const Json& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == name) return &e;
  }
  return nullptr;
}

bool is_gpu_category(const std::string& cat) {
  return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "cuda_sync";
}

}  // namespace

TEST_CASE("top-level keys come in Kineto's order", "[exporters][trace]") {
  const Json doc = Json::parse(trace_text(test::sample_trace()));
  std::vector<std::string> keys;
  for (const auto& item : doc.items()) keys.push_back(item.key());
  CHECK(keys == std::vector<std::string>{
                    "schemaVersion", "deviceProperties", "profagent_config", "cupti_version",
                    "cuda_runtime_version", "cuda_driver_version", "host_name", "device_backend",
                    "profagent_drops", "profagent_window", "distributedInfo", "displayTimeUnit",
                    "baseTimeNanoseconds", "traceEvents", "traceName"});
  CHECK(doc["schemaVersion"] == 1);
  CHECK(doc["deviceProperties"][0]["name"] == "Simulated GPU");
  CHECK(doc["deviceProperties"][0]["numSms"] == 40);
  CHECK(doc["profagent_config"]["PROFAGENT_SORT_BY"] == "cuda_time_total");
  CHECK(doc["distributedInfo"]["world_size"] == 8);
  CHECK(doc["traceName"] == "node7.4242.r3.w1.trace.json");
}

TEST_CASE("HTA's rank regex finds the rank in distributedInfo first", "[exporters][trace]") {
  Trace t = test::sample_trace();
  t.config.push_back({"rank", "9"});  // a hostile config value must not be matched first
  t.host[0].name = "\"rank\": 7";
  const std::string text = trace_text(t);
  std::smatch m;
  REQUIRE(std::regex_search(text, m, std::regex("\"rank\":\\s+(\\d+)")));
  CHECK(m[1] == "3");
  CHECK(text.find("\"distributedInfo\": {") < static_cast<std::size_t>(m.position(0)));
}

TEST_CASE("ts and dur are non-negative microseconds with three decimals", "[exporters][trace]") {
  const std::string text = trace_text(test::sample_trace());
  const std::regex field("\"(ts|dur)\":([^,}]*)");
  const std::regex three_decimals("^[0-9]+\\.[0-9]{3}$");
  int seen = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), field); it != std::sregex_iterator();
       ++it, ++seen) {
    CHECK(std::regex_match((*it)[2].str(), three_decimals));
  }
  CHECK(seen > 20);
  const Json doc = Json::parse(text);
  for (const Json& e : events_of(doc, "X")) CHECK(e["dur"].get<double>() >= 0);
}

TEST_CASE("baseTimeNanoseconds follows Kineto and HTA recovers Unix ns", "[exporters][trace]") {
  const Trace t = test::sample_trace();
  const Json doc = Json::parse(trace_text(t));
  const uint64_t base = doc["baseTimeNanoseconds"];
  CHECK(base % kBaseTimeIntervalNs == 0);
  const uint64_t first_unix = t.start_ns + t.unix_offset_ns;
  CHECK(base <= first_unix);
  CHECK(first_unix - base < kBaseTimeIntervalNs);
  const Json* gemm = find_x(doc, "gemm");
  REQUIRE(gemm);
  // hta/common/trace.py: unix_ns = int(ts_us * 1e3) + baseTimeNanoseconds (exact to ~1 ns).
  const double ts = (*gemm)["ts"];
  const auto unix_ns = static_cast<int64_t>(std::llround(ts * 1e3)) + static_cast<int64_t>(base);
  CHECK(unix_ns == static_cast<int64_t>(t.device[0].start_ns) + t.unix_offset_ns);
}

TEST_CASE("device events carry device, stream and correlation; host events never stream",
          "[exporters][trace]") {
  const Json doc = Json::parse(trace_text(test::sample_trace()));
  int gpu = 0;
  for (const Json& e : events_of(doc, "X")) {
    const std::string cat = e["cat"];
    CHECK(e["pid"].get<int64_t>() >= 0);
    CHECK(e["tid"].get<int64_t>() >= 0);
    CHECK(!(e["tid"] == 0 && e["pid"] != 0));
    if (is_gpu_category(cat)) {
      ++gpu;
      CHECK(e["args"].contains("stream"));
      CHECK(e["args"].contains("correlation"));
      CHECK(e["args"]["device"] == e["pid"]);
    } else {
      CHECK((!e.contains("args") || !e["args"].contains("stream")));
    }
  }
  CHECK(gpu == 5);
  const Json* gemm = find_x(doc, "gemm");
  REQUIRE(gemm);
  CHECK((*gemm)["cat"] == "kernel");
  CHECK((*gemm)["pid"] == 0);
  CHECK((*gemm)["tid"] == 7);
  CHECK((*gemm)["args"]["External id"] == 10);
  CHECK((*gemm)["args"]["correlation"] == 1);
  CHECK((*gemm)["args"]["grid"] == Json::array({128, 1, 1}));
  CHECK((*gemm)["args"]["block"] == Json::array({256, 1, 1}));
  CHECK((*gemm)["args"]["registers per thread"] == 32);
  const Json* copy = find_x(doc, "Memcpy HtoD (Pageable -> Device)");
  REQUIRE(copy);
  CHECK((*copy)["args"]["bytes"] == 4096);
  CHECK((*copy)["args"]["memory bandwidth (GB/s)"].get<double>() == Approx(0.410));  // 4096 B / 10 µs
  const Json* sync = find_x(doc, "Stream Sync");
  REQUIRE(sync);
  CHECK((*sync)["cat"] == "cuda_sync");
  CHECK((*sync)["tid"] == 7 + kSyncStreamTidOffset);
}

TEST_CASE("host events: categories, External id, correlation, errors", "[exporters][trace]") {
  const Json doc = Json::parse(trace_text(test::sample_trace()));
  const Json* op = find_x(doc, "aten::mm");
  REQUIRE(op);
  CHECK((*op)["cat"] == "cpu_op");
  CHECK((*op)["args"]["External id"] == 10);
  std::map<std::string, Json> runtime;
  for (const Json& e : events_of(doc, "X")) {
    if (e["cat"] == "cuda_runtime") runtime[e["name"]] = e;
  }
  CHECK(runtime.size() == 4);  // cuLaunchKernel is a cuda_driver event
  CHECK(runtime["cudaMemcpyAsync"]["args"]["External id"] == 10);
  CHECK(runtime["cudaMemcpyAsync"]["args"]["correlation"] == 2);
  CHECK(runtime["cudaMalloc"]["args"]["cuda_error"] == 2);
  CHECK(!runtime["cudaMemcpyAsync"]["args"].contains("cuda_error"));
  const Json* driver = find_x(doc, "cuLaunchKernel");
  REQUIRE(driver);
  CHECK((*driver)["cat"] == "cuda_driver");
  CHECK((*driver)["pid"] == test::kPid);
  CHECK((*driver)["tid"] == test::kPid);
  CHECK((*driver)["args"]["correlation"] == 3);
  CHECK((*driver)["args"]["External id"] == 13);
  const Json& last = doc["traceEvents"].back();
  CHECK(last["name"] == "Record Window End");
  CHECK(last["ph"] == "i");
}

TEST_CASE("ac2g flows pair up and bind to their slices", "[exporters][trace]") {
  const Json doc = Json::parse(trace_text(test::sample_trace()));
  // Slice starts per (pid, tid), to check where each flow end lands.
  std::map<std::tuple<int64_t, int64_t, std::string>, const Json*> starts;
  for (const Json& e : doc["traceEvents"]) {
    if (e["ph"] == "X") starts[{e["pid"], e["tid"], e["ts"].dump()}] = &e;
  }
  std::map<uint64_t, const Json*> flow_start;
  const Json s_events = events_of(doc, "s"), f_events = events_of(doc, "f");
  for (const Json& s : s_events) {
    CHECK(s["cat"] == "ac2g");
    CHECK(s["name"] == "ac2g");
    CHECK(flow_start.emplace(s["id"].get<uint64_t>(), &s).second);  // one s per launch
    CHECK(starts.count({s["pid"], s["tid"], s["ts"].dump()}) == 1);
  }
  std::map<uint64_t, std::string> landed_on;
  for (const Json& f : f_events) {
    CHECK(f["bp"] == "e");
    const auto s = flow_start.find(f["id"].get<uint64_t>());
    REQUIRE(s != flow_start.end());
    CHECK((*s->second)["cat"] == f["cat"]);
    CHECK((*s->second)["name"] == f["name"]);
    CHECK(f["ts"].get<double>() >= (*s->second)["ts"].get<double>());
    const auto slice = starts.find({f["pid"], f["tid"], f["ts"].dump()});
    REQUIRE(slice != starts.end());
    CHECK(is_gpu_category((*slice->second)["cat"]));
    CHECK((*slice->second)["args"]["correlation"] == f["id"]);
    landed_on[f["id"]] = (*slice->second)["name"];
  }
  CHECK(landed_on == std::map<uint64_t, std::string>{{1, "gemm"},
                                                     {2, "Memcpy HtoD (Pageable -> Device)"},
                                                     {3, "relu_kernel"},
                                                     {4, "gemm"},
                                                     {5, "Stream Sync"}});
  // The driver-level launch's arrow starts at the CUPTI driver record, not at the operator.
  const Json* driver = find_x(doc, "cuLaunchKernel");
  CHECK((*flow_start.at(3))["ts"] == (*driver)["ts"]);
}

TEST_CASE("metadata names every pid and tid used", "[exporters][trace]") {
  const Json doc = Json::parse(trace_text(test::sample_trace()));
  std::set<int64_t> named_pids;
  std::set<std::pair<int64_t, int64_t>> named_rows;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  for (const Json& m : events_of(doc, "M")) {
    if (m["name"] == "process_name") named_pids.insert(m["pid"].get<int64_t>());
    if (m["name"] == "thread_name") {
      const std::pair<int64_t, int64_t> row{m["pid"].get<int64_t>(), m["tid"].get<int64_t>()};
      named_rows.insert(row);
      thread_names[row] = m["args"]["name"];
    }
    if (m["name"] == "process_sort_index" && m["pid"] == 0) CHECK(m["args"]["sort_index"] == 5000000);
  }
  for (const Json& e : doc["traceEvents"]) {
    if (e["ph"] == "M") continue;
    CHECK(named_pids.count(e["pid"].get<int64_t>()) == 1);
    CHECK(named_rows.count({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}) == 1);
  }
  CHECK(thread_names[{test::kPid, test::kWorker}] == "thread 4250 (worker)");
  CHECK(thread_names[{0, 7}] == "stream 7");
  CHECK(thread_names[{0, static_cast<int64_t>(kStreamZeroTid)}] == "stream 0");
  CHECK(thread_names[{0, 1000007}] == "stream 7 (sync)");
}

TEST_CASE("hostile names stay valid JSON and valid UTF-8 names round-trip", "[exporters][trace]") {
  Trace t = test::sample_trace();
  std::string controls;
  for (int c = 0; c < 0x20; ++c) controls += static_cast<char>(c);
  const std::string long_name(64 * 1024, 'k');
  t.host[0].name = "op \"quoted\" \\back\\ " + controls;
  t.host[3].name = "bad \xFF\xC0 utf8 \xE2\x82";
  t.device[0].name = long_name;
  t.device[2].name = "\xE5\x8D\xB7\xE7\xA7\xAF<float>";
  t.process.exe_name = "exe\nname";
  t.process.host_name = "host\"x";
  const Json doc = Json::parse(trace_text(t));  // throws on invalid JSON or UTF-8
  CHECK(find_x(doc, t.host[0].name) != nullptr);
  CHECK(find_x(doc, long_name) != nullptr);
  CHECK(find_x(doc, t.device[2].name) != nullptr);
  CHECK(find_x(doc, "bad \xEF\xBF\xBD\xEF\xBF\xBD utf8 \xEF\xBF\xBD") != nullptr);
  CHECK(doc["host_name"] == "host\"x");
}

TEST_CASE("steps known only as spans become ProfilerStep#N annotations", "[exporters][trace]") {
  Trace t = test::sample_trace();
  t.whole_run = false;
  t.first_step.number = 4;
  t.last_step.number = 5;
  t.steps = {{4, test::kT0, test::kT0 + 200'000}, {5, test::kT0 + 200'000, test::kT0 + 450'000}};
  const Json doc = Json::parse(trace_text(t));
  const Json* step = find_x(doc, "ProfilerStep#5");
  REQUIRE(step);
  CHECK((*step)["cat"] == "user_annotation");
  CHECK((*step)["dur"].get<double>() == Approx(250.0));
  CHECK(doc["traceName"] == "node7.4242.r3.w1.steps4-5.trace.json");
}

TEST_CASE("an empty trace is still a complete document", "[exporters][trace]") {
  Trace t;
  t.process.pid = 99;
  const Json doc = Json::parse(trace_text(t));
  CHECK(doc["traceEvents"].back()["name"] == "Record Window End");
  CHECK(doc["distributedInfo"]["rank"] == 0);
}

TEST_CASE("a CUPTI driver record left in Trace::device starts the arrow to its kernel",
          "[exporters][trace]") {
  Trace t = test::sample_trace();
  t.host.pop_back();  // the kFlagDriverApi host record: keep the raw CUPTI record instead
  DeviceRecord driver = test::device(DeviceKind::DriverApi, "cuLaunchKernel", 120, 125, 0, 3, 3);
  driver.pid = test::kPid;
  driver.tid = test::kWorker;
  driver.cbid = 307;
  t.device[2].host = 3;
  t.device.insert(t.device.begin() + 1, driver);
  const Json doc = Json::parse(trace_text(t));
  const Json* x = find_x(doc, "cuLaunchKernel");
  REQUIRE(x);
  CHECK((*x)["cat"] == "cuda_driver");
  CHECK((*x)["tid"] == test::kWorker);
  CHECK((*x)["args"]["cbid"] == 307);
  const Json starts = events_of(doc, "s");
  int from_driver = 0;
  for (const Json& s : starts) {
    if (s["id"] == 3) {
      ++from_driver;
      CHECK(s["ts"] == (*x)["ts"]);
      CHECK(s["tid"] == test::kWorker);
    }
  }
  CHECK(from_driver == 1);
  const Table table = build_table(t, {});
  for (const TableRow& r : table.rows) {
    if (r.name == "aten::relu") CHECK(r.self_cpu_ns == 35'000);  // minus the driver call
    if (r.name == "cuLaunchKernel") CHECK(r.cuda_total_ns == 20'000);
  }
}
