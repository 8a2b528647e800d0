#include "exporters/folded_stacks.h"

#include <map>
#include <vector>

#include "exporters/cupti_cbids.h"
#include "exporters/stack_text.h"
#include "exporters/summaries/host_costs.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

// Per host record: its self CPU time, or the device time of the work it issued itself, as the
// table attributes them (host_costs.h), so a flame graph and the table add up the same way.
std::vector<uint64_t> values(const Trace& trace, FoldedMetric metric) {
  HostCosts costs = host_costs(trace);
  if (metric == FoldedMetric::SelfCpuTimeTotal) return std::move(costs.self_cpu_ns);
  if (costs.own_device_ns.empty()) costs.own_device_ns.assign(trace.host.size(), 0);
  return std::move(costs.own_device_ns);
}

// Folded frames must not hold the separators themselves.
std::string folded_frame(std::string label) {
  for (char& c : label) {
    if (c == ';' || c == '\n' || c == '\r') c = ',';
  }
  return label;
}

std::string folded_line(const Trace& trace, const HostRecord& h, const std::vector<uint32_t>& stack) {
  std::string line;
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    line += folded_frame(frame_label(trace.stacks.frames[*it]));
    line += ';';
  }
  const bool runtime = !is_scope(h.kind);
  line += folded_frame(std::string(runtime ? api_name(h.name) : std::string_view(h.name)));
  return line;
}

}  // namespace

const char* folded_suffix(FoldedMetric metric) {
  return metric == FoldedMetric::SelfCudaTimeTotal ? "self_cuda_time_total.folded"
                                                   : "self_cpu_time_total.folded";
}

std::string render_folded(const Trace& trace, FoldedMetric metric) {
  const std::vector<uint64_t> value = values(trace, metric);
  std::map<std::string, uint64_t> ns_by_line;
  for (size_t i = 0; i < trace.host.size(); ++i) {
    const std::vector<uint32_t>* stack = stack_of(trace, trace.host[i]);
    if (stack == nullptr || value[i] == 0) continue;
    ns_by_line[folded_line(trace, trace.host[i], *stack)] += value[i];
  }
  std::string text;
  for (const auto& [line, ns] : ns_by_line) {
    const uint64_t us = ns / 1000;
    if (us == 0) continue;
    text += line + ' ' + std::to_string(us) + '\n';
  }
  return text;
}

}  // namespace profagent::exporters
