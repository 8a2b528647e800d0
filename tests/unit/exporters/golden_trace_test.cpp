// The trace writer pinned byte for byte: two hand-made Traces that between them take every
// branch of the writer (each host and device kind, flows, stacks, memory, CPU times, steps as
// records and as spans, every drop counter) and the files they must give, under golden/.
//
// The input is fixed (no clock, pid or host name of the machine that runs the test), so the
// output needs no normalising: any change of the format shows as a diff of the golden file in
// review. After a deliberate format change, rewrite them with
//   PROFAGENT_UPDATE_GOLDEN=1 build/bin/exporters_unit_tests "[golden]"
// and commit the diff with the change.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "exporters/chrome_trace.h"
#include "exporters/output_stream.h"
#include "synthetic_trace.h"

namespace profagent::exporters {
namespace {

using test::host;
using test::kPid;
using test::kT0;
using test::kWorker;

// The sample trace plus what it lacks: a range, a step record, a captured call, entry points,
// shapes, stacks, a driver record no hook saw, a memset, event and context syncs, a graph
// kernel, a graph launch's replayed kernel and copy, work known only by its operator, memory,
// CPU times and every drop counter.
Trace full_trace() {
  Trace t = test::sample_trace();
  t.whole_run = false;
  t.window = 2;
  t.first_step = {6, kT0, kT0 + 450'000};
  t.last_step = t.first_step;
  t.join_wait_ns = 1'234'567;
  t.host.push_back(host(EventKind::Step, "", 0, 450, 20));                            // 8
  t.host[8].arg0 = 6;
  t.host.push_back(host(EventKind::Range, "fwd \"quoted\"\n", 2, 98, 21));             // 9
  t.host.push_back(host(EventKind::Launch, "cudaLaunchKernel_ptsz", 80, 85, 22, kPid, 0));  // 10
  t.host[10].correlation = 7;
  t.host[10].external_id = 10;
  t.host[10].flags = kFlagCaptured;
  t.host.push_back(host(EventKind::Memset, "cudaMemsetAsync", 90, 95, 23, kPid, 0));  // 11
  t.host[11].correlation = 8;
  t.host[11].arg0 = 256;
  t.host.push_back(host(EventKind::Runtime, "cudaEventRecord", 96, 97, 24, kPid, 0));  // 12
  t.host[12].correlation = 9;
  t.host[12].arg0 = 0xE1;
  t.host[12].arg1 = 0x5700;  // recorded on the stream of the gemm launch
  t.host[1].arg1 = 0x5700;
  t.host.push_back(host(EventKind::Sync, "cudaStreamWaitEvent", 165, 169, 25));      // 13
  t.host[13].arg1 = 0xE1;
  t.host[13].correlation = 6;
  t.host.push_back(host(EventKind::GraphLaunch, "cudaGraphLaunch", 180, 186, 26));  // 14
  t.host[14].correlation = 40;
  set_shapes(t, t.host[0], {{{4, 8}, {8, 2}, {}}, {"float", "float", "Scalar"}});

  StackFrame python{true, 0, "train_step", "", "train.py", 42};
  StackFrame native{false, 0x401234, "main", "/usr/bin/train", "main.cpp", 7};
  t.stacks.frames = {python, native};
  t.stacks.stacks = {{0, 1}, {1}};
  t.host[1].stack = 1;
  t.host[6].stack = 2;

  DeviceRecord driver;  // a library's cuLaunchKernel no hook saw
  driver.kind = DeviceKind::DriverApi;
  driver.name = "cuLaunchKernel_ptsz";
  driver.start_ns = kT0 + 300'000, driver.end_ns = kT0 + 305'000;
  driver.correlation = 30, driver.external_id = 21, driver.cbid = 307;
  driver.pid = kPid, driver.tid = kWorker;
  DeviceRecord library = test::device(DeviceKind::Kernel, "cublas_gemm", 310, 330, 7, 30, kNoIndex);
  library.graph_id = 3, library.graph_node_id = 77, library.queued_ns = kT0 + 301'000;
  library.shared_memory = 1024, library.registers_per_thread = 64;
  library.grid[0] = library.grid[1] = library.grid[2] = 2;
  library.block[0] = 64, library.block[1] = library.block[2] = 1;
  DeviceRecord memset = test::device(DeviceKind::Memset, "Memset (Device)", 100, 101, 7, 8, 11);
  memset.bytes = 256;
  DeviceRecord wait = test::device(DeviceKind::Sync, "", 170, 175, 7, 6, 13);
  wait.sync_type = 2, wait.event_id = 0xE1;
  DeviceRecord context = test::device(DeviceKind::Sync, "", 400, 410, kNoStream, 0, kNoIndex);
  context.sync_type = 4;
  DeviceRecord orphan = test::device(DeviceKind::Kernel, "op_only_kernel", 240, 250, 0, 0, 3);
  orphan.external_id = 13;
  t.device.insert(t.device.begin() + 2, memset);
  t.device.push_back(orphan);
  t.device.push_back(driver);
  t.device.push_back(library);
  t.device.push_back(context);
  t.device.push_back(wait);
  // A graph replay: a kernel and a copy of one cudaGraphLaunch, each with its own arrow, its
  // graph and node ids, and the External id of the range open at its node's capture.
  DeviceRecord replayed_kernel = test::device(DeviceKind::Kernel, "graph_kernel", 190, 194, 7, 40, 14);
  DeviceRecord replayed_copy = test::device(DeviceKind::Memcpy, "Memcpy DtoD (Device -> Device)", 195, 197, 7, 40, 14);
  replayed_copy.bytes = 4096;
  for (DeviceRecord* r : {&replayed_kernel, &replayed_copy}) r->graph_id = 5, r->external_id = 21;
  replayed_kernel.graph_node_id = 90, replayed_copy.graph_node_id = 91;
  t.device.push_back(replayed_kernel);
  t.device.push_back(replayed_copy);
  t.process.thread_names.push_back({kWorker, ""});

  MemoryReport& m = t.memory;
  m.enabled = true;
  m.record_capacity = 1000, m.dropped_records = 3, m.unknown_frees = 1, m.null_frees = 2;
  m.live_count = 2, m.live_bytes = 6144, m.bookkeeping_bytes = 65536;
  m.start = {{0, 2048, 4096}};
  m.end = {{kHostDevice, 512, 512}, {0, 6144, 8192}};
  MemoryRecord alloc;
  alloc.ns = kT0 + 61'000, alloc.address = 0x7f0000001000, alloc.bytes = 4096;
  alloc.total_allocated = 6144, alloc.total_reserved = 8192, alloc.host = 6, alloc.tid = kWorker, alloc.device = 0;
  MemoryRecord free_record = alloc;
  free_record.ns = kT0 + 70'000, free_record.bytes = -4096, free_record.allocated_ns = kT0 + 61'000;
  free_record.total_allocated = 2048, free_record.host = kNoIndex;
  MemoryRecord pinned = alloc;
  pinned.ns = kT0 + 75'000, pinned.bytes = 512, pinned.device = kHostDevice, pinned.kind = MemoryKind::Pinned;
  pinned.total_allocated = pinned.total_reserved = 512, pinned.host = kNoIndex;
  MemoryRecord oom = alloc;
  oom.ns = kT0 + 80'000, oom.bytes = int64_t(1) << 40, oom.failed = true, oom.error = 2, oom.host = kNoIndex;
  MemoryRecord refused = pinned;
  refused.ns = kT0 + 82'000, refused.failed = refused.refused = true, refused.error = 712;
  refused.kind = MemoryKind::Registered;
  m.records = {alloc, free_record, pinned, oom, refused};
  m.live = {{0x7f0000002000, 4096, kT0 + 61'000, 16, kWorker, 0, MemoryKind::Device, "cudaMalloc", ""},
            {0x7f0000003000, 2048, kT0 - 5'000, 0, 0, 0, MemoryKind::Pool, "driver", "at pool.cpp:9"}};

  t.cpu_start = {true, kT0, 1'000'000, 5'000'000, 7'000'000, 4};
  t.cpu_end = {true, kT0 + 500'000, 1'400'000, 5'900'000, 7'100'000, 4};

  DropCounters& d = t.drops;
  d.host_events = 1, d.device_records = 2, d.late_device_records = 3, d.unmatched_device_records = 4;
  d.host_buffer_requested_bytes = 256ull << 20, d.host_buffer_reserved_bytes = 128ull << 20;
  d.log_lines = 5, d.stderr_replaced = true, d.plain_dlopen_calls = 6, d.shape_records = 7;
  d.stacks_truncated = 8, d.stacks_lost = 9, d.python_frames_lost = 10, d.timer_periods_missed = 11;
  d.left_out_host_events = 12, d.left_out_device_records = 13;
  d.memory_room_bytes = 14ull << 20, d.memory_needed_bytes = 15ull << 20;
  d.shorter_than_min_duration = 16, d.over_max_events = 17, d.over_max_events_device_records = 18;
  d.graph_replays_without_capture = 19, d.graph_nodes_not_kept = 20;
  return t;
}

// Steps known only as spans (drawn on the main thread's row), no device properties, no memory.
Trace spans_trace() {
  Trace t = test::sample_trace();
  t.devices.clear();
  t.whole_run = true;
  t.steps = {{0, kT0, kT0 + 105'000}, {1, kT0 + 105'000, kT0 + 450'000}};
  t.config.push_back({"PROFAGENT_STEP_ON", "time:100"});
  t.cupti_version.clear();
  t.device_backend = "none (CUPTI refused: \"no device\")";
  return t;
}

std::string golden_path(const std::string& name) { return std::string(PROFAGENT_GOLDEN_DIR) + "/" + name; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first line where the two differ, both sides shown.
std::string first_difference(const std::string& want, const std::string& got) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool more_a = bool(std::getline(a, la)), more_b = bool(std::getline(b, lb));
    if (!more_a && !more_b) return "the same lines (a difference in the last newline)";
    if (la != lb || more_a != more_b) {
      return "line " + std::to_string(line) + ":\n  golden: " + (more_a ? la : "<end>") + "\n  writer: " + (more_b ? lb : "<end>");
    }
  }
}

void check_golden(const Trace& trace, const std::string& name) {
  std::string text;
  StringStream stream(text);
  JsonWriter w(stream);
  REQUIRE(write_chrome_trace(trace, name, w));
  const std::string path = golden_path(name);
  if (const char* update = std::getenv("PROFAGENT_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path, std::ios::binary) << text;
    WARN("rewrote " << path);
  }
  const std::string golden = read_file(path);
  REQUIRE_FALSE(golden.empty());
  INFO(path << ": " << first_difference(golden, text));
  CHECK(text == golden);
}

}  // namespace

TEST_CASE("the trace writer's output is pinned: every branch", "[exporters][trace][golden]") {
  check_golden(full_trace(), "full.trace.json");
}

TEST_CASE("the trace writer's output is pinned: steps as spans, no devices, no memory", "[exporters][trace][golden]") {
  check_golden(spans_trace(), "spans.trace.json");
}

}  // namespace profagent::exporters
