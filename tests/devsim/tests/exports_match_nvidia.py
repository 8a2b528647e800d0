#!/usr/bin/python3
"""devsim's libcudart.so.13 must export exactly the functions NVIDIA's does, each at the default
version of the same node (`name@@libcudart.so.13`), so every program built against the real
runtime loads on devsim and binds without warnings.

    exports_match_nvidia.py <nm> <NVIDIA's libcudart.so.13> <devsim's libcudart.so.13>

Extras are refused too: a name NVIDIA lacks would let a program built on devsim fail to load on
a real system, and devsim's runtime needs no private exports (its model lives in libdevsim.so).
Only the Python standard library is used."""
import subprocess
import sys

NODE = "libcudart.so.13"


def exports(nm, library):
    """name -> version text ('@@node', '@node' or '') of each defined dynamic function."""
    out = subprocess.run([nm, "-D", "--defined-only", library], capture_output=True, text=True,
                         check=True).stdout
    found = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) != 3 or fields[1] not in "TtWi":
            continue  # the version node's own absolute symbol, data
        name, at, version = fields[2].partition("@")
        found[name] = at + version
    return found


def main():
    nm, nvidia_lib, devsim_lib = sys.argv[1:4]
    nvidia, devsim = exports(nm, nvidia_lib), exports(nm, devsim_lib)
    failures = []
    if len(nvidia) < 400:
        failures.append(f"only {len(nvidia)} functions read from {nvidia_lib}: not NVIDIA's runtime?")
    missing = sorted(set(nvidia) - set(devsim))
    extra = sorted(set(devsim) - set(nvidia))
    wrong_node = sorted(n for n in set(nvidia) & set(devsim) if devsim[n] != "@@" + NODE)
    nvidia_node = sorted(n for n in nvidia if nvidia[n] != "@@" + NODE)
    for label, names in (("missing from devsim", missing), ("exported by devsim only", extra),
                         (f"not at version @@{NODE} in devsim", wrong_node),
                         (f"not at version @@{NODE} in NVIDIA's (the check's premise)", nvidia_node)):
        if names:
            failures.append(f"{len(names)} {label}: {' '.join(names)}")
    print(f"NVIDIA exports {len(nvidia)} functions, devsim {len(devsim)}; "
          f"{len(missing)} missing, {len(extra)} extra, {len(wrong_node)} at another version")
    for failure in failures:
        print("FAIL " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
