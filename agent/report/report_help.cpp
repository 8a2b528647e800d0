#include "agent/report/report_command.h"

namespace profagent::report {

const char* const kReportHelp = R"(usage: profagent report [options] PATH...

Prints the summaries of saved traces: profagent's *.trace.json, *.trace.json.gz and *.pftrace
(Perfetto protobuf) and torch.profiler's Kineto traces (.json or .json.gz). A folder stands for
every trace in it, reported by rank, then name (a window saved in several formats once).
  --summary LIST   comma list, or all (default): device, overview, model, distributed,
                   operator, kernel, memory_manipulation, user_defined, perf, step_trace,
                   op_type, key_averages, memory
  --format F       text (default), csv (one file per summary: --output DIR, or one
                   --summary), json, html
  --sort-by KEY    torch's (cpu_time_total, self_cuda_time_total, ...) or Paddle's
                   (CPUTotal, CPUAvg, CPUMax, CPUMin, GPUTotal, GPUAvg, GPUMax, GPUMin);
                   default cuda_time_total / GPUTotal, as PROFAGENT_SORT_BY
  --group-by G     key_averages rows per input_shape or stack_n:N (as PROFAGENT_GROUP_BY)
  --row-limit N    rows per table (0: all; default: all in json and csv, else 100;
                   operator types 20)
  --time-unit U    s, ms (default), us, ns for the Paddle/MindInsight tables
  --op-detail      Operator Summary: inner operators and kernels under each operator
  --thread-sep     Operator and UserDefined Summaries: one section per thread
  --steps A-B      only steps A to B (ProfilerStep numbers; A- and -B too)
  --folded M       instead of summaries, the trace's folded stacks (flame graph input), as
                   the agent writes <stem>.M.folded: M is self_cuda_time_total or
                   self_cpu_time_total
  --output FILE    write there (atomically) instead of stdout (csv: a folder, one
                   <summary>.csv in it)
  --max-gzip-ratio N  refuse a .json.gz that expands more than N times its size
                   (default 100; 0: no limit)
PROFAGENT_FP_POINT / PROFAGENT_BP_POINT name the step trace's FP and BP operators.

usage: profagent report --ranks DIR [--format text|json] [--traces]
       profagent report --dask tcp://SCHEDULER DIR [--format text|json]
The cross-rank report of a folder of per-rank files (their .rank.ndjson, else their traces):
communication, computation, overlap and waiting per rank, missing ranks and steps, the
straggler table; --dask computes it on a Dask cluster (same output). docs/ranks.md.
Exit status 0, or 2 after one line per bad file or option (the other files are reported).
)";

}  // namespace profagent::report
