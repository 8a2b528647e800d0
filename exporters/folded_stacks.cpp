#include "exporters/folded_stacks.h"

#include <map>
#include <vector>

#include "exporters/cupti_cbids.h"
#include "exporters/stack_text.h"

namespace profagent::exporters {
namespace {

uint64_t span(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

// Per host record: its own host time (children nested in it taken out), or the device time of
// the work it issued.
std::vector<uint64_t> values(const Trace& trace, FoldedMetric metric) {
  std::vector<uint64_t> value(trace.host.size(), 0);
  if (metric == FoldedMetric::SelfCudaTimeTotal) {
    for (const DeviceRecord& d : trace.device) {
      if (about(d.kind).work && d.host >= 0 && size_t(d.host) < value.size()) {
        value[d.host] += span(d.start_ns, d.end_ns);
      }
    }
    return value;
  }
  std::vector<int64_t> self(trace.host.size(), 0);
  for (size_t i = 0; i < trace.host.size(); ++i) {
    const HostRecord& h = trace.host[i];
    self[i] += int64_t(span(h.start_ns, h.end_ns));
    if (h.parent >= 0 && size_t(h.parent) < self.size()) self[h.parent] -= int64_t(span(h.start_ns, h.end_ns));
  }
  for (size_t i = 0; i < self.size(); ++i) value[i] = self[i] > 0 ? uint64_t(self[i]) : 0;
  return value;
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
  const bool runtime = h.kind != EventKind::Operator && h.kind != EventKind::Range && h.kind != EventKind::Step;
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
