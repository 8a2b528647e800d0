// Call stacks without the agent around them: the interning table (dedupe, concurrency, full),
// a stack captured here and symbolised (names, files, lines; a streamed window's segments and
// tail in one numbering), and the exporters' folded files (also folded part by part),
// stack-grouped table and trace stackFrames over a hand-made Trace.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "collector/api.h"
#include "collector/join.h"
#include "collector/stack_symbols.h"
#include "collector/stack_table.h"
#include "collector/stacks.h"
#include "collector/thread_buffer.h"
#include "exporters/folded_stacks.h"
#include "exporters/json_writer.h"
#include "exporters/output_stream.h"
#include "exporters/stack_text.h"
#include "exporters/summaries/tables.h"
#include "exporters/trace_stack_frames.h"

using namespace profagent;
using namespace profagent::collector;

TEST_CASE("a stack is interned once, different stacks get different ids") {
  StackTable table;
  REQUIRE(table.reserve(1024, 1 << 16));
  const uint64_t a[] = {0x401000, 0x402000, 0x403000};
  const uint64_t b[] = {0x401000, 0x402000, 0x403001};
  const StackId ia = table.intern(a, 3), ib = table.intern(b, 3);
  CHECK(ia != kNoStack);
  CHECK(ib != kNoStack);
  CHECK(ia != ib);
  CHECK(table.intern(a, 3) == ia);
  CHECK(table.intern(a, 2) != ia);  // a prefix is another stack
  const StackWords words = table.words(ia);
  REQUIRE(words.count == 3);
  CHECK(std::vector<uint64_t>(words.words, words.words + 3) == std::vector<uint64_t>(a, a + 3));
  CHECK(table.words(kNoStack).count == 0);
  CHECK(table.intern(a, 0) == kNoStack);
}

TEST_CASE("a full table interns nothing new, and what it holds stays found") {
  StackTable table;
  REQUIRE(table.reserve(4, 64));
  std::vector<StackId> ids;
  for (uint64_t i = 0; i < 4; ++i) {
    const uint64_t word = 0x1000 + i;
    ids.push_back(table.intern(&word, 1));
  }
  for (StackId id : ids) CHECK(id != kNoStack);
  const uint64_t another = 0x9999;
  CHECK(table.intern(&another, 1) == kNoStack);
  const uint64_t first = 0x1000;
  CHECK(table.intern(&first, 1) == ids[0]);
}

TEST_CASE("threads interning the same stacks at once agree on their content") {
  StackTable table;
  REQUIRE(table.reserve(1 << 12, 1 << 18));
  constexpr int kThreads = 8, kStacks = 500;
  std::vector<std::vector<StackId>> got(kThreads, std::vector<StackId>(kStacks));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int s = 0; s < kStacks; ++s) {
        const uint64_t words[] = {0x500000u + uint64_t(s), 0x600000, uint64_t(s) * 7};
        got[t][s] = table.intern(words, 3);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int s = 0; s < kStacks; ++s) {
    for (int t = 0; t < kThreads; ++t) {
      const StackWords w = table.words(got[t][s]);
      REQUIRE(w.count == 3);
      CHECK(w.words[0] == 0x500000u + uint64_t(s));
      CHECK(w.words[2] == uint64_t(s) * 7);
    }
  }
}

// ---- a stack captured here ----------------------------------------------------------------
namespace {

int g_capture_line = 0;

__attribute__((noinline)) uint32_t capture_in_leaf() {
  g_capture_line = __LINE__ + 1;
  const uint32_t id = capture_stack();
  asm volatile("" ::: "memory");
  return id;
}

__attribute__((noinline)) uint32_t capture_in_middle() {
  const uint32_t id = capture_in_leaf();
  asm volatile("" ::: "memory");
  return id;
}

bool stacks_enabled() {
  static const bool enabled = [] {
    set_dwarf_library(PROFAGENT_DWARF_LIBRARY);
    StackOptions options;
    options.strip_own_module = false;  // the collector is linked into this program
    options.table_slots = 1 << 12;
    options.arena_words = 1 << 16;
    std::string why;
    const bool ok = enable_stacks(options, why);
    INFO(why);
    return ok;
  }();
  return enabled;
}

}  // namespace

TEST_CASE("a captured stack is symbolised: demangled names, this file, the call's line") {
  REQUIRE(stacks_enabled());
  (void)new_event_id();  // registers this thread (the capture's re-entry mark lives in its buffer)
  uint32_t ids[2] = {};
  volatile int times = 2;  // a count the compiler cannot see: one call site, never unrolled
  for (int i = 0; i < times; ++i) ids[i] = capture_in_middle();
  const uint32_t raw = ids[0];
  REQUIRE(raw != kNoStack);
  CHECK(ids[1] == raw);  // the same stack again: the same id
  Trace trace;
  trace.host.emplace_back().stack = raw;
  symbolize_window_stacks(trace);
  REQUIRE(trace.host[0].stack == 1);
  const std::vector<uint32_t>& stack = trace.stacks.stacks.at(0);
  std::vector<std::string> labels;
  for (uint32_t frame : stack) labels.push_back(exporters::frame_label(trace.stacks.frames[frame]));
  INFO(labels.size() << " frames; first: " << (labels.empty() ? "" : labels[0]));
  // The capture itself is the innermost frame (nothing stripped here), then the leaf's call.
  auto leaf = std::find_if(labels.begin(), labels.end(), [](const std::string& l) {
    return l.find("capture_in_leaf()") != std::string::npos;
  });
  REQUIRE(leaf != labels.end());
  CHECK(*leaf == "stacks_test.cpp(" + std::to_string(g_capture_line) + "): (anonymous namespace)::capture_in_leaf()");
  REQUIRE(leaf + 1 != labels.end());
  CHECK(leaf[1].find("(anonymous namespace)::capture_in_middle()") != std::string::npos);
  CHECK(trace.drops.stacks_lost == 0);
}

TEST_CASE("a capture re-entered on its thread (a signal during an unwind) gives up and counts") {
  REQUIRE(stacks_enabled());
  (void)new_event_id();
  take_stack_counters();
  auto* buffer = static_cast<ThreadBuffer*>(tls_cursor);
  REQUIRE(buffer != nullptr);
  buffer->unwinding = true;  // what a signal handler's capture sees while its thread unwinds
  CHECK(capture_in_middle() == kNoStack);
  buffer->unwinding = false;
  CHECK(take_stack_counters().truncated == 1);
  CHECK(capture_in_middle() != kNoStack);
  CHECK(take_stack_counters().truncated == 0);
}

TEST_CASE("the join gives a call the stack tag that follows it, a tag without its call is counted") {
  JoinInput input;
  ThreadEvents& thread = input.threads.emplace_back();
  thread.tid = 7;
  auto event = [&](uint64_t id, EventKind kind, uint64_t arg0) {
    HostEvent e{};
    e.start = 100 * id, e.end = 100 * id + 50, e.id = id, e.kind = uint8_t(kind), e.arg0 = arg0;
    thread.events.push_back(e);
  };
  event(5, EventKind::StackTag, 9);  // its call went to the previous window
  event(6, EventKind::Runtime, 0);
  event(6, EventKind::StackTag, 3);
  event(7, EventKind::Runtime, 0);  // recorded without a stack
  Trace trace;
  const JoinCounts counts = join(std::move(input), trace);
  REQUIRE(trace.host.size() == 2);  // tags are no records
  CHECK(trace.host[0].id == 6);
  CHECK(trace.host[0].stack == 3);
  CHECK(trace.host[1].stack == 0);
  CHECK(counts.orphan_stacks == 1);
}

// A streamed window's tail joins what its segments held of a thread, then the rest of it: two
// lists of one thread, a call at the end of the first and its tag at the start of the second.
TEST_CASE("the join finds a tag's call at the end of an earlier list of its thread") {
  JoinInput input;
  auto event = [](ThreadEvents& thread, uint64_t id, EventKind kind, uint64_t arg0) {
    HostEvent e{};
    e.start = 100 * id, e.end = 100 * id + 50, e.id = id, e.kind = uint8_t(kind), e.arg0 = arg0;
    thread.events.push_back(e);
  };
  input.threads.resize(3);
  input.threads[0].tid = 7, input.threads[1].tid = 8, input.threads[2].tid = 7;
  event(input.threads[0], 1, EventKind::Runtime, 0);  // held: its tag had not come
  event(input.threads[1], 2, EventKind::Runtime, 0);
  event(input.threads[1], 2, EventKind::StackTag, 4);
  event(input.threads[2], 1, EventKind::StackTag, 3);
  event(input.threads[2], 3, EventKind::Runtime, 0);
  Trace trace;
  const JoinCounts counts = join(std::move(input), trace);
  REQUIRE(trace.host.size() == 3);
  for (const HostRecord& h : trace.host) CHECK(h.stack == (h.id == 1 ? 3u : h.id == 2 ? 4u : 0u));
  CHECK(counts.orphan_stacks == 0);
}

// Segments symbolised one by one and a tail left raw by its join are symbolised by one
// symbolizer into one numbering, the whole window's list in the tail.
TEST_CASE("a streamed window's segments and tail number their stacks alike") {
  REQUIRE(stacks_enabled());
  (void)new_event_id();
  const uint32_t a = capture_in_middle(), b = capture_in_leaf();
  REQUIRE((a != kNoStack && b != kNoStack && a != b));
  StreamedStacks streamed;
  Trace first, second, tail;
  first.window = second.window = tail.window = 4;
  first.host.emplace_back().stack = a;
  second.host.emplace_back().stack = b;
  second.host.emplace_back().stack = a;
  streamed.symbolize_segment(first);
  streamed.symbolize_segment(second);
  CHECK(first.host[0].stack == 1);
  CHECK(first.stacks.stacks.size() == 1);
  CHECK(second.host[0].stack == 2);
  CHECK(second.host[1].stack == 1);
  CHECK(second.stacks.stacks.size() == 2);
  tail.streamed.segments = 2;
  tail.host.emplace_back().stack = b;
  tail.host.emplace_back().stack = a;
  symbolize_window_stacks(tail);  // a streamed tail: its drop counters only, its raw ids kept
  REQUIRE(tail.host[0].stack == b);
  REQUIRE(tail.stacks.stacks.empty());
  streamed.adopt_tail(tail);
  CHECK(tail.host[0].stack == 2);
  CHECK(tail.host[1].stack == 1);
  REQUIRE(tail.stacks.stacks.size() == 2);
  auto labels = [](const Trace& t, uint32_t stack) {
    std::vector<std::string> out;
    for (uint32_t frame : t.stacks.stacks[stack - 1]) out.push_back(exporters::frame_label(t.stacks.frames[frame]));
    return out;
  };
  CHECK(labels(tail, 1) == labels(second, 1));
  CHECK(labels(tail, 2) == labels(second, 2));
  Trace next;  // a segment of the next window starts a new list
  next.window = 5;
  next.host.emplace_back().stack = b;
  streamed.symbolize_segment(next);
  CHECK(next.host[0].stack == 1);
  CHECK(next.stacks.stacks.size() == 1);
}

// ---- exporters over a hand-made trace ---------------------------------------------------
namespace {

// main -> step -> layer -> cudaLaunchKernel, and main -> step -> update -> cudaLaunchKernel.
Trace chain_trace() {
  Trace t;
  auto frame = [&](const char* function, int line) {
    StackFrame f;
    f.function = function, f.file = "/src/app.cpp", f.line = line, f.module = "/bin/app";
    t.stacks.frames.push_back(f);
    return uint32_t(t.stacks.frames.size() - 1);
  };
  const uint32_t main_ = frame("main", 30), step = frame("step(int)", 20), layer = frame("layer(int)", 10),
                 update = frame("update(int)", 15);
  t.stacks.stacks = {{layer, step, main_}, {update, step, main_}};
  for (int i = 0; i < 4; ++i) {
    HostRecord& h = t.host.emplace_back();
    h.name = "cudaLaunchKernel", h.kind = EventKind::Launch, h.id = uint64_t(i + 1);
    h.start_ns = 1000000 * uint64_t(i), h.end_ns = h.start_ns + 3000;  // 3 us each
    h.stack = i % 2 == 0 ? 1 : 2;
    DeviceRecord& d = t.device.emplace_back();
    d.kind = DeviceKind::Kernel, d.name = i % 2 == 0 ? "layer_kernel" : "update_kernel";
    d.start_ns = h.start_ns + 5000, d.end_ns = d.start_ns + (i % 2 == 0 ? 7000 : 2000), d.host = i;
  }
  return t;
}

}  // namespace

TEST_CASE("folded files: frames root first, the call last, integer microseconds per metric") {
  const Trace t = chain_trace();
  CHECK(exporters::render_folded(t, exporters::FoldedMetric::SelfCudaTimeTotal) ==
        "app.cpp(30): main;app.cpp(20): step(int);app.cpp(10): layer(int);cudaLaunchKernel 14\n"
        "app.cpp(30): main;app.cpp(20): step(int);app.cpp(15): update(int);cudaLaunchKernel 4\n");
  CHECK(exporters::render_folded(t, exporters::FoldedMetric::SelfCpuTimeTotal) ==
        "app.cpp(30): main;app.cpp(20): step(int);app.cpp(10): layer(int);cudaLaunchKernel 6\n"
        "app.cpp(30): main;app.cpp(20): step(int);app.cpp(15): update(int);cudaLaunchKernel 6\n");
}

// Folded lines are summed per distinct stack before their frames are labelled once: two
// stacks whose frames read the same (one line of code, two return addresses) still make one
// line, and an entry point (nvcc's __cudaLaunchKernel) is named by the API it implements.
TEST_CASE("folded files: distinct stacks that read the same make one line, calls by their API") {
  Trace t = chain_trace();
  StackFrame other_layer = t.stacks.frames[2];
  other_layer.address += 4;
  t.stacks.frames.push_back(other_layer);
  t.stacks.stacks.push_back({uint32_t(t.stacks.frames.size() - 1), 1, 0});  // reads as stack 1
  t.host[1].stack = 3;  // an update-kernel launch, now from the other "layer" frame
  t.host[3].name = "__cudaLaunchKernel";
  CHECK(exporters::render_folded(t, exporters::FoldedMetric::SelfCudaTimeTotal) ==
        "app.cpp(30): main;app.cpp(20): step(int);app.cpp(10): layer(int);cudaLaunchKernel 16\n"
        "app.cpp(30): main;app.cpp(20): step(int);app.cpp(15): update(int);cudaLaunchKernel 2\n");
}

// A streamed window's folded files: its parts (each record with the device records it issued)
// folded one by one make the files of the whole.
TEST_CASE("folded files folded part by part equal the whole trace's") {
  const Trace whole = chain_trace();
  exporters::FoldedStacks folded;
  for (size_t first : {0, 2}) {
    Trace part;
    part.stacks = whole.stacks;
    for (size_t i = first; i < first + 2; ++i) {
      part.host.push_back(whole.host[i]);
      part.device.push_back(whole.device[i]);
      part.device.back().host = int64_t(i - first);
    }
    folded.add(part, exporters::host_costs(part));
  }
  for (exporters::FoldedMetric metric : {exporters::FoldedMetric::SelfCudaTimeTotal, exporters::FoldedMetric::SelfCpuTimeTotal}) {
    CHECK(folded.render(whole.stacks, metric) == exporters::render_folded(whole, metric));
  }
}

TEST_CASE("group_by_stack_n splits rows by their N innermost frames, kernels by their launch's") {
  const Trace t = chain_trace();
  exporters::TableOptions options;
  options.group_by_stack_n = 2;
  options.sort_by = "self_cuda_time_total";
  const exporters::Table table = exporters::build_table(t, options);
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& r : table.rows) rows.emplace_back(r.name, r.source_location);
  CHECK(rows[0] == std::pair<std::string, std::string>("layer_kernel", "app.cpp(10): layer(int)\napp.cpp(20): step(int)"));
  CHECK(std::count_if(rows.begin(), rows.end(), [](auto& r) { return r.first == "cudaLaunchKernel"; }) == 2);
  const std::string text = exporters::render_table(table, options);
  CHECK(text.find("Source Location") != std::string::npos);
  CHECK(text.find("app.cpp(10): layer(int)  \n") != std::string::npos);  // first frame on the row
  CHECK(text.find("  app.cpp(20): step(int)\n") != std::string::npos);  // the next under it
}

TEST_CASE("trace stackFrames: a tree root first, shared outer frames written once, sf per stack") {
  const Trace t = chain_trace();
  exporters::TraceStackFrames frames(t);
  const uint64_t layer = frames.sf_of(t.host[0]), update = frames.sf_of(t.host[1]);
  CHECK(layer != 0);
  CHECK(update != 0);
  CHECK(layer != update);
  exporters::MemorySink sink;
  std::string error;
  auto stream = sink.open("frames", &error);
  {
    exporters::JsonWriter w(*stream);
    frames.write(w);
    w.flush();
  }
  stream->commit();
  const std::string json = sink.files().at("frames");
  // main and step are shared: 4 nodes for 2 stacks of 3 frames.
  CHECK(json.find("\"5\"") == std::string::npos);
  CHECK(json.find("\"4\": {\"name\": \"app.cpp(15): update(int)\", \"category\": \"app\", \"parent\": \"2\"}") !=
        std::string::npos);
  CHECK(json.find("\"1\": {\"name\": \"app.cpp(30): main\", \"category\": \"app\"}") != std::string::npos);
}
