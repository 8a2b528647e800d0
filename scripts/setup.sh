#!/usr/bin/env bash
# Installs every Debian package profagent's build, tests and demo need. Idempotent: packages
# already present are not touched, and `apt-get update` runs once, only when something is missing.
# The CUDA 13 toolkit is not a Debian package; it is expected at /usr/local/cuda (or $CUDA_HOME).
set -euo pipefail

packages=(
  cmake g++ make pkg-config        # build
  libspdlog-dev nlohmann-json3-dev # agent: logging, JSON summaries
  libunwind-dev                    # agent: call stacks (PROFAGENT_WITH_STACK), dlopen'ed
  libdw-dev                        # agent: source lines of stack frames (libprofagent_dwarf.so)
  libre2-dev                       # agent: kernel:/range: step markers (linear-time regex)
  libsimdjson-dev zlib1g-dev       # profagent report: reading saved traces (.json, .json.gz)
  catch2                           # unit tests
  python3                          # test drivers (trace checks), launcher tests
  python3-dev                      # the Python hook's call wrapper (a stable-ABI extension)
  valgrind uftrace                 # benchmarks: callgrind counts, the peer tracer (scripts/bench.sh)
  python3-torch                    # --step-on python test: a CPU training loop (big, ~1 GB)
  chromium                         # report.html tests: the HTML report opened headless
)
# npm (which brings Node.js) only when no npm is on PATH: a newer Node.js may be installed already.
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "profagent setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda="${CUDA_HOME:-/usr/local/cuda}"
for f in bin/nvcc include/cuda_runtime_api.h include/cupti.h; do
  if [ ! -e "$cuda/$f" ]; then
    echo "profagent setup: $cuda/$f is missing — install the CUDA 13 toolkit there or set CUDA_HOME." >&2
    exit 1
  fi
done

# puppeteer-core drives the headless Chromium of the report.html tests. Pinned: 24.x is the last
# line that runs on Node 18/20 (25.x needs Node 22); it talks to the system Chromium over the
# DevTools protocol and downloads no browser. Installed into the build tree, only when missing.
puppeteer_version=24.43.1
node_dir="${PROFAGENT_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build}/node"
installed="$(node -p "require(process.argv[1]).version" \
  "$node_dir/node_modules/puppeteer-core/package.json" 2>/dev/null || true)"
if [ "$installed" != "$puppeteer_version" ]; then
  echo "profagent setup: installing puppeteer-core@$puppeteer_version into $node_dir"
  mkdir -p "$node_dir"
  npm install --prefix "$node_dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "puppeteer-core@$puppeteer_version" >/dev/null
fi
