#!/usr/bin/env bash
# The aarch64 (Grace hosts) cross build: libprofagent.so, its static cores and the unit tests,
# built with Debian's g++-aarch64-linux-gnu against the multiarch :arm64 -dev packages, the unit
# tests run under qemu-user. Builds into ./build-aarch64 (or $PROFAGENT_CROSS_BUILD_DIR).
# Extra arguments go to ctest (e.g. `scripts/cross_aarch64.sh -R clock`).
#
# What cannot run here: nothing that needs nvcc or the simulated device (there is no aarch64
# CUDA toolkit to build them with), so PROFAGENT_CUDA_TESTS is OFF: no devsim, preload,
# reliability, report or bench tests; and no test that loads an aarch64 library into this
# machine's python3.
#
# Installs what it needs with apt, as scripts/setup.sh does (idempotent): the arm64
# architecture for dpkg, the cross compiler, qemu-user and the :arm64 -dev packages. The CUDA
# toolkit's headers (architecture-independent) come from the x86-64 toolkit at $CUDA_HOME.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${PROFAGENT_CROSS_BUILD_DIR:-$root/build-aarch64}"
cuda="${CUDA_HOME:-/usr/local/cuda}"
jobs="${PROFAGENT_JOBS:-$(nproc)}"

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

packages=(
  g++-aarch64-linux-gnu qemu-user                    # compiler, and what runs its programs
  libspdlog-dev:arm64 libunwind-dev:arm64 libdw-dev:arm64 libre2-dev:arm64 zlib1g-dev:arm64
  libpython3-dev:arm64                               # the arm64 pyconfig.h of the Python hook
)
# nlohmann-json3-dev and catch2 (Catch2 v2, header-only here) are Multi-Arch: foreign: the
# x86-64 packages scripts/setup.sh installs serve the cross build too.

install_packages() {
  local missing=() p
  dpkg --print-foreign-architectures | grep -qx arm64 || $sudo dpkg --add-architecture arm64
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "profagent cross: installing ${packages[*]}"
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
    --no-install-recommends "${packages[@]}" >/dev/null
}

# libsimdjson-dev is not Multi-Arch: its :arm64 package cannot be installed beside the x86-64
# one, so it and its library are unpacked into the build tree instead (found by simdjson_DIR).
unpack_simdjson() {
  local prefix="$build/arm64-root" debs="$build/arm64-debs"
  [ -e "$prefix/usr/lib/aarch64-linux-gnu/libsimdjson.so" ] && return 0
  mkdir -p "$debs" "$prefix"
  (cd "$debs" && apt-get download libsimdjson-dev:arm64 "$(simdjson_library)":arm64 >/dev/null 2>&1) \
    || { echo "profagent cross: apt-get download libsimdjson-dev:arm64 failed" >&2; exit 1; }
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$prefix"; done
  # The links ldconfig and the -dev package's .so link would make.
  local lib; lib="$(cd "$prefix/usr/lib/aarch64-linux-gnu" && ls libsimdjson.so.*.*.*)"
  ln -sf "$lib" "$prefix/usr/lib/aarch64-linux-gnu/${lib%.*.*}"
  ln -sf "$lib" "$prefix/usr/lib/aarch64-linux-gnu/libsimdjson.so"
}

simdjson_library() {  # the runtime package libsimdjson-dev:arm64 depends on (libsimdjson14 …)
  apt-cache depends libsimdjson-dev:arm64 | sed -n 's/^ *Depends: \(libsimdjson[0-9]*\).*/\1/p' | head -1
}

configure_and_build() {
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
    -DCUDAToolkit_ROOT="$cuda" -DPROFAGENT_CUDA_TESTS=OFF -DPROFAGENT_BUILD_BENCH=OFF \
    -Dsimdjson_DIR="$build/arm64-root/usr/lib/aarch64-linux-gnu/cmake/simdjson" >/dev/null
  cmake --build "$build" -j"$jobs"
}

start=$SECONDS
install_packages
unpack_simdjson
installed=$SECONDS
configure_and_build
built=$SECONDS
# stacks_unit is left out: qemu-user does not implement process_vm_readv (ENOSYS), through
# which the unwinder reads memory, so the agent rightly turns stacks off under qemu and says why.
# Under emulation the collector's unit session waits up to 3 s (not 300 ms) for a poll's device
# records before it counts them late (tests/unit/collector/session_fixture.h).
(cd "$build" && PROFAGENT_UNIT_WAIT_MS=3000 ctest --output-on-failure -j"$jobs" --timeout 600 -L unit -E '^stacks_unit[.]' "$@")
echo "profagent cross: install $((installed - start)) s, build $((built - installed)) s, unit tests under qemu-aarch64 $((SECONDS - built)) s"
