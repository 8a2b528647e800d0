// The memory exporters over a hand-built Trace: torch's _format_memory, the memory columns of
// key_averages(), the Kineto-shaped [memory] events and counters, the memory summary.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "exporters/exporter.h"
#include "exporters/summaries/memory_summary.h"
#include "exporters/summaries/tables.h"
#include "synthetic_trace.h"

namespace profagent::exporters {
namespace {

using Json = nlohmann::ordered_json;

MemoryRecord record(uint64_t at_us, int64_t bytes, int64_t allocated, int64_t host, int32_t device = 0) {
  MemoryRecord r;
  r.ns = test::kT0 + at_us * 1000;
  r.address = 0x1000 + uint64_t(at_us);
  r.bytes = bytes;
  r.total_allocated = r.total_reserved = allocated;
  r.host = host;
  r.tid = test::kPid;
  r.device = device;
  r.kind = device == kHostDevice ? MemoryKind::Pinned : MemoryKind::Device;
  return r;
}

// Range "fwd" [0, 100] us holding cudaMalloc (10-20), cudaFree (30-40) and an operator "mm"
// (50-90) holding cudaMalloc (60-70) and cudaMallocHost (75-80); 1 MiB allocated before.
Trace memory_trace() {
  Trace t;
  t.process.pid = test::kPid;
  t.start_ns = test::kT0;
  t.end_ns = test::kT0 + 200'000;
  t.unix_offset_ns = test::kUnixOffset;
  t.host.push_back(test::host(EventKind::Range, "fwd", 0, 100, 1));
  t.host.push_back(test::host(EventKind::Alloc, "cudaMalloc", 10, 20, 2, test::kPid, 0));
  t.host.push_back(test::host(EventKind::Free, "cudaFree", 30, 40, 3, test::kPid, 0));
  t.host.push_back(test::host(EventKind::Operator, "mm", 50, 90, 4, test::kPid, 0));
  t.host.push_back(test::host(EventKind::Alloc, "cudaMalloc", 60, 70, 5, test::kPid, 3));
  t.host.push_back(test::host(EventKind::Alloc, "cudaMallocHost", 75, 80, 6, test::kPid, 3));
  MemoryReport& m = t.memory;
  m.enabled = true;
  m.start = {{0, 1 << 20, 1 << 20}};
  m.records = {record(15, 4096, (1 << 20) + 4096, 1), record(35, -(1 << 20), 4096, 2),
               record(65, 2048, 6144, 4), record(78, 512, 512, 5, kHostDevice)};
  MemoryRecord failed = record(85, 1 << 30, 6144, kNoIndex);
  failed.failed = true;
  m.records.push_back(failed);
  m.end = {{kHostDevice, 512, 512}, {0, 6144, 6144}};
  m.live = {{0x2000, 4096, test::kT0 + 15'000, 2, test::kPid, 0, MemoryKind::Device, "cudaMalloc", ""}};
  m.live_count = 1, m.live_bytes = 4096;
  m.unknown_frees = 2;
  return t;
}

const TableRow& row(const Table& t, const std::string& name) {
  for (const TableRow& r : t.rows) {
    if (r.name == name) return r;
  }
  FAIL("no row " << name);
  return t.rows.front();
}

}  // namespace

TEST_CASE("memory is formatted as torch's _format_memory", "[exporters][memory]") {
  CHECK(format_memory(0) == "0 b");
  CHECK(format_memory(1023) == "1023 b");
  CHECK(format_memory(-512) == "-512 b");
  CHECK(format_memory(1024) == "1.00 Kb");
  CHECK(format_memory(-1536) == "-1.50 Kb");
  CHECK(format_memory(int64_t(5) << 20) == "5.00 Mb");
  CHECK(format_memory(-(int64_t(3) << 30)) == "-3.00 Gb");
}

TEST_CASE("memory columns: calls self, scopes total, innermost scope self", "[exporters][memory]") {
  TableOptions options;
  options.sort_by = "cuda_memory_usage";
  const Table t = build_table(memory_trace(), options);
  CHECK(t.memory);
  CHECK(row(t, "cudaMalloc").cuda_memory == 4096 + 2048);
  CHECK(row(t, "cudaMalloc").self_cuda_memory == 4096 + 2048);
  CHECK(row(t, "cudaFree").cuda_memory == -(1 << 20));
  CHECK(row(t, "mm").cuda_memory == 2048);
  CHECK(row(t, "mm").self_cuda_memory == 2048);
  CHECK(row(t, "mm").cpu_memory == 512);
  CHECK(row(t, "fwd").cuda_memory == 4096 - (1 << 20) + 2048);
  CHECK(row(t, "fwd").self_cuda_memory == 4096 - (1 << 20));  // mm's allocation is mm's own
  CHECK(row(t, "fwd").cpu_memory == 512);
  CHECK(row(t, "fwd").self_cpu_memory == 0);
  CHECK(t.rows.front().name == "cudaMalloc");  // sorted by CUDA Mem
  const std::string text = render_table(t, options);
  CHECK(text.find("CPU Mem  Self CPU Mem      CUDA Mem  Self CUDA Mem") != std::string::npos);
  CHECK(text.find("-1.00 Mb") != std::string::npos);
}

TEST_CASE("[memory] events, [OutOfMemory] and counters as Kineto writes them", "[exporters][memory]") {
  MemorySink sink;
  ExportOptions options;
  options.write_table = options.write_summary = false;
  REQUIRE(export_window(memory_trace(), options, sink).ok());
  const Json doc = Json::parse(sink.files().begin()->second);
  std::vector<Json> memory, oom, counters;
  for (const Json& e : doc["traceEvents"]) {
    if (e["name"] == "[memory]") memory.push_back(e);
    if (e["name"] == "[OutOfMemory]") oom.push_back(e);
    if (e["ph"] == "C") counters.push_back(e);
  }
  REQUIRE(memory.size() == 4);
  CHECK(memory[0]["ph"] == "i");
  CHECK(memory[0]["cat"] == "cpu_instant_event");
  CHECK(memory[0]["s"] == "t");
  CHECK(memory[0]["args"]["Bytes"] == 4096);
  CHECK(memory[0]["args"]["Total Allocated"] == (1 << 20) + 4096);
  CHECK(memory[0]["args"]["Device Type"] == 1);
  CHECK(memory[1]["args"]["Bytes"] == -(1 << 20));
  CHECK(memory[3]["args"]["Device Id"] == -1);
  CHECK(memory[3]["args"]["Device Type"] == 0);
  REQUIRE(oom.size() == 1);
  CHECK(oom[0]["args"]["Bytes"] == 1 << 30);
  CHECK_FALSE(oom[0]["args"].contains("Addr"));
  // start (1) + one per non-failed record (4) + end (2)
  REQUIRE(counters.size() == 7);
  CHECK(counters[0]["name"] == "Memory (GPU 0)");
  CHECK(counters[0]["args"]["Allocated"] == 1 << 20);
  CHECK(doc["profagent_memory"]["unknown_frees"] == 2);
  CHECK(doc["profagent_memory"]["failed_allocations"] == 1);
}

TEST_CASE("memory summary: peaks with their scope, live allocations, failures", "[exporters][memory]") {
  Trace t = memory_trace();
  t.steps = {{7, test::kT0, test::kT0 + 100'000}};
  const MemorySummary m = summarize_memory(t);
  REQUIRE(m.devices.size() == 2);
  const DeviceMemory& gpu = m.devices[1];
  CHECK(gpu.device == 0);
  CHECK(gpu.peak_allocated == (1 << 20) + 4096);
  CHECK(gpu.allocated_at.scope == "fwd");
  CHECK(gpu.allocated_at.step == 7);
  CHECK(gpu.end_allocated == 6144);
  REQUIRE(m.live.size() == 1);
  CHECK(m.live[0].in_window);
  CHECK(m.live[0].made.scope == "fwd");
  REQUIRE(m.failed.size() == 1);
  REQUIRE(m.steps.size() == 1);
  CHECK(m.steps[0].allocations == 3);
  CHECK(m.steps[0].frees == 1);
  CHECK(m.steps[0].failed == 1);
  const std::string text = render_memory_summary(t, m);
  CHECK(text.find("GPU 0: peak allocated 1.00 Mb") != std::string::npos);
  CHECK(text.find("2 frees of unknown or already freed pointers") != std::string::npos);
}

}  // namespace profagent::exporters
