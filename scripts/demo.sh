#!/usr/bin/env bash
# The README's main command: builds profagent, then runs the demo training-like workload on the
# simulated CUDA device (tests/devsim) under the agent, which prints its tables at exit and
# says where the trace went. Arguments go to the workload (default: 20 steps).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PROFAGENT_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh" >/dev/null || { echo "demo: the build failed; run scripts/build.sh to see why" >&2; exit 1; }
export LD_LIBRARY_PATH="$build/devsim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PROFAGENT_OUTPUT_DIR="${PROFAGENT_OUTPUT_DIR:-$root/profagent_out}"
workload="$build/bin/demo_train"
if [ -e "$build/lib/libprofagent.so" ]; then
  LD_PRELOAD="$build/lib/libprofagent.so" "$workload" "${@:-20}"
else
  echo "demo: $build/lib/libprofagent.so is not built; running the workload without the profiler" >&2
  "$workload" "${@:-20}"
fi
