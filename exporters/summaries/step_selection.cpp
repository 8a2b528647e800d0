// `--steps A-B`: the part of a trace that belongs to steps A..B, by the same membership rule as
// the summaries (a host record by its start, a device record by the call that issued it).
#include <algorithm>

#include "exporters/summaries/summaries.h"

namespace profagent::exporters {
namespace {

bool valid(int64_t i, std::size_t n) { return i >= 0 && static_cast<std::size_t>(i) < n; }

bool in_kept(const std::vector<StepSpan>& kept, uint64_t t) {
  return std::any_of(kept.begin(), kept.end(), [t](const StepSpan& s) { return s.start_ns <= t && t < s.end_ns; });
}

}  // namespace

std::optional<Trace> select_steps(const Trace& trace, uint64_t first, uint64_t last, std::string& error) {
  std::vector<StepSpan> kept;
  for (const StepSpan& s : trace.steps) {
    if (s.number >= first && s.number <= last) kept.push_back(s);
  }
  if (kept.empty()) {
    error = trace.steps.empty() ? "the trace has no ProfilerStep, so --steps selects nothing"
                                : "no step numbered " + std::to_string(first) + "-" + std::to_string(last) + " (the trace has " +
                                      std::to_string(trace.steps.front().number) + "-" +
                                      std::to_string(trace.steps.back().number) + ")";
    return std::nullopt;
  }
  Trace out = trace;
  out.host.clear();
  out.device.clear();
  out.memory.records.clear();
  out.steps = kept;
  std::vector<int64_t> moved(trace.host.size(), kNoIndex);
  for (std::size_t i = 0; i < trace.host.size(); ++i) {
    if (!in_kept(kept, trace.host[i].start_ns)) continue;
    moved[i] = static_cast<int64_t>(out.host.size());
    out.host.push_back(trace.host[i]);
  }
  for (HostRecord& h : out.host) h.parent = valid(h.parent, moved.size()) ? moved[h.parent] : kNoIndex;
  for (const DeviceRecord& d : trace.device) {
    const bool issued = valid(d.host, moved.size());
    if (issued ? moved[d.host] == kNoIndex : !in_kept(kept, d.start_ns)) continue;
    out.device.push_back(d);
    out.device.back().host = issued ? moved[d.host] : kNoIndex;
  }
  for (const MemoryRecord& r : trace.memory.records) {
    if (!in_kept(kept, r.ns)) continue;
    out.memory.records.push_back(r);
    out.memory.records.back().host = valid(r.host, moved.size()) ? moved[r.host] : kNoIndex;
  }
  out.first_step = kept.front();
  out.last_step = kept.back();
  return out;
}

}  // namespace profagent::exporters
