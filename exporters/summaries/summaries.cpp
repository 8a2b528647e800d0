#include "exporters/summaries/summaries.h"

#include <algorithm>

#include "exporters/summaries/step_summaries.h"

namespace profagent::exporters {

bool wants(const SummaryOptions& o, std::string_view name) {
  return std::find(o.names.begin(), o.names.end(), name) != o.names.end();
}

Summaries compute_summaries(const Trace& trace, const SummaryOptions& o) {
  Summaries out;
  const TraceScope scope = scope_trace(trace);
  compute_span(trace, scope, out);
  if (wants(o, "device")) compute_device(trace, scope, out);
  if (wants(o, "overview")) compute_overview(trace, scope, out);
  if (wants(o, "model")) compute_model(trace, scope, out);
  if (wants(o, "distributed")) compute_distributed(trace, scope, out);
  if (wants(o, "operator")) compute_operators(trace, scope, o, out);
  if (wants(o, "kernel")) compute_kernels(trace, scope, o, out);
  if (wants(o, "memory_manipulation")) compute_memory_manipulation(trace, scope, o, out);
  if (wants(o, "user_defined")) compute_user_defined(trace, scope, o, out);
  if (wants(o, "perf")) compute_perf(scope, out);
  if (wants(o, "step_trace")) compute_step_trace(trace, scope, o, out);
  if (wants(o, "op_type")) compute_op_types(trace, scope, o, out);
  if (wants(o, "key_averages")) out.key_averages = build_table(trace, scope.costs, o.table);
  if (wants(o, "memory")) out.memory = summarize_memory(trace, scope.costs);
  return out;
}

Summaries compute_window_summaries(const Trace& trace, const SummaryOptions& options) {
  SummaryOptions all = options;
  for (std::string_view name : {std::string_view("key_averages"), std::string_view("memory")}) {
    if (!wants(all, name)) all.names.emplace_back(name);
  }
  return compute_summaries(trace, all);
}

std::string render_exit_table(const Trace& trace, const Summaries& s, const SummaryOptions& options) {
  return render_key_averages(s.key_averages, options.table) + render_memory_summary(trace, s.memory);
}

}  // namespace profagent::exporters
