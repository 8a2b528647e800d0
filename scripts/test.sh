#!/usr/bin/env bash
# The test command of the README and of CI: installs dependencies, builds, runs every test.
# Extra arguments go to ctest (e.g. `scripts/test.sh -L unit`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PROFAGENT_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j"$(nproc)" --timeout 300 "$@"
# The unit tests under ASan+UBSan and TSan, in small builds of their own (only on a full run).
if [[ $# -eq 0 && "${PROFAGENT_SANITIZE_TESTS:-1}" != 0 ]]; then
  "$root/scripts/sanitize.sh"
fi
# The aarch64 cross build and its unit tests under qemu-aarch64 (only on a full run; about
# 7.5 minutes from nothing on 2 free cores, README "aarch64 (Grace hosts)").
if [[ $# -eq 0 && "${PROFAGENT_CROSS_TESTS:-1}" != 0 ]]; then
  "$root/scripts/cross_aarch64.sh"
fi
