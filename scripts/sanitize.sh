#!/usr/bin/env bash
# Unit tests under sanitizers, in two small builds of their own (only the static cores and the
# unit-test programs; libprofagent.so is never instrumented):
#   $PROFAGENT_BUILD_DIR-asan  -fsanitize=address,undefined  every unit test
#   $PROFAGENT_BUILD_DIR-tsan  -fsanitize=thread             the collector's unit tests
# Any report fails the run (halt_on_error, -fno-sanitize-recover). `scripts/sanitize.sh asan`
# or `... tsan` runs one of them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
base="${PROFAGENT_BUILD_DIR:-$root/build}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
jobs="${PROFAGENT_JOBS:-$(nproc)}"

run_one() {  # <name> <sanitizers> <ctest regex> <targets...>
  local name="$1" sanitizers="$2" tests="$3"; shift 3
  local build="$base-$name"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFAGENT_BUILD_BENCH=OFF \
    -DPROFAGENT_SANITIZE="$sanitizers" -DCUDAToolkit_ROOT="$cuda" \
    -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" >/dev/null
  cmake --build "$build" -j"$jobs" --target "$@"
  (cd "$build" && ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 \
     UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
     ctest --output-on-failure -j"$jobs" -L unit -R "$tests")
}

which="${1:-all}"
if [[ "$which" == all || "$which" == asan ]]; then
  run_one asan "address;undefined" "^(collector|exporters|agent_config|hook_template|diopi_wrappers)\\." \
    collector_tests exporters_unit_tests agent_config_test hook_template_test diopi_wrappers_tests
fi
if [[ "$which" == all || "$which" == tsan ]]; then
  run_one tsan "thread" "^(collector|hook_template)\\." collector_tests hook_template_test
fi
