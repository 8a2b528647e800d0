#!/usr/bin/env bash
# The README's main command: builds profagent, then runs a model-like training loop on the
# simulated CUDA device (tests/devsim) under the agent, which prints its tables at exit and
# says where the trace went.
#   scripts/demo.sh [N]          Python + ctypes over a DIOPI-style framework and vendor library
#                                (tests/vendorsim/train.py, N steps, default 10): DIOPI operator
#                                rows with their input shapes, runtime calls, kernels
#   scripts/demo.sh --cuda [N]   the nvcc-built demo_train workload (default 20 steps)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PROFAGENT_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" >/dev/null || { echo "demo: the build failed; run scripts/build.sh to see why" >&2; exit 1; }
export LD_LIBRARY_PATH="$build/devsim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PROFAGENT_OUTPUT_DIR="${PROFAGENT_OUTPUT_DIR:-$root/profagent_out}"
if [ "${1:-}" = "--cuda" ]; then
  shift
  command=("$build/bin/demo_train" "${@:-20}")
else
  export PROFAGENT_RECORD_SHAPES="${PROFAGENT_RECORD_SHAPES:-1}"
  command=(/usr/bin/python3 "$root/tests/vendorsim/train.py" --framework "$build/lib/libframeworksim.so"
           --steps "${1:-10}")
fi
if [ -e "$build/lib/libprofagent.so" ]; then
  since="$(mktemp)"
  LD_PRELOAD="$build/lib/libprofagent.so" "${command[@]}"
  # Then the Paddle/MindInsight view of the same run, read back from its trace (docs/report.md).
  trace="$(find "$PROFAGENT_OUTPUT_DIR" -name '*.trace.json' -newer "$since" | sort | tail -1)"
  rm -f "$since"
  if [ -n "$trace" ]; then
    echo
    "$build/bin/profagent" report --summary overview,model,kernel,op_type "$trace"
  fi
else
  echo "demo: $build/lib/libprofagent.so is not built; running the workload without the profiler" >&2
  "${command[@]}"
fi
