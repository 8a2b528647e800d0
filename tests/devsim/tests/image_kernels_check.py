#!/usr/bin/python3
"""The module loader's image parser against independent readers of the same nvcc outputs: the
cubin's global FUNC symbols as binutils' readelf lists them, the PTX's `.entry` lines, and a
fatbin (with both an ELF and a PTX entry) that must give the cubin's set.

    image_kernels_check.py <image_kernels tool> <cubin> <ptx> <fatbin>
(cuobjdump is not part of the toolkit installed here; readelf reads the same symbol table.)"""
import re
import subprocess
import sys


def parsed(tool, path):
    lines = subprocess.run([tool, path], capture_output=True, text=True, check=True).stdout.splitlines()
    kind = int(lines[0].split()[1])
    return kind, set(lines[1:])


def main():
    tool, cubin, ptx, fatbin = sys.argv[1:5]
    symbols = subprocess.run(["readelf", "-sW", cubin], capture_output=True, text=True, check=True).stdout
    # Num: Value Size Type Bind Vis [<other>: 10] Ndx Name — the name and section come last.
    elf_names = {f[-1] for f in (line.split() for line in symbols.splitlines())
                 if len(f) >= 8 and f[3] == "FUNC" and f[4] in ("GLOBAL", "WEAK") and f[-2] != "UND"}
    with open(ptx) as f:
        entries = set(re.findall(r"\.entry\s+([A-Za-z_$][\w$]*)", f.read()))
    failures = []
    for path, want_kind, want in ((cubin, 1, elf_names), (ptx, 2, entries), (fatbin, 3, elf_names)):
        kind, names = parsed(tool, path)
        if kind != want_kind or names != want or not want:
            failures.append(f"{path}: kind {kind} names {sorted(names)}, want kind {want_kind} {sorted(want)}")
    if elf_names != entries:
        failures.append(f"cubin {sorted(elf_names)} and PTX {sorted(entries)} disagree")
    print("\n".join(failures) or f"PASS: {sorted(elf_names)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
