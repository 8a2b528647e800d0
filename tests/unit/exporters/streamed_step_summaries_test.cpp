// The per-step summaries of a streamed window (exporters/summaries/streamed_step_summaries.h):
// folded part by part, each step made once its records are in (the collector's mark with each
// part: StreamedWindow::complete_before_ns), they print exactly what compute_summaries prints for
// the window joined whole; a record of a step made already (one no mark covers) makes them give
// up rather than print a figure without it.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "exporters/summaries/streamed_summaries.h"
#include "exporters/summaries/summaries.h"
#include "exporters/summaries/trace_scope.h"
#include "steps_so_far.h"

using namespace profagent;
using namespace profagent::exporters;

using profagent::exporters::testing::steps_so_far;

namespace {

HostRecord op(const char* name, uint32_t tid, uint64_t start, uint64_t end, EventKind kind = EventKind::Operator) {
  HostRecord h;
  h.name = name;
  h.tid = tid;
  h.kind = kind;
  h.start_ns = start;
  h.end_ns = end;
  return h;
}

// A launch inside `parent` (an index of `t.host`) and its kernel.
void launch(Trace& t, int64_t parent, uint64_t start, uint64_t kernel_start, uint64_t kernel_end, const char* kernel) {
  HostRecord call = op("cudaLaunchKernel", t.host[std::size_t(parent)].tid, start, start + 2, EventKind::Launch);
  call.parent = parent;
  t.host.push_back(call);
  DeviceRecord d;
  d.kind = DeviceKind::Kernel;
  d.name = kernel;
  d.start_ns = kernel_start;
  d.end_ns = kernel_end;
  d.host = int64_t(t.host.size() - 1);
  t.device.push_back(d);
}

// One training step on thread `tid` from `at`: forward (inferred), backward with a kernel that
// runs on into the next step, an optimizer operator, a communication kernel.
void step_records(Trace& t, uint32_t tid, uint64_t at) {
  t.host.push_back(op("diopiConvolution2d", tid, at + 10, at + 30));
  launch(t, int64_t(t.host.size() - 1), at + 12, at + 15, at + 40, "conv_kernel");
  t.host.push_back(op("diopiConvolution2dBackward", tid, at + 40, at + 60));
  launch(t, int64_t(t.host.size() - 1), at + 42, at + 60, at + 110, "conv_backward_kernel");
  t.host.push_back(op("diopiAllReduce", tid, at + 62, at + 68));
  launch(t, int64_t(t.host.size() - 1), at + 63, at + 80, at + 95, "ncclAllReduceKernel");
  t.host.push_back(op("diopiSgd", tid, at + 70, at + 90));
  t.host.push_back(op("cudaStreamSynchronize", tid, at + 91, at + 99, EventKind::Sync));
}

// `mark`: every record of later parts starts at or after it (the collector's mark).
Trace part_of(std::vector<StepSpan> steps, uint64_t mark = 0) {
  Trace t;
  t.window = 1;
  t.steps = std::move(steps);
  t.streamed.complete_before_ns = t.streamed.complete_but_scopes_before_ns = mark;
  return t;
}

// `whole` gets `part`'s records, its links moved by the records before them.
void append(Trace& whole, const Trace& part) {
  const int64_t host_base = int64_t(whole.host.size());
  for (HostRecord h : part.host) {
    if (h.parent >= 0) h.parent += host_base;
    whole.host.push_back(h);
  }
  for (DeviceRecord d : part.device) {
    if (d.host >= 0) d.host += host_base;
    whole.device.push_back(d);
  }
}

SummaryOptions per_step_options() {
  SummaryOptions o;
  o.names = {"overview", "model", "distributed", "perf", "step_trace"};
  o.unit = TimeUnit::Ns;  // every figure to the nanosecond
  return o;
}

}  // namespace

TEST_CASE("per-step summaries folded step by step equal the whole window's", "[exporters][streamed]") {
  const std::vector<StepSpan> steps = {{0, 100, 200}, {1, 200, 300}, {2, 300, 400}};
  Trace first = part_of({}, 200), second = part_of({}, 300), tail = part_of(steps);
  step_records(first, 7, 100);
  step_records(first, 8, 100);  // a second thread, the same records at the same times
  step_records(second, 7, 200);
  step_records(second, 8, 200);
  step_records(tail, 7, 300);
  tail.host.push_back(op("diopiAdd", 7, 405, 410));  // after the last step: in none
  Trace whole = part_of(steps);
  for (const Trace* part : {&first, &second, &tail}) append(whole, *part);

  const SummaryOptions options = per_step_options();
  SummaryFold fold(options);
  fold.add(first, scope_trace(first, false), steps_so_far({{0, 100, 200}}, 200));
  fold.add(second, scope_trace(second, false), steps_so_far({{1, 200, 300}}, 300));  // steps 0 and 1 are made
  fold.add_last(tail, scope_trace(tail, false));
  REQUIRE(fold.not_folded().empty());
  REQUIRE(fold.per_step_not_folded().empty());
  for (const std::string& name : options.names) CHECK(fold.not_made(name).empty());
  const std::string expected = render_summaries_text(whole, compute_summaries(whole, options), options);
  const std::string folded = render_summaries_text(whole, fold.summaries(tail), options);
  CHECK(folded == expected);
  if (std::getenv("SHOW")) std::puts(expected.c_str());
  CHECK(expected.find("Communication") != std::string::npos);
  CHECK(expected.find("diopiConvolution2dBackward") != std::string::npos);  // the BP points
}

TEST_CASE("a thread inside a call across the cut holds its step until the call comes", "[exporters][streamed]") {
  const std::vector<StepSpan> steps = {{0, 100, 200}, {1, 200, 300}};
  // Thread 7 is past step 0, but thread 9 is inside an operator since 150 (the mark): step 0
  // waits for it, and is made when it comes.
  Trace first = part_of({}, 150), late = part_of({}, 300), tail = part_of(steps);
  step_records(first, 7, 100);
  first.host.push_back(op("diopiAdd", 7, 250, 260));
  late.host.push_back(op("diopiMul", 9, 150, 160));
  Trace whole = part_of(steps);
  for (const Trace* part : {&first, &late, &tail}) append(whole, *part);
  const SummaryOptions options = per_step_options();
  SummaryFold fold(options);
  fold.add(first, scope_trace(first, false), steps_so_far({{0, 100, 200}, {1, 200, 300}}, 300));
  fold.add(late, scope_trace(late, false), steps_so_far({}, 300));
  fold.add_last(tail, scope_trace(tail, false));
  REQUIRE(fold.per_step_not_folded().empty());
  const std::string expected = render_summaries_text(whole, compute_summaries(whole, options), options);
  CHECK(render_summaries_text(whole, fold.summaries(tail), options) == expected);
}

TEST_CASE("a record of a step made already gives the per-step summaries up, named", "[exporters][streamed]") {
  const std::vector<StepSpan> steps = {{0, 100, 200}, {1, 200, 300}};
  // A record no mark covered (an NVTX start/end range recorded at its end, on another thread).
  Trace first = part_of({}, 250), late = part_of({}, 300), tail = part_of(steps);
  step_records(first, 7, 100);
  first.host.push_back(op("diopiAdd", 7, 250, 260));  // thread 7 is past step 0: it is made
  late.host.push_back(op("diopiMul", 9, 150, 160));   // thread 9's record of step 0 comes after
  SummaryFold fold(per_step_options());
  fold.add(first, scope_trace(first, false), steps_so_far({{0, 100, 200}, {1, 200, 300}}, 300));
  REQUIRE(fold.per_step_not_folded().empty());
  fold.add(late, scope_trace(late, false), steps_so_far({}, 300));
  fold.add_last(tail, scope_trace(tail, false));
  CHECK(fold.per_step_not_folded().find("a record of step 0 that its figures are made of came after") != std::string::npos);
  CHECK(fold.not_made("model").find("given up") != std::string::npos);
  const std::string text = render_streamed_summaries(tail, fold, Table{}, MemorySummary{}, per_step_options());
  CHECK(text.find("Not computed for a streamed window: overview, model, distributed, perf, step_trace (given up") !=
        std::string::npos);
  CHECK(text.find("Model Summary") == std::string::npos);
}

TEST_CASE("a late runtime call of a step made already only adds to the Overview: still exact", "[exporters][streamed]") {
  const std::vector<StepSpan> steps = {{0, 100, 200}, {1, 200, 300}};
  Trace first = part_of({}, 200), late = part_of({}, 300), tail = part_of(steps);
  step_records(first, 7, 100);
  step_records(first, 7, 200);
  late.host.push_back(op("cudaMalloc", 9, 150, 185, EventKind::Alloc));  // one no mark covered
  Trace whole = part_of(steps);
  for (const Trace* part : {&first, &late, &tail}) append(whole, *part);
  const SummaryOptions options = per_step_options();
  SummaryFold fold(options);
  fold.add(first, scope_trace(first, false), steps_so_far({{0, 100, 200}}, 200));
  fold.add(late, scope_trace(late, false), steps_so_far({{1, 200, 300}}, 300));
  fold.add_last(tail, scope_trace(tail, false));
  REQUIRE(fold.per_step_not_folded().empty());
  CHECK(render_summaries_text(whole, fold.summaries(tail), options) ==
        render_summaries_text(whole, compute_summaries(whole, options), options));
}

TEST_CASE("a window without steps leaves the per-step summaries not computed, and says why", "[exporters][streamed]") {
  Trace first = part_of({}), tail = part_of({});
  step_records(first, 7, 100);
  step_records(tail, 7, 200);
  SummaryFold fold(per_step_options());
  StepsSoFar none;
  none.current = true;
  fold.add(first, scope_trace(first, false), none);
  fold.add_last(tail, scope_trace(tail, false));
  CHECK(fold.per_step_not_folded().empty());  // not a give-up: nothing to say on stderr
  CHECK(fold.not_made("overview").find("a window without steps") != std::string::npos);
}
