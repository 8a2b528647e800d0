#!/usr/bin/env bash
# The relocatable bundle: dist/profagent-<version>-linux-<arch>.tar.gz, and the same tree
# unpacked beside it (dist/profagent-<version>-linux-<arch>/). It is what `cmake --install`
# lays out (cmake/install.cmake: one layout for the bundle, an install and the .deb), from a
# build without the tests, stripped: it runs wherever it is unpacked and needs only glibc and
# libstdc++ from the system (the README's Install section gives the versions).
#   scripts/package.sh [--build DIR] [--out DIR]
#     --build DIR  install from this configured and built tree (e.g. ./build) instead of
#                  building build-package/ (no tests, no Catch2 needed)
#     --out DIR    where the bundle goes (default: dist/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=""
out="$root/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$build" ]; then
  build="$root/build-package"
  "$root/scripts/setup.sh" build
  cuda="${CUDA_HOME:-/usr/local/cuda}"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFAGENT_BUILD_TESTS=OFF \
    -DCUDAToolkit_ROOT="$cuda" >/dev/null
  cmake --build "$build" -j"$(nproc)"
fi
version="$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")"
name="profagent-$version-linux-$(uname -m)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -rf "${out:?}/$name" "$out/$name.tar.gz"
cmake --install "$build" --prefix "$out/$name" --strip >/dev/null
tar -C "$out" -czf "$out/$name.tar.gz.part" "$name"
mv "$out/$name.tar.gz.part" "$out/$name.tar.gz"
echo "package: $out/$name.tar.gz ($(du -k "$out/$name.tar.gz" | cut -f1) KiB; unpacked in $out/$name)"
