#include "exporters/summaries/overhead_line.h"

#include <cstdio>

#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

// Everything the window lost that it would otherwise hold (drop_counters.h says each).
uint64_t lost_records(const DropCounters& d) {
  return d.host_events + d.device_records + d.late_device_records + d.left_out_host_events +
         d.left_out_device_records + d.over_max_events + d.over_max_events_device_records;
}

// CUPTI's share of the program's-threads figure, when the window's calls were traced by it.
std::string cupti_clause(const AgentCost& c) {
  if (c.cupti_call_cost_ps == 0) return ", of which CUPTI's share is not measured";
  char text[64];
  std::snprintf(text, sizeof text, ", of which ~%.3f ms CUPTI", double(c.cupti_ns()) / 1e6);
  return text;
}

}  // namespace

std::string overhead_line(const Trace& trace) {
  const AgentCost& c = trace.agent_cost;
  if (!c.measured) return {};
  const uint64_t program_ns = c.program_ns();
  char program[128];
  std::snprintf(program, sizeof program, "profagent overhead: ~%.3f ms on the program's threads (%.2f %% of the window)",
                double(program_ns) / 1e6, percent(program_ns, span_ns(trace.start_ns, trace.end_ns)));
  char own[96];
  std::snprintf(own, sizeof own, ", %.3f ms on its own threads, %.1f MiB", double(c.agent_cpu_ns) / 1e6,
                double(c.memory_bytes) / double(1 << 20));
  std::string line = program;
  if (c.cupti_calls != 0) line += cupti_clause(c);
  line += own;
  if (const uint64_t lost = lost_records(trace.drops)) line += "; " + std::to_string(lost) + " records lost";
  return line + "\n";
}

}  // namespace profagent::exporters
