// The loader reads back what the exporters wrote (nothing the tables use is lost) and Kineto's
// layout (steps, operators, calls linked to kernels, skipped kinds counted).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>

#include "agent/report/trace_loader.h"
#include "agent/report/trace_stacks.h"
#include "agent/report/trace_stream.h"
#include "exporters/exporter.h"
#include "exporters/stack_text.h"
#include "exporters/summaries/tables.h"
#include "synthetic_trace.h"
#include "trace_files.h"

using namespace profagent;
using namespace profagent::report;
using namespace profagent::report::test;

namespace {

std::string chrome_trace_text(const Trace& t) {
  exporters::MemorySink sink;
  exporters::ExportOptions options;
  options.write_table = options.write_summary = options.write_folded = false;
  REQUIRE(exporters::export_window(t, options, sink).ok());
  REQUIRE(sink.files().size() == 1);
  return sink.files().begin()->second;
}

std::string table_text(const Trace& t) {
  exporters::TableOptions options;
  return exporters::render_table(exporters::build_table(t, options), options);
}

// The sample trace with two steps (ranges the writer draws), shapes and a memory record.
Trace sample_with_steps() {
  Trace t = exporters::test::sample_trace();
  t.whole_run = false;
  t.steps = {{4, t.start_ns, t.start_ns + 105'000}, {5, t.start_ns + 105'000, t.start_ns + 450'000}};
  t.first_step = t.steps.front();
  t.last_step = t.steps.back();
  set_shapes(t, t.host[0], {{{4, 8}, {8, 2}}, {"float", "float"}});
  return t;
}

LoadedTrace load_text(const std::string& name, const std::string& text) {
  std::string error;
  std::optional<LoadedTrace> loaded = load_trace(write_file(name, text), error);
  INFO(error);
  REQUIRE(loaded);
  return std::move(*loaded);
}

const HostRecord* find_host(const Trace& t, std::string_view name) {
  for (const HostRecord& h : t.host) {
    if (h.name == name) return &h;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("a profagent trace read back gives the same key_averages table") {
  const Trace original = sample_with_steps();
  const LoadedTrace loaded = load_text("sample.trace.json", chrome_trace_text(original));
  const Trace& t = loaded.trace;
  CHECK(loaded.source == "profagent");
  CHECK(table_text(t) == table_text(original));
  CHECK(t.host.size() == original.host.size());
  CHECK(t.device.size() == original.device.size());
  CHECK(t.process.rank == 3);
  CHECK(t.process.world_size == 8);
  CHECK(t.process.pid == exporters::test::kPid);
  CHECK(t.process.exe_name == "train");
  CHECK(t.devices.size() == 1);
  CHECK(t.devices[0].num_sms == 40);
  CHECK(t.cupti_version == "13.0");
  CHECK(t.window == 1);
  CHECK_FALSE(t.whole_run);
  REQUIRE(t.steps.size() == 2);
  CHECK(t.steps[0].number == 4);
  CHECK(t.steps[1].end_ns - t.steps[1].start_ns == 345'000);
  CHECK(t.first_step.number == 4);
  CHECK(t.last_step.number == 5);
  // Every device record is joined to the call that issued it, as in the original.
  for (const DeviceRecord& d : t.device) {
    INFO(d.name);
    REQUIRE(d.host >= 0);
    const DeviceRecord* same = nullptr;
    for (const DeviceRecord& o : original.device) same = o.correlation == d.correlation ? &o : same;
    REQUIRE(same != nullptr);
    CHECK(t.host[size_t(d.host)].name == original.host[size_t(same->host)].name);
    CHECK(d.end_ns - d.start_ns == same->end_ns - same->start_ns);
  }
  const HostRecord* mm = find_host(t, "aten::mm");
  const HostRecord* launch = find_host(t, "cudaMemcpyAsync");
  REQUIRE((mm && launch));
  CHECK(launch->parent >= 0);
  CHECK(&t.host[size_t(launch->parent)] == mm);
  CHECK(launch->kind == EventKind::Memcpy);
  CHECK((launch->flags & kMemcpyKindMask) == 1);  // HtoD, from its copy's name
  CHECK(launch->arg0 == 4096);
  REQUIRE(shapes_of(t, *mm));
  CHECK(shapes_of(t, *mm)->dims == std::vector<std::vector<int64_t>>{{4, 8}, {8, 2}});
  CHECK(shapes_of(t, *mm)->types == std::vector<std::string>{"float", "float"});
  const HostRecord* malloc_call = find_host(t, "cudaMalloc");
  REQUIRE(malloc_call);
  CHECK((malloc_call->flags & kFlagFailed));
  CHECK(malloc_call->result == 2);
  CHECK(find_host(t, "cuLaunchKernel")->flags & kFlagDriverApi);
  CHECK(t.process.thread_names.size() == 2);
}

TEST_CASE("call stacks read back: every frame's text and each record's stack as written") {
  Trace original = sample_with_steps();
  StackFrame python{true, 0, "train_step", "", "/srv/job/train.py", 42};
  StackFrame native{false, 0x7f00aa, "at::mm(at::Tensor const&, at::Tensor const&)", "/usr/lib/libtorch.so",
                    "/build/aten/Mm.cpp", 7};
  StackFrame no_line{false, 0x7f00bb, "cudaLaunchKernel", "/usr/lib/libcudart.so.13", "", 0};
  StackFrame address{false, 0x4010f0, "", "/opt/app/bin/train", "", 0};
  StackFrame jit{false, 0x7fffdead, "", "", "", 0};
  StackFrame odd_name{false, 0x1, "operator()(int) (lambda)", "/lib/x (y)/libz.so", "", 0};
  original.stacks.frames = {python, native, no_line, address, jit, odd_name};
  original.stacks.stacks = {{2, 1, 0}, {4, 3, 5, 0}, {1, 0}};
  for (std::size_t i = 0; i < original.host.size(); ++i) original.host[i].stack = uint32_t(i % 4);
  const Trace t = load_text("stacks.trace.json", chrome_trace_text(original)).trace;
  for (const StackFrame& f : original.stacks.frames) {
    INFO(exporters::frame_label(f));
    CHECK(exporters::frame_label(frame_of_label(exporters::frame_label(f))) == exporters::frame_label(f));
  }
  REQUIRE(t.host.size() == original.host.size());
  std::map<std::string, std::string> written, read;  // record name and start -> its stack, innermost first
  auto stack_text = [](const Trace& trace, const HostRecord& h) {
    const std::vector<uint32_t>* stack = exporters::stack_of(trace, h);
    return stack ? exporters::innermost_lines(trace, *stack, 64) : std::string("(none)");
  };
  auto first_start = [](const Trace& trace) {  // times are read back relative to the file's base
    uint64_t first = UINT64_MAX;
    for (const HostRecord& h : trace.host) first = std::min(first, h.start_ns);
    return first;
  };
  for (const HostRecord& h : original.host) {
    written[h.name + "@" + std::to_string(h.start_ns - first_start(original))] = stack_text(original, h);
  }
  for (const HostRecord& h : t.host) read[h.name + "@" + std::to_string(h.start_ns - first_start(t))] = stack_text(t, h);
  for (const auto& [record, stack] : written) {
    INFO(record);
    CHECK(read[record] == stack);
  }
  CHECK(t.stacks.stacks.size() == original.stacks.stacks.size());
}

TEST_CASE("a gzip trace reads as the plain one") {
  const std::string text = chrome_trace_text(sample_with_steps());
  const LoadedTrace plain = load_text("plain.trace.json", text);
  std::string error;
  std::optional<LoadedTrace> gz = load_trace(write_gzip("packed.trace.json.gz", text), error);
  INFO(error);
  REQUIRE(gz);
  CHECK(table_text(gz->trace) == table_text(plain.trace));
  CHECK(gz->trace.host.size() == plain.trace.host.size());
  CHECK(gz->skipped == plain.skipped);
}

TEST_CASE("chunk and batch boundaries anywhere give the same events and metadata") {
  const std::string path = write_file("bounds.trace.json", chrome_trace_text(sample_with_steps()));
  auto run = [&](StreamLimits limits, std::string& all) {
    std::string metadata, error;
    uint64_t events = 0, batches = 0;
    const BatchFn on_batch = [&](std::string_view batch, uint64_t, std::string&) {
      all += batch;
      ++batches;
      return true;
    };
    REQUIRE(stream_trace(path, limits, on_batch, metadata, events, error));
    return std::tuple(metadata, events, batches);
  };
  std::string whole, pieces;
  const auto [meta1, events1, batches1] = run(StreamLimits{}, whole);
  for (std::size_t chunk : {1, 2, 7, 64, 333}) {
    pieces.clear();
    const auto [meta2, events2, batches2] = run(StreamLimits{chunk, 200}, pieces);
    CHECK(meta2 == meta1);
    CHECK(events2 == events1);
    CHECK(batches2 > 1);
    // The same events in the same order: batches differ only by their "],[" joints.
    std::string joined = pieces;
    for (std::size_t at; (at = joined.find("]["))  != std::string::npos;) joined.replace(at, 2, ",");
    CHECK(joined == whole);
  }
  CHECK(batches1 == 1);
  CHECK(meta1.find("\"traceEvents\": []") != std::string::npos);
}

// A Kineto trace as torch.profiler writes it (shape from its writer; values invented).
constexpr const char* kKineto = R"json({
  "schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "GPU", "numSms": 80}],
  "distributedInfo": {"backend": "nccl", "rank": 2, "world_size": 4},
  "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 10, "tid": 11, "ts": 1000, "dur": 500.5, "args": {"External id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 10, "tid": 11, "ts": 1010.25, "dur": 100, "args": {"External id": 2, "Input Dims": [[2, 3], [], [2, 3]], "Input type": ["float", "Scalar", "float"]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 1020, "dur": 5, "args": {"External id": 2, "cbid": 211, "correlation": 77}},
  {"ph": "s", "id": 77, "pid": 10, "tid": 11, "ts": 1020, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 1030, "dur": 12.5, "args": {"External id": 2, "device": 0, "stream": 7, "correlation": 77, "grid": [4, 1, 1], "block": [128, 1, 1]}},
  {"ph": "f", "id": 77, "pid": 0, "tid": 7, "ts": 1030, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "aten::add", "pid": 0, "tid": 7, "ts": 1030, "dur": 12.5, "args": {"External id": 2}},
  {"ph": "X", "cat": "python_function", "name": "train.py(12): step", "pid": 10, "tid": 11, "ts": 1000, "dur": 400, "args": {"Python id": 3}},
  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 11, "ts": 1050, "args": {"Total Reserved": 2097152, "Total Allocated": 512, "Bytes": 512, "Addr": 1234, "Device Id": 0, "Device Type": 1}},
  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 900, "dur": 700, "args": {"Op count": 0}},
  {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "python"}},
  {"ph": "M", "name": "thread_name", "pid": 10, "tid": 11, "args": {"name": "thread 11 (python)"}},
  {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": 1600.000}
  ],
  "traceName": "x.pt.trace.json", "baseTimeNanoseconds": 1700000000000000000
})json";

TEST_CASE("a Kineto trace: steps, operators, calls linked to kernels, memory, skipped kinds") {
  const LoadedTrace loaded = load_text("kineto.pt.trace.json", kKineto);
  const Trace& t = loaded.trace;
  CHECK(loaded.source == "kineto");
  CHECK(loaded.skipped == std::vector<std::pair<std::string, uint64_t>>{
                              {"Trace", 1}, {"gpu_user_annotation", 1}, {"python_function", 1}});
  CHECK(t.process.rank == 2);
  CHECK(t.process.world_size == 4);
  CHECK(t.process.pid == 10);
  CHECK(t.process.exe_name == "python");
  CHECK(t.unix_offset_ns == 1700000000000000000);
  REQUIRE(t.steps.size() == 1);
  CHECK(t.steps[0].number == 7);
  CHECK(t.steps[0].start_ns == 1'000'000);
  CHECK(t.steps[0].end_ns == 1'500'500);
  CHECK(t.first_step.number == 7);
  REQUIRE(t.host.size() == 3);
  CHECK(t.host[0].kind == EventKind::Step);
  CHECK(t.host[0].arg0 == 7);
  CHECK(t.host[1].kind == EventKind::Operator);
  CHECK(t.host[1].start_ns == 1'010'250);
  CHECK(t.host[1].parent == 0);
  REQUIRE(shapes_of(t, t.host[1]));
  CHECK(shapes_of(t, t.host[1])->dims == std::vector<std::vector<int64_t>>{{2, 3}, {}, {2, 3}});
  CHECK(t.host[2].kind == EventKind::Launch);
  CHECK(t.host[2].parent == 1);
  CHECK(t.host[2].external_id == t.host[1].id);
  REQUIRE(t.device.size() == 1);
  CHECK(t.device[0].host == 2);
  CHECK(t.device[0].stream == 7);
  CHECK(t.device[0].end_ns - t.device[0].start_ns == 12'500);
  CHECK(t.device[0].grid[0] == 4);
  REQUIRE(t.memory.records.size() == 1);
  CHECK(t.memory.enabled);
  CHECK(t.memory.records[0].host == 1);  // inside aten::add
  CHECK(t.memory.records[0].device == 0);
  CHECK(t.memory.records[0].bytes == 512);
  CHECK(t.end_ns == 1'600'000);
  // torch's table has the step row and the operator's CUDA time.
  const std::string table = table_text(t);
  CHECK(table.find("ProfilerStep*") != std::string::npos);
  CHECK(table.find("add_kernel") != std::string::npos);
}

TEST_CASE("times keep every nanosecond digit") {
  const LoadedTrace loaded = load_text("digits.json", R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 7889237999999.999, "dur": 0.0016},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1.5e3, "dur": 2}]})");
  REQUIRE(loaded.trace.host.size() == 2);
  CHECK(loaded.trace.host[1].start_ns == 7889237999999999ull);
  CHECK(loaded.trace.host[1].end_ns - loaded.trace.host[1].start_ns == 2);  // 1.6 ns rounds to 2
  CHECK(loaded.trace.host[0].start_ns == 1'500'000);
}
