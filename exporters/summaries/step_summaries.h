// Internal to the summaries: the parts computed from steps and phases (step_summaries.cpp) and
// from grouped rows (row_summaries.cpp), called by compute_summaries in that order.
#pragma once

#include <array>
#include <string_view>
#include <tuple>
#include <vector>

#include "exporters/summaries/intervals.h"
#include "exporters/summaries/summaries.h"
#include "exporters/summaries/trace_scope.h"

namespace profagent::exporters {

void compute_span(const Trace& t, const TraceScope& s, Summaries& out);
void compute_device(const Trace& t, const TraceScope& s, Summaries& out);
void compute_overview(const Trace& t, const TraceScope& s, Summaries& out);
void compute_model(const Trace& t, const TraceScope& s, Summaries& out);
void compute_distributed(const Trace& t, const TraceScope& s, Summaries& out);
void compute_perf(const TraceScope& s, Summaries& out);
// The Device Summary's CPU rows and elapsed time (of the trace's /proc CPU times, else of
// out.span_cpu_ns): the first part of compute_device, also a streamed window's.
void device_cpu_figures(const Trace& t, Summaries& out);
// The Device Summary's base of one device: the steps' time as that device saw it, step k
// widened to `kernels[k]`, the extent of its kernels in step k ({UINT64_MAX, 0} or absent: none).
// When the host runs ahead, a step's kernels run on after its host end; widening keeps the busy
// time inside the base, so utilisation <= 100%.
uint64_t widened_steps_length(std::vector<Interval> steps, const std::vector<Interval>& kernels);
void compute_step_trace(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);

// The parts of the summaries above that are a function of one step's records, each with one
// definition for a whole window (the compute_* above) and a streamed one, which computes a step
// once its records are in (streamed_step_summaries.h).

// The Overview's host record types (Other: not counted), and its device record types.
enum class HostType { CudaRuntime, Operator, OperatorInner, UserDefined, Other };
inline constexpr const char* kHostTypeNames[] = {"CudaRuntime", "Operator", "OperatorInner", "UserDefined"};
HostType host_type(EventKind kind, std::string_view name, bool inner_operator);
inline constexpr const char* kDeviceTypeNames[] = {"Kernel", "Memcpy", "Memset", "Communication"};
// Bit k set: the record counts in kDeviceTypeNames[k].
unsigned device_types(DeviceKind kind, bool communication);

// The Model Summary's rows, added step by step.
class ModelSteps {
 public:
  // One step: `gpu_ns[p]` the merged length of its device work by the phase its call is in (4:
  // none), `step_gpu_ns` that of all of it.
  void add(const StepScope& st, const std::array<uint64_t, 5>& gpu_ns, uint64_t step_gpu_ns);
  std::vector<SummaryRow> rows(bool has_steps) const;

 private:
  Stat cpu_, gpu_;
  std::array<SummaryRow, 4> phases_;
  uint64_t others_cpu_ = 0, others_gpu_ = 0;
};

// The Distributed Summary's rows from the lengths of its unions.
std::vector<TimeShare> distributed_rows(bool has_steps, uint64_t base, uint64_t communication, uint64_t computation,
                                        uint64_t overlap);

// Paddle's Perf Summary: one step's row; the figures over out.perf.
PerfStep perf_step(const StepScope& st);
void finish_perf(Summaries& out);

// MindInsight's step trace: the FP and BP points of one step, from its host records in any order.
class StepPoints {
 public:
  using Position = std::tuple<uint32_t, uint64_t, uint64_t>;  // where the record comes in the trace
  void consider(const StepScope& st, EventKind kind, bool outermost, uint64_t start, uint64_t end, InternedName name,
                const Position& at, const SummaryOptions& o);
  StepTraceStep row(const StepScope& st) const;

 private:
  struct Point {
    bool found = false;
    uint64_t start = 0, end = 0;
    Position at{};
    InternedName name;
  };
  Point fp_, bp_;
};
void step_trace_rules(const SummaryOptions& o, Summaries& out);
void finish_step_trace(Summaries& out);  // the average over the complete steps

void compute_operators(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);
void compute_kernels(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);
void compute_memory_manipulation(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);
void compute_user_defined(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);
void compute_op_types(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);

// "HtoD" from "Memcpy HtoD (Pageable -> Device)" ("" for a name of no copy): a copy call's
// Memory Manipulation row is "<call> (HtoD)".
std::string copy_direction(std::string_view device_name);

// The last steps of some of them, on rows grouped already (in the order their first record comes
// in the trace): also those of a window folded part by part (streamed_summaries.h).
void finish_kernels(std::vector<SummaryRow> rows, const SummaryOptions& o, Summaries& out);
// The outermost operators' rows of one thread section: ratios, sort, row limit (`total`: before it).
void finish_operator_rows(std::vector<SummaryRow>& rows, const SummaryOptions& o, std::size_t& total);
// Memory Manipulation's and a UserDefined section's rows: ratios of `spans`' span_cpu_ns and
// span_gpu_ns, sort, row limit (`total`: the rows before it).
void finish_span_rows(std::vector<SummaryRow>& rows, const Summaries& spans, const SummaryOptions& o, std::size_t& total);
void finish_op_types(std::vector<OpTypeRow> rows, bool device_in_scope, const SummaryOptions& o, Summaries& out);

}  // namespace profagent::exporters
