#!/usr/bin/env bash
# The README's main command: profagent on a model-like training loop, on the simulated CUDA
# device (tests/devsim), in a few minutes from a fresh clone. It installs only the demo's
# Debian packages (scripts/setup.sh demo), builds only what it runs, and records a step window
# with the launcher: steps 0-2 run unrecorded (they also take the one-time costs: fresh device
# memory touched for the first time, module loading), steps 3-5 are recorded. Then it prints
# the window's table (with a line per step) and its Overview, Model and Step Trace summaries,
# read back from the trace (`profagent report`).
#   scripts/demo.sh [N]          N steps (default 8) of the DIOPI-style framework driven from
#                                Python (tests/vendorsim/train.py): operators with their input
#                                shapes, kernels, copies; a step ends at its stream sync
#   scripts/demo.sh --cuda [N]   the nvcc-built demo_train workload (default 8 steps), which
#                                marks its own steps (profagent_step)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PROFAGENT_BUILD_DIR:-$root/build}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
"$root/scripts/setup.sh" demo

# A fresh build tree is configured without the tests (no Catch2 needed) and without debug
# information (a quarter less compile time); an existing one keeps its configuration and gets
# the demo's targets.
configure=(-DPROFAGENT_BUILD_DEMO=ON)
[ -f "$build/CMakeCache.txt" ] || configure+=(-DPROFAGENT_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release)
program=frameworksim
[ "${1:-}" = "--cuda" ] && program=demo_train
echo "demo: building the agent, the launcher, the simulated device and $program (log: $build/demo_build.log)"
mkdir -p "$build"
if ! { cmake -S "$root" -B "$build" "${configure[@]}" -DCUDAToolkit_ROOT="$cuda" \
         -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" &&
       cmake --build "$build" -j"$(nproc)" --target profagent profagent_launcher devsim_cudart devsim_driver \
         devsim_cupti "$program"; } >"$build/demo_build.log" 2>&1; then
  tail -20 "$build/demo_build.log" >&2
  echo "demo: the build failed (above; whole log: $build/demo_build.log)" >&2
  exit 1
fi

export LD_LIBRARY_PATH="$build/devsim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out="${PROFAGENT_OUTPUT_DIR:-$root/profagent_out}"
window=(--skip-first 3 --active 3 --repeat 1)
if [ "${1:-}" = "--cuda" ]; then
  command=("$build/bin/demo_train" "${2:-8}")
else
  export PROFAGENT_RECORD_SHAPES="${PROFAGENT_RECORD_SHAPES:-1}"
  window+=(--step-on api:cudaStreamSynchronize)
  command=(python3 "$root/tests/vendorsim/train.py" --framework "$build/lib/libframeworksim.so" --steps "${1:-8}")
fi
since="$(mktemp)"
trap 'rm -f "$since"' EXIT
echo "demo: $build/bin/profagent run ${window[*]} --output-dir $out -- ${command[*]}"
"$build/bin/profagent" run "${window[@]}" --output-dir "$out" -- "${command[@]}"
trace="$(find "$out" -name '*.steps3-5.trace.json' -newer "$since" | sort | tail -1)"
if [ -z "$trace" ]; then
  echo "demo: the window of steps 3-5 was not written (see the lines above)" >&2
  exit 1
fi
echo
echo "demo: the window's table, ${trace%.trace.json}.table.txt"
cat "${trace%.trace.json}.table.txt"
echo
echo "demo: profagent report --summary overview,model,step_trace $trace"
"$build/bin/profagent" report --summary overview,model,step_trace "$trace"
