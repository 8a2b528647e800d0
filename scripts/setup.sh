#!/usr/bin/env bash
# Installs the Debian packages profagent needs, by what you want to do:
#   scripts/setup.sh build   the agent and the launcher (scripts/package.sh)
#   scripts/setup.sh demo    the above and what scripts/demo.sh runs (nothing more today)
#   scripts/setup.sh tests   the above and what the tests and benchmarks need (the default)
# Idempotent: packages already present are not touched, and `apt-get update` runs once, only
# when something is missing. The CUDA 13 toolkit is not a Debian package; it is expected at
# /usr/local/cuda (or $CUDA_HOME).
set -euo pipefail
set_name="${1:-tests}"
case "$set_name" in build|demo|tests) ;; *) echo "setup: unknown set '$set_name' (build, demo or tests)" >&2; exit 2 ;; esac

build_packages=(
  cmake g++ make pkg-config        # build
  python3                          # code generators run by the build; the Python hook
  python3-dev                      # the Python hook's call wrapper (a stable-ABI extension)
  libspdlog-dev nlohmann-json3-dev # agent: logging, JSON summaries
  libunwind-dev                    # agent: call stacks (PROFAGENT_WITH_STACK), dlopen'ed
  libdw-dev                        # agent: source lines of stack frames (libprofagent_dwarf.so)
  libre2-dev                       # agent: kernel:/range: step markers (linear-time regex)
  libsimdjson-dev zlib1g-dev       # profagent report: reading saved traces (.json, .json.gz)
)
demo_packages=("${build_packages[@]}")  # the demo adds only nvcc programs (the CUDA toolkit)
test_packages=(
  "${demo_packages[@]}"
  catch2                           # unit tests
  python3-pandas                   # report.hostile.csv_pandas: the CSV read as a pandas user reads it
  valgrind uftrace                 # benchmarks: callgrind counts, the peer tracer (scripts/bench.sh)
  python3-torch                    # --step-on python test: a CPU training loop (big, ~1 GB)
  chromium                         # report.html tests: the HTML report opened headless
  python3-distributed              # report --dask test: a real local scheduler and two workers
  protobuf-compiler                # trace format tests: protoc --decode_raw reads the Perfetto trace
  libdeflate-dev libzstd-dev       # the trace format bench: compressors measured beside zlib
  strace                           # preload.startup_reads: the files a process opens at start-up
)
case "$set_name" in
  build) packages=("${build_packages[@]}") ;;
  demo) packages=("${demo_packages[@]}") ;;
  tests) packages=("${test_packages[@]}")
         # npm (which brings Node.js) only when no npm is on PATH: a newer Node.js may be installed already.
         command -v npm >/dev/null 2>&1 || packages+=(npm) ;;
esac

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
needed=(include/cuda_runtime_api.h include/cupti.h)
[ "$set_name" = build ] || needed+=(bin/nvcc)  # the demo and the tests build CUDA programs
for f in "${needed[@]}"; do
  if [ ! -e "$cuda/$f" ]; then
    echo "profagent setup: $cuda/$f is missing — install the CUDA 13 toolkit there or set CUDA_HOME." >&2
    exit 1
  fi
done

[ "$set_name" = tests ] || exit 0
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
