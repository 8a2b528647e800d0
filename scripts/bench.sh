#!/usr/bin/env bash
# The benchmark command of the README: builds what the benchmarks need (into ./build or
# $PROFAGENT_BUILD_DIR) and prints the four overhead tables of tests/bench/overhead_bench.py
# (per-call cost in every agent mode with callgrind counts, launch-bound slowdown, uftrace side
# by side, trace writing). Figures only, never pass/fail. Takes several minutes on a quiet
# machine (the launch-bound section runs 1 M launches 3 x 3 times).
# Extra arguments go to overhead_bench.py, e.g. `scripts/bench.sh --sections 1 --runs 9`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PROFAGENT_BUILD_DIR:-$root/build}"
jobs="${PROFAGENT_BUILD_JOBS:-$(nproc)}"
"$root/scripts/setup.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFAGENT_BUILD_BENCH=ON \
  -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" \
  -DCMAKE_CUDA_COMPILER="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" >/dev/null
cmake --build "$build" -j"$jobs" --target profagent devsim devsim_cudart devsim_driver devsim_cupti \
  bench_calls collector_bench exporter_bench
python3 "$root/tests/bench/overhead_bench.py" \
  --program "$build/bin/bench_calls" --agent "$build/lib/libprofagent.so" \
  --devsim "$build/devsim" --work "$build/bench_work" \
  --collector-bench "$build/bin/collector_bench" --exporter-bench "$build/bin/exporter_bench" "$@"
