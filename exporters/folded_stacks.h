// Flame graph input as torch's export_stacks() writes it: one "folded" file per metric,
//   <stem>.self_cuda_time_total.folded   device time of the work each call issued
//   <stem>.self_cpu_time_total.folded    the call's own host time (its children's taken out)
// one line per distinct stack: frames root first separated by ';', a space, the value in
// integer microseconds (summed over the calls with that stack; 0 values left out). Unlike torch,
// the call itself (API, operator or range name) is the last, innermost frame, so a launch and a
// copy made from one line of code stay apart. flamegraph.pl, inferno, speedscope and Perfetto's
// flame graph read this format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "collector/trace.h"
#include "exporters/summaries/host_costs.h"

namespace profagent::exporters {

enum class FoldedMetric { SelfCudaTimeTotal, SelfCpuTimeTotal };
const char* folded_suffix(FoldedMetric metric);  // "self_cuda_time_total.folded"

// The file's text ("" when no record has a stack and a non-zero value).
std::string render_folded(const Trace& trace, FoldedMetric metric);

// Both files' figures summed part by part: a whole trace is one part (render_folded); a streamed
// window's segments and tail are its parts, their stacks numbered alike (collector/stack_symbols.h
// StreamedStacks), so the files equal render_folded's of the trace joined whole. A record's
// figures are those of the whole window (host_costs.h: its self time and the device work it
// issued itself, which its part holds with it). Held: one entry per distinct stack and call or
// scope name at its end (~80 B each), whatever the window's length; the frames are labelled at
// render() only, once per distinct stack.
class FoldedStacks {
 public:
  // `costs`: host_costs(part).
  void add(const Trace& part, const HostCosts& costs);
  // `stacks`: the list every part's records number their stacks in (the last part's).
  std::string render(const CallStacks& stacks, FoldedMetric metric) const;
  bool empty() const { return ns_.empty(); }

  // What makes a line: the stack, and the call (its API name) or scope (its own name) at its
  // end. Records are summed by this first, so each distinct stack is labelled once, not per record.
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
  struct Ns {
    uint64_t self_cuda = 0;
    uint64_t self_cpu = 0;
  };

 private:
  std::unordered_map<LineKey, Ns, LineKeyHash> ns_;
};

}  // namespace profagent::exporters
