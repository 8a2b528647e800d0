// Internal to the summaries: the parts computed from steps and phases (step_summaries.cpp) and
// from grouped rows (row_summaries.cpp), called by compute_summaries in that order.
#pragma once

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
