// compute_summaries on hand-made traces whose every number is known: interval merging (the
// two-thread example, nested, identical and touching intervals), phases from DIOPI names, the
// model, perf and step-trace figures, operator families.
#include <catch2/catch.hpp>

#include <cstdio>
#include <random>

#include "exporters/summaries/intervals.h"
#include "exporters/summaries/summaries.h"
#include "exporters/summaries/trace_scope.h"

using namespace profagent;
using namespace profagent::exporters;

namespace {

int64_t add_host(Trace& t, uint32_t tid, EventKind kind, std::string name, uint64_t start, uint64_t end,
                 int64_t parent = kNoIndex) {
  HostRecord h;
  h.tid = tid;
  h.kind = kind;
  h.name = std::move(name);
  h.start_ns = start;
  h.end_ns = end;
  h.parent = parent;
  h.id = t.host.size() + 1;
  t.host.push_back(h);
  return static_cast<int64_t>(t.host.size() - 1);
}

void add_kernel(Trace& t, std::string name, uint64_t start, uint64_t end, uint32_t stream, int64_t host = kNoIndex) {
  DeviceRecord d;
  d.kind = DeviceKind::Kernel;
  d.name = std::move(name);
  d.start_ns = start;
  d.end_ns = end;
  d.stream = stream;
  d.host = host;
  t.device.push_back(d);
}

// Step 1: the overlap cases. Step 2: a DIOPI training step.
Trace two_steps() {
  Trace t;
  t.steps = {{1, 0, 1000}, {2, 1000, 2000}};
  add_host(t, 1, EventKind::Step, "ProfilerStep#1", 0, 1000);
  const int64_t a = add_host(t, 1, EventKind::Operator, "opA", 100, 300);
  add_host(t, 1, EventKind::Operator, "inner", 120, 200, a);
  add_host(t, 1, EventKind::Operator, "opA", 500, 700);
  add_host(t, 2, EventKind::Operator, "opB", 150, 400);
  add_host(t, 2, EventKind::Operator, "opB", 600, 650);
  add_kernel(t, "k1", 200, 400, 7);
  add_kernel(t, "k2", 300, 500, 8);          // overlaps k1
  add_kernel(t, "k3", 600, 700, 7);
  add_kernel(t, "k3", 600, 700, 8);          // identical
  add_kernel(t, "ncclAllReduce", 700, 800, 9);  // touches k3
  add_host(t, 1, EventKind::Step, "ProfilerStep#2", 1000, 2000);
  add_host(t, 1, EventKind::Operator, "diopiConvolution2d", 1100, 1300);
  const int64_t bwd = add_host(t, 1, EventKind::Operator, "diopiConvolution2dBackward", 1400, 1600);
  const int64_t launch = add_host(t, 1, EventKind::Launch, "cudaLaunchKernel", 1450, 1460, bwd);
  add_host(t, 1, EventKind::Operator, "diopiSgd", 1700, 1800);
  add_kernel(t, "conv_bwd", 1500, 1550, 7, launch);
  return t;
}

SummaryOptions all_summaries() {
  SummaryOptions o;
  std::string error;
  REQUIRE(parse_summary_names("all", o.names, error));
  return o;
}

const TimeShare& share(const std::vector<TimeShare>& rows, std::string_view name) {
  for (const TimeShare& r : rows) {
    if (r.name == name) return r;
  }
  FAIL("no row " << name);
  return rows.front();
}

}  // namespace

TEST_CASE("intervals merge: nested, identical and touching count once") {
  std::vector<Interval> nested{{0, 100}, {10, 20}};
  CHECK(merged_length(nested) == 100);
  std::vector<Interval> identical{{5, 15}, {5, 15}};
  CHECK(merged_length(identical) == 10);
  std::vector<Interval> touching{{0, 10}, {10, 30}};
  CHECK(merged_length(touching) == 30);
  CHECK(touching.size() == 1);
  std::vector<Interval> apart{{0, 10}, {20, 30}}, other{{5, 25}};
  merge_intervals(apart);
  CHECK(overlap_length(apart, merge_intervals(other)) == 10);
}

TEST_CASE("intervals merge: out of order and in order give the same union") {
  std::vector<Interval> shuffled{{40, 50}, {0, 10}, {45, 60}, {5, 20}, {30, 31}};
  std::vector<Interval> sorted{{0, 10}, {5, 20}, {30, 31}, {40, 50}, {45, 60}};
  CHECK(merged_length(shuffled) == 41);
  CHECK(merged_length(sorted) == 41);
  CHECK(shuffled.size() == 3);
  CHECK(shuffled[2].start == 40);
  CHECK(shuffled[2].end == 60);
}

TEST_CASE("union gatherer: merged_length's figure for intervals in order, out of order and empty") {
  std::mt19937 random(28);
  for (int round = 0; round < 200; ++round) {
    std::vector<Interval> intervals;
    uint64_t start = 0;
    const bool in_order = round % 2 == 0;
    for (int i = 0; i < 50; ++i) {
      start = in_order ? start + random() % 20 : random() % 1000;
      intervals.push_back({start, start + random() % 30});  // some empty (end == start)
    }
    if (round % 4 == 2) std::swap(intervals[10], intervals[40]);  // one late in an ordered run
    UnionGatherer gathered;
    for (const Interval& i : intervals) gathered.add(i.start, i.end);
    CHECK(gathered.length() == merged_length(intervals));
  }
  UnionGatherer none;
  CHECK(none.length() == 0);
}

TEST_CASE("communication kernels: nccl, rccl or hccl in any case, anywhere in the name") {
  CHECK(is_communication("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
  CHECK(is_communication("void RCCL_kernel<int>(int)"));
  CHECK(is_communication("HcclAllReduce"));
  CHECK(is_communication("xNcCl"));
  CHECK_FALSE(is_communication("ncc"));
  CHECK_FALSE(is_communication("nccx_l"));
  CHECK_FALSE(is_communication("void gemm_kernel<float, 128, 128>(float const*, float const*, float*, int)"));
  CHECK_FALSE(is_communication(""));
}

TEST_CASE("overview: the two-thread example and device types merge per type") {
  const Trace t = two_steps();
  const Summaries s = compute_summaries(t, all_summaries());
  CHECK(s.span_cpu_ns == 2000);
  // Thread 1 [100,300] [500,700], thread 2 [150,400] [600,650] -> [100,400] [500,700]; + step 2's three.
  CHECK(share(s.overview_cpu, "Operator").time_ns == 300 + 200 + 200 + 200 + 100);
  CHECK(share(s.overview_cpu, "Operator").calls == 7);
  CHECK(share(s.overview_cpu, "OperatorInner").calls == 1);
  CHECK(share(s.overview_cpu, "OperatorInner").time_ns == 80);
  // k1 ∪ k2 = [200,500]; k3 twice = [600,700]; touching nccl -> [600,800]; conv_bwd 50.
  CHECK(share(s.overview_gpu, "Kernel").time_ns == 300 + 200 + 50);
  CHECK(share(s.overview_gpu, "Communication").time_ns == 100);
  CHECK(share(s.distributed, "Computation").time_ns == 300 + 100 + 50);
  CHECK(share(s.distributed, "Overlap").time_ns == 0);
}

TEST_CASE("phases from DIOPI names: model, perf and the step trace") {
  const Trace t = two_steps();
  const Summaries s = compute_summaries(t, all_summaries());
  REQUIRE(s.model.size() == 6);
  CHECK(s.model[2].name == "Forward");
  // Step 1 has no backward or optimizer: every outermost operator, [100, 700]; step 2: [1100, 1300].
  CHECK(s.model[2].cpu->total_ns == 600 + 200);
  CHECK(s.model[3].cpu->total_ns == 200);         // Backward in step 2
  CHECK(s.model[3].gpu->total_ns == 50);
  CHECK(s.model[4].cpu->total_ns == 100);         // diopiSgd
  REQUIRE(s.step_trace.size() == 2);
  const StepTraceStep& st = s.step_trace[1];
  CHECK(st.fp == "diopiConvolution2d");
  CHECK(st.bp == "diopiConvolution2dBackward");
  CHECK(st.iteration_gap_ns == 100);
  CHECK(st.fp_bp_ns == 500);
  CHECK(st.tail_ns == 400);
  CHECK_FALSE(s.step_trace[0].complete);  // step 1 has no backward
  REQUIRE(s.perf.size() == 2);
  CHECK(s.perf[0].batch_cost_ns == 1000);
}

TEST_CASE("operator families") {
  CHECK(operator_family("diopiConvolution2d") == "Convolution");
  CHECK(operator_family("diopiConvolution2dBackward") == "Convolution");
  CHECK(operator_family("diopiAddInpScalar") == "Add");
  CHECK(operator_family("aten::conv2d") == "conv2d");
  CHECK(operator_family("aten::add_") == "add");
  CHECK(operator_family("aten::convolution_backward") == "convolution");
  CHECK(operator_family("autograd::engine::evaluate_function: MulBackward0") == "Mul");
  CHECK(operator_family("MulBackward0") == "Mul");
  CHECK(operator_family("_") == "_");
}

TEST_CASE("text and csv carry every requested summary") {
  const Trace t = two_steps();
  SummaryOptions o = all_summaries();
  o.op_detail = true;
  const Summaries s = compute_summaries(t, o);
  const std::string text = render_summaries_text(t, s, o);
  for (const char* title : {"Device Summary", "Overview Summary", "Model Summary", "Distributed Summary",
                            "Operator Summary", "Kernel Summary", "Memory Manipulation Summary",
                            "UserDefined Summary", "Perf Summary", "Step Trace", "Operator Type Statistics"}) {
    INFO(title);
    CHECK(text.find(title) != std::string::npos);
  }
  CHECK(text.find("Forward: inferred") != std::string::npos);
  CHECK(text.find("Backward: operators named") != std::string::npos);
  const std::vector<CsvTable> csv = render_summaries_csv(t, s, o, "t.json");
  REQUIRE(csv.size() == o.names.size());
  CHECK(csv[4].name == "operator");
  CHECK(csv[4].header.rfind("Trace,Thread,Name,Depth,Calls,CPU Total (ms),CPU Avg (ms),CPU Max (ms),CPU Min (ms),"
                            "CPU Ratio(%),GPU Total (ms)", 0) == 0);
}

TEST_CASE("print the summaries of the hand-made trace", "[.print]") {
  const Trace t = two_steps();
  SummaryOptions o = all_summaries();
  o.op_detail = true;
  const Summaries s = compute_summaries(t, o);
  std::fputs(render_summaries_text(t, s, o).c_str(), stdout);
}

TEST_CASE("the --steps option keeps the records of the chosen steps with their links") {
  const Trace t = two_steps();
  std::string error;
  const std::optional<Trace> only2 = select_steps(t, 2, 2, error);
  REQUIRE(only2);
  CHECK(only2->steps.size() == 1);
  CHECK(only2->host.size() == 5);
  REQUIRE(only2->device.size() == 1);
  REQUIRE(only2->device[0].host >= 0);
  CHECK(only2->host[only2->device[0].host].name == "cudaLaunchKernel");
  CHECK(only2->host[only2->host[only2->device[0].host].parent].name == "diopiConvolution2dBackward");
  const Summaries s = compute_summaries(*only2, all_summaries());
  CHECK(s.span_cpu_ns == 1000);
  CHECK(s.model[3].gpu->total_ns == 50);
  CHECK_FALSE(select_steps(t, 5, 9, error));
  CHECK(error.find("1-2") != std::string::npos);
}

TEST_CASE("one default: the report starts from the agent's sort key and row limit") {
  const SummaryOptions report_default;
  SummaryOptions agent_default;  // what export_options() makes of PROFAGENT_SORT_BY's default
  std::string error;
  REQUIRE(apply_sort_key(kDefaultSortKey, agent_default, error));
  CHECK(report_default.sort_by == agent_default.sort_by);
  CHECK(report_default.table.sort_by == agent_default.table.sort_by);
  CHECK(report_default.row_limit == kDefaultRowLimit);
  CHECK(report_default.table.row_limit == kDefaultRowLimit);
}

TEST_CASE("one computation: the window's table, memory summary and summaries come from the same costs") {
  const Trace t = two_steps();
  SummaryOptions o = all_summaries();
  const Summaries window = compute_window_summaries(t, o);
  const Table alone = build_table(t, o.table);
  REQUIRE(window.key_averages.rows.size() == alone.rows.size());
  for (std::size_t i = 0; i < alone.rows.size(); ++i) {
    INFO(alone.rows[i].name);
    CHECK(window.key_averages.rows[i].name == alone.rows[i].name);
    CHECK(window.key_averages.rows[i].self_cpu_ns == alone.rows[i].self_cpu_ns);
    CHECK(window.key_averages.rows[i].self_cuda_ns == alone.rows[i].self_cuda_ns);
    CHECK(window.key_averages.rows[i].cuda_total_ns == alone.rows[i].cuda_total_ns);
  }
  // The backward operator's kernel: its launch's device time is the operator's self CUDA time in
  // the table and the operator's GPU time in the Operator Summary.
  const HostCosts costs = host_costs(t);
  const std::size_t backward = 8, launch = 9;
  REQUIRE(t.host[backward].name == "diopiConvolution2dBackward");
  CHECK(costs.own_device(launch) == 50);  // the launch issued it
  CHECK(costs.self_device(launch) == 0);  // a runtime call is no scope
  CHECK(costs.own_device(backward) == 0);
  CHECK(costs.device(backward) == 50);
  CHECK(costs.self_device(backward) == 50);
  CHECK(costs.self_cpu_ns[backward] == 200 - 10);
  // The exit table's text is the report's key_averages block and memory block, without titles.
  o.names = {"key_averages"};
  const std::string report = render_summaries_text(t, compute_summaries(t, o), o);
  const std::string exit_table = render_exit_table(t, window, o);
  REQUIRE(report.find('\n') != std::string::npos);
  CHECK(report.substr(0, report.find('\n')).find("key_averages") != std::string::npos);
  CHECK(report.substr(report.find('\n') + 1) == exit_table + "\n");
}
