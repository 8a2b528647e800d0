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

// The frames of one stack, root first, each followed by ';'.
std::string folded_frames(const Trace& trace, const std::vector<uint32_t>& stack) {
  std::string text;
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    text += folded_frame(frame_label(trace.stacks.frames[*it]));
    text += ';';
  }
  return text;
}

// What makes a line: the stack, and the call (its API name) or scope (its own name) at its end.
// Records are summed by this first, so each distinct stack is labelled once, not per record.
struct LineKey {
  uint32_t stack;  // HostRecord::stack
  InternedName name;
  bool call;
  bool operator==(const LineKey& o) const { return stack == o.stack && name == o.name && call == o.call; }
};
struct LineKeyHash {
  std::size_t operator()(const LineKey& k) const {
    return (std::size_t(k.stack) * 0x9E3779B97F4A7C15ull) ^ (std::size_t(k.name.id()) << 1) ^ std::size_t(k.call);
  }
};

std::unordered_map<LineKey, uint64_t, LineKeyHash> ns_by_key(const Trace& trace, const std::vector<uint64_t>& value) {
  std::unordered_map<LineKey, uint64_t, LineKeyHash> ns;
  for (size_t i = 0; i < trace.host.size(); ++i) {
    const HostRecord& h = trace.host[i];
    if (value[i] == 0 || stack_of(trace, h) == nullptr) continue;
    ns[LineKey{h.stack, h.name, !is_scope(h.kind)}] += value[i];
  }
  return ns;
}

}  // namespace

const char* folded_suffix(FoldedMetric metric) {
  return metric == FoldedMetric::SelfCudaTimeTotal ? "self_cuda_time_total.folded"
                                                   : "self_cpu_time_total.folded";
}

std::string render_folded(const Trace& trace, FoldedMetric metric) {
  std::vector<std::string> frames(trace.stacks.stacks.size() + 1);  // by HostRecord::stack
  // Distinct stacks can read the same (frames whose labels agree): lines are summed by text.
  std::map<std::string, uint64_t> ns_by_line;
  for (const auto& [key, ns] : ns_by_key(trace, values(trace, metric))) {
    std::string& prefix = frames[key.stack];
    if (prefix.empty()) prefix = folded_frames(trace, trace.stacks.stacks[key.stack - 1]);
    ns_by_line[prefix + folded_frame(std::string(key.call ? api_name(key.name) : std::string_view(key.name)))] += ns;
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
