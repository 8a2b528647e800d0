#!/usr/bin/env bash
# Configures and builds profagent with its tests into ./build (or $PROFAGENT_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PROFAGENT_BUILD_DIR:-$root/build}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
"$root/scripts/setup.sh" tests
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFAGENT_BUILD_TESTS=ON \
  -DCUDAToolkit_ROOT="$cuda" -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
