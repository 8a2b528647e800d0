#include "exporters/folded_stacks.h"

#include <map>
#include <unordered_map>
#include <vector>

#include "exporters/cupti_cbids.h"
#include "exporters/stack_text.h"
#include "exporters/summaries/host_costs.h"
#include "exporters/trace_figures.h"

namespace profagent::exporters {
namespace {

// Folded frames must not hold the separators themselves.
std::string folded_frame(std::string label) {
  for (char& c : label) {
    if (c == ';' || c == '\n' || c == '\r') c = ',';
  }
  return label;
}

// The frames of one stack, root first, each followed by ';'.
std::string folded_frames(const CallStacks& stacks, const std::vector<uint32_t>& stack) {
  std::string text;
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    text += folded_frame(frame_label(stacks.frames[*it]));
    text += ';';
  }
  return text;
}

}  // namespace

const char* folded_suffix(FoldedMetric metric) {
  return metric == FoldedMetric::SelfCudaTimeTotal ? "self_cuda_time_total.folded"
                                                   : "self_cpu_time_total.folded";
}

std::string render_folded(const Trace& trace, FoldedMetric metric) {
  FoldedStacks folded;
  folded.add(trace, host_costs(trace));
  return folded.render(trace.stacks, metric);
}

// Per host record: its self CPU time, and the device time of the work it issued itself, as the
// table attributes them (host_costs.h), so a flame graph and the table add up the same way.
void FoldedStacks::add(const Trace& part, const HostCosts& costs) {
  for (size_t i = 0; i < part.host.size(); ++i) {
    const HostRecord& h = part.host[i];
    const Ns add{costs.own_device(i), costs.self_cpu_ns[i]};
    if ((add.self_cuda == 0 && add.self_cpu == 0) || stack_of(part, h) == nullptr) continue;
    Ns& ns = ns_[LineKey{h.stack, h.name, !is_scope(h.kind)}];
    ns.self_cuda += add.self_cuda;
    ns.self_cpu += add.self_cpu;
  }
}

std::string FoldedStacks::render(const CallStacks& stacks, FoldedMetric metric) const {
  std::vector<std::string> frames(stacks.stacks.size() + 1);  // by HostRecord::stack
  // Distinct stacks can read the same (frames whose labels agree): lines are summed by text.
  std::map<std::string, uint64_t> ns_by_line;
  for (const auto& [key, ns] : ns_) {
    const uint64_t value = metric == FoldedMetric::SelfCudaTimeTotal ? ns.self_cuda : ns.self_cpu;
    if (value == 0 || key.stack > stacks.stacks.size()) continue;
    std::string& prefix = frames[key.stack];
    if (prefix.empty()) prefix = folded_frames(stacks, stacks.stacks[key.stack - 1]);
    ns_by_line[prefix + folded_frame(std::string(key.call ? api_name(key.name) : std::string_view(key.name)))] += value;
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
