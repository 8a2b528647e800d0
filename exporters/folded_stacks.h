// Flame graph input as torch's export_stacks() writes it: one "folded" file per metric,
//   <stem>.self_cuda_time_total.folded   device time of the work each call issued
//   <stem>.self_cpu_time_total.folded    the call's own host time (its children's taken out)
// one line per distinct stack: frames root first separated by ';', a space, the value in
// integer microseconds (summed over the calls with that stack; 0 values left out). Unlike torch,
// the call itself (API, operator or range name) is the last, innermost frame, so a launch and a
// copy made from one line of code stay apart. flamegraph.pl, inferno, speedscope and Perfetto's
// flame graph read this format.
#pragma once

#include <string>

#include "collector/trace.h"

namespace profagent::exporters {

enum class FoldedMetric { SelfCudaTimeTotal, SelfCpuTimeTotal };
const char* folded_suffix(FoldedMetric metric);  // "self_cuda_time_total.folded"

// The file's text ("" when no record has a stack and a non-zero value).
std::string render_folded(const Trace& trace, FoldedMetric metric);

}  // namespace profagent::exporters
