// Internal to the summaries: the parts computed from steps and phases (step_summaries.cpp) and
// from grouped rows (row_summaries.cpp), called by compute_summaries in that order.
#pragma once

#include "exporters/summaries/summaries.h"
#include "exporters/summaries/trace_scope.h"

namespace profagent::exporters {

void compute_span(const Trace& t, const TraceScope& s, Summaries& out);
void compute_device(const Trace& t, const TraceScope& s, Summaries& out);
void compute_overview(const Trace& t, const TraceScope& s, Summaries& out);
void compute_model(const Trace& t, const TraceScope& s, Summaries& out);
void compute_distributed(const Trace& t, const TraceScope& s, Summaries& out);
void compute_perf(const TraceScope& s, Summaries& out);
void compute_step_trace(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);

void compute_operators(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);
void compute_kernels(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);
void compute_memory_manipulation(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);
void compute_user_defined(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);
void compute_op_types(const Trace& t, const TraceScope& s, const SummaryOptions& o, Summaries& out);

}  // namespace profagent::exporters
