#!/usr/bin/env bash
# The GPU acceptance script: profagent's bundle on a machine with a real NVIDIA GPU and PyTorch
# (docs/gpu_check.md), or on the simulated device in CI mode (--devsim).
#   scripts/gpu_check.sh --bundle dist/profagent-<version>-linux-<arch> --out DIR [options]
#   scripts/gpu_check.sh --devsim [BUILD] --bundle ... --out DIR
# Runs under the Python that holds torch: $PROFAGENT_PYTHON, else python3 on PATH. Every
# option: scripts/gpu_check.sh --help.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PROFAGENT_PYTHON:-$(command -v python3)}"
exec "$python" "$root/tests/gpu/gpu_check.py" --python "$python" "$@"
