// trace.json as Perfetto and HTA read it: well-formed JSON, Kineto's fields and links.
#include <catch2/catch.hpp>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "exporters/chrome_trace.h"
#include "exporters/call_names.h"
#include "exporters/cupti_cbids.h"
#include "exporters/exporter.h"
#include "exporters/summaries/tables.h"
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

TEST_CASE("device events carry device, stream and correlation, host events never stream",
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

// ---- what Kineto's readers key on: cbid, call correlations, event waits, annotations -------

namespace {

std::map<std::string, Json> calls_by_name(const Json& doc) {
  std::map<std::string, Json> calls;
  for (const Json& e : events_of(doc, "X")) {
    if (e["cat"] == "cuda_runtime" || e["cat"] == "cuda_driver") calls[e["name"]] = e;
  }
  return calls;
}

// Main thread: kernel launch on stream handle 0x5000 (CUPTI stream 13), cudaEventRecord(E,
// 0x5000), cudaStreamWaitEvent(another stream, E), cudaEventRecord(E, 0x5000) again, then
// cudaEventSynchronize(E). Sync records: Stream Wait Event on stream 14, Event Sync (no stream).
Trace event_wait_trace() {
  using test::host;
  Trace t = test::sample_trace();
  t.host.clear();
  t.device.clear();
  constexpr uint64_t kEvent = 0xE000, kRecordStream = 0x5000;
  t.host.push_back(host(EventKind::Launch, "cudaLaunchKernel", 0, 5, 21));       // 0
  t.host[0].arg1 = kRecordStream, t.host[0].correlation = 30;
  t.host.push_back(host(EventKind::Runtime, "cudaEventRecord", 6, 7, 22));       // 1
  t.host[1].arg0 = kEvent, t.host[1].arg1 = kRecordStream, t.host[1].correlation = 31;
  t.host.push_back(host(EventKind::Sync, "cudaStreamWaitEvent", 8, 9, 23));      // 2
  t.host[2].arg0 = 0, t.host[2].arg1 = kEvent;
  t.host.push_back(host(EventKind::Runtime, "cudaEventRecord", 10, 11, 24));     // 3
  t.host[3].arg0 = kEvent, t.host[3].arg1 = kRecordStream;  // no CUPTI correlation known
  t.host.push_back(host(EventKind::Sync, "cudaEventSynchronize", 12, 60, 25));   // 4
  t.host[4].arg1 = kEvent;
  t.device.push_back(test::device(DeviceKind::Kernel, "k", 20, 50, 13, 30, 0));
  DeviceRecord wait = test::device(DeviceKind::Sync, "", 8, 9, 14, 32, 2);
  wait.sync_type = 2, wait.event_id = 1;
  DeviceRecord event_sync = test::device(DeviceKind::Sync, "", 12, 60, kNoStream, 33, 4);
  event_sync.sync_type = 1, event_sync.event_id = 1;
  t.device.push_back(wait);
  t.device.push_back(event_sync);
  return t;
}

}  // namespace

TEST_CASE("every runtime and driver call has the header's cbid and a correlation of its own",
          "[exporters][trace][kineto]") {
  const Json doc = Json::parse(trace_text(test::sample_trace()));
  std::set<uint64_t> seen;
  std::set<uint64_t> device_correlations;
  for (const Json& e : events_of(doc, "X")) {
    if (is_gpu_category(e["cat"])) device_correlations.insert(e["args"]["correlation"].get<uint64_t>());
  }
  int calls = 0;
  for (const Json& e : events_of(doc, "X")) {
    if (e["cat"] != "cuda_runtime" && e["cat"] != "cuda_driver") continue;
    ++calls;
    REQUIRE(e["args"].contains("cbid"));
    const uint64_t corr = e["args"]["correlation"].get<uint64_t>();
    CHECK(corr > 0);
    CHECK(corr < (uint64_t{1} << 32));
    CHECK(seen.insert(corr).second);
  }
  CHECK(calls == 6);
  const auto by_name = calls_by_name(doc);
  CHECK(by_name.at("cudaLaunchKernel")["args"]["cbid"] == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  CHECK(by_name.at("cudaMemcpyAsync")["args"]["cbid"] == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020);
  CHECK(by_name.at("cudaMalloc")["args"]["cbid"] == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
  CHECK(by_name.at("cuLaunchKernel")["args"]["cbid"] == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
  // Calls without device work (cudaMalloc) or with only a sync record still differ from
  // every device-linked id: the fresh ones lie above all ids in the trace.
  const uint64_t malloc_corr = by_name.at("cudaMalloc")["args"]["correlation"];
  CHECK(malloc_corr > *device_correlations.rbegin());
}

TEST_CASE("cbid lookup: newest form of a runtime function, stream variants, driver names",
          "[exporters][kineto]") {
  CHECK(runtime_cbid("cudaGetDeviceProperties") == CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000);
  CHECK(runtime_cbid("cudaLaunchKernel_ptsz") == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000);
  CHECK(runtime_cbid("cudaMemcpy_ptds") == CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000);
  // <<<>>>'s entry is reported as the public launch it implements, as NVIDIA's runtime does.
  CHECK(runtime_cbid("__cudaLaunchKernel") == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  CHECK(runtime_cbid("__cudaLaunchKernel_ptsz") == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000);
  CHECK(runtime_cbid("cudaMalloc_ptsz") == CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);  // no own id
  CHECK(driver_cbid("cuMemAlloc_v2") == CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2);
  CHECK(driver_cbid("cuMemAlloc") == CUPTI_DRIVER_TRACE_CBID_cuMemAlloc);
  CHECK(runtime_cbid("notACudaFunction") == 0);
  CHECK(driver_cbid("cudaLaunchKernel") == 0);
}

TEST_CASE("call names: what a name means is found once and agrees with the lookups", "[exporters][kineto]") {
  CallNames calls;
  for (const char* name : {"__cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaMemcpyAsync", "cuMemAlloc_v2",
                           "cuLaunchKernel_ptsz", "notACudaFunction", ""}) {
    const CallName& call = calls.of(InternedName(name));
    CHECK(std::string_view(call.api) == api_name(name));
    CHECK(call.runtime_cbid == runtime_cbid(name));
    CHECK(call.driver_cbid == driver_cbid(name));
    CHECK(call.driver_function == is_driver_function(name));
    CHECK(call.entry_point == (api_name(name) != std::string_view(name)));
    CHECK(&calls.of(InternedName(name)) == &call);  // kept, not found again
  }
  CHECK(calls.of("__cudaLaunchKernel").entry_point);
  CHECK_FALSE(calls.of("cudaMemcpyAsync").entry_point);
  CHECK(calls.of("cuMemAlloc_v2").driver_function);
}

TEST_CASE("event waits name the cudaEventRecord they wait for and its stream",
          "[exporters][trace][kineto]") {
  const Json doc = Json::parse(trace_text(event_wait_trace()));
  const Json* wait = find_x(doc, "Stream Wait Event");
  const Json* event_sync = find_x(doc, "Event Sync");
  REQUIRE(wait);
  REQUIRE(event_sync);
  const auto calls = calls_by_name(doc);
  // The wait came after the first record (correlation 31) and before the second.
  CHECK((*wait)["args"]["wait_on_cuda_event_record_corr_id"] == 31);
  CHECK((*wait)["args"]["wait_on_stream"] == 13);
  CHECK((*wait)["args"]["stream"] == 14);
  CHECK((*wait)["tid"] == 14);  // Kineto keeps stream waits on their stream's row
  // The event sync waits for the second record, whose correlation was made up: it must be
  // the one written on that cudaEventRecord event.
  uint64_t second_record = 0;
  for (const Json& e : events_of(doc, "X")) {
    if (e["name"] == "cudaEventRecord" && e["args"]["correlation"] != 31) second_record = e["args"]["correlation"];
  }
  CHECK(second_record > 33);
  CHECK((*event_sync)["args"]["wait_on_cuda_event_record_corr_id"] == second_record);
  CHECK((*event_sync)["args"]["wait_on_stream"] == 13);
  CHECK((*event_sync)["args"]["stream"] == -1);
  CHECK((*event_sync)["tid"] == kDeviceRowTid);
  std::map<std::pair<int64_t, int64_t>, std::string> rows;
  for (const Json& m : events_of(doc, "M")) {
    if (m["name"] == "thread_name") rows[{m["pid"], m["tid"]}] = m["args"]["name"];
  }
  CHECK(rows[{0, int64_t(kDeviceRowTid)}] == "Device 0");
}

TEST_CASE("a wait whose record is unknown says -1, as Kineto does", "[exporters][trace][kineto]") {
  Trace t = event_wait_trace();
  t.host[1].arg0 = t.host[3].arg0 = 0xF000;  // records of another event
  const Json doc = Json::parse(trace_text(t));
  const Json* wait = find_x(doc, "Stream Wait Event");
  REQUIRE(wait);
  CHECK((*wait)["args"]["wait_on_cuda_event_record_corr_id"] == -1);
  CHECK((*wait)["args"]["wait_on_stream"] == -1);
}

TEST_CASE("gpu_user_annotation: each scope with device work spans it on every stream row",
          "[exporters][trace][kineto]") {
  const Json doc = Json::parse(trace_text(test::sample_trace()));
  std::map<std::string, Json> annotations;
  for (const Json& e : events_of(doc, "X")) {
    if (e["cat"] == "gpu_user_annotation") annotations[e["name"]] = e;
  }
  REQUIRE(annotations.size() == 2);  // the worker's launch has no scope
  const Json& mm = annotations.at("aten::mm");  // gemm [25,125] and its copy [130,140] on stream 7
  CHECK(mm["pid"] == 0);
  CHECK(mm["tid"] == 7);
  CHECK(mm["args"]["External id"] == 10);
  const Json* gemm = find_x(doc, "gemm");
  const Json* copy = find_x(doc, "Memcpy HtoD (Pageable -> Device)");
  CHECK(mm["ts"] == (*gemm)["ts"]);
  CHECK(mm["ts"].get<double>() + mm["dur"].get<double>() ==
        Approx((*copy)["ts"].get<double>() + (*copy)["dur"].get<double>()));
  const Json& relu = annotations.at("aten::relu");  // through its driver launch
  CHECK(relu["ts"] == (*find_x(doc, "relu_kernel"))["ts"]);
  CHECK(relu["dur"] == (*find_x(doc, "relu_kernel"))["dur"]);
}

TEST_CASE("every pid, tid and flow id fits in 32 bits, also without a stream or correlation",
          "[exporters][trace][kineto]") {
  Trace t = test::sample_trace();
  t.device[3].stream = kNoStream;    // the sync record: a context synchronisation
  t.device[3].sync_type = 4;
  t.device[4].correlation = 0;       // a device record CUPTI gave no correlation
  const Json doc = Json::parse(trace_text(t));
  for (const Json& e : doc["traceEvents"]) {
    CHECK(e["pid"].get<uint64_t>() < (uint64_t{1} << 32));
    CHECK(e["tid"].get<uint64_t>() < (uint64_t{1} << 32));
    if (e["ph"] == "s" || e["ph"] == "f") CHECK(e["id"].get<uint64_t>() < (uint64_t{1} << 32));
  }
  CHECK((*find_x(doc, "Context Sync"))["tid"] == kDeviceRowTid);
}

TEST_CASE("kernels carry Kineto's queued and occupancy args", "[exporters][trace][kineto]") {
  const Json doc = Json::parse(trace_text(test::sample_trace()));
  const Json& args = (*find_x(doc, "gemm"))["args"];
  CHECK(args["queued"] == 0);  // CUPTI gave none
  // 128 blocks of 256 threads, 32 registers, on 40 SMs of 1024 threads (compute 7.5): four
  // blocks fit an SM, the grid gives 3.2, so 3.2 x 256 / 1024 = 80 %.
  CHECK(args["blocks per SM"].get<double>() == Approx(3.2));
  CHECK(args["warps per SM"].get<double>() == Approx(25.6));
  CHECK(args["est. achieved occupancy %"] == 80);
  std::vector<std::string> keys;
  for (auto it = args.begin(); it != args.end(); ++it) keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"External id", "queued", "device", "context", "stream", "correlation",
                                         "registers per thread", "shared memory", "blocks per SM",
                                         "warps per SM", "grid", "block", "est. achieved occupancy %"});
}

TEST_CASE("fresh call correlations stay within 32 bits when CUPTI's ids reach the top",
          "[exporters][trace][kineto]") {
  Trace t = test::sample_trace();
  t.device[0].correlation = t.host[1].correlation = 0xFFFFFFFFu;  // gemm and its launch
  t.device[1].correlation = t.host[2].correlation = 1;            // the copy
  const Json doc = Json::parse(trace_text(t));
  std::set<uint64_t> seen;
  for (const Json& e : events_of(doc, "X")) {
    if (e["cat"] != "cuda_runtime" && e["cat"] != "cuda_driver") continue;
    const uint64_t corr = e["args"]["correlation"].get<uint64_t>();
    CHECK(corr >= 1);
    CHECK(corr <= 0xFFFFFFFFu);
    CHECK(seen.insert(corr).second);
  }
  // In use: 1, 3, 4, 5 and 2^32 - 1; the two calls without one get the gaps, in trace order.
  CHECK(calls_by_name(doc).at("cudaDeviceSynchronize")["args"]["correlation"] == 2);
  CHECK(calls_by_name(doc).at("cudaMalloc")["args"]["correlation"] == 6);
}
