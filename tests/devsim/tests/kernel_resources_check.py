#!/usr/bin/env python3
"""Compares the kernel resources devsim reports with what ptxas printed when it compiled the
same source (`nvcc -res-usage`): registers, static shared memory and stack frame of every
kernel, through cudaFuncGetAttributes (nvcc's registered fatbin) and cuFuncGetAttribute (the
cubin loaded with cuModuleLoadData). The largest block a kernel may launch follows from its
registers: a block's 65536 registers go to warps in units of 256.

    kernel_resources_check.py <ptxas output> <program> <cubin>
"""
import re
import subprocess
import sys

BOUNDS = {"_Z11bounded_256Pf": 256}  # __launch_bounds__ of kernel_resources.cu below 1024


def ptxas_figures(path):
    figures, current = {}, None
    for line in open(path, encoding="utf-8"):
        entry = re.search(r"Compiling entry function '([^']+)' for 'sm_75'", line)
        if entry:
            current = entry.group(1)
            figures[current] = {"local": 0, "shared": 0}
            continue
        if current is None:
            continue
        frame = re.search(r"(\d+) bytes stack frame", line)
        if frame:
            figures[current]["local"] = int(frame.group(1))
        used = re.search(r"Used (\d+) registers", line)
        if used:
            figures[current]["regs"] = int(used.group(1))
            smem = re.search(r"(\d+) bytes smem", line)
            figures[current]["shared"] = int(smem.group(1)) if smem else 0
    return figures


def max_threads(name, regs):
    per_warp = (regs * 32 + 255) // 256 * 256
    return min(1024, BOUNDS.get(name, 1024), 65536 // per_warp * 32)


def reported(output, api):
    lines = re.findall(rf"^{api} (\S+) regs=(\d+) shared=(\d+) local=(\d+) max_threads=(\d+)", output, re.M)
    return {name: {"regs": int(r), "shared": int(s), "local": int(l), "max_threads": int(m)}
            for name, r, s, l, m in lines}


def main():
    ptxas_path, program, cubin = sys.argv[1:4]
    expected = ptxas_figures(ptxas_path)
    run = subprocess.run([program, cubin], capture_output=True, text=True, timeout=120)
    print(run.stdout, run.stderr, sep="")
    failures = [] if run.returncode == 0 else [f"program exited {run.returncode}"]
    if len(expected) < 5 or max(k["regs"] for k in expected.values()) <= 64:
        failures.append(f"ptxas output lacks the kernels or a register-heavy one: {expected}")
    for api in ("runtime", "driver"):
        got = reported(run.stdout, api)
        for name, want in expected.items():
            want = dict(want, max_threads=max_threads(name, want["regs"]))
            print(f"{api} {name}: devsim {got.get(name)}, ptxas {want}")
            if got.get(name) != want:
                failures.append(f"{api} {name}: devsim {got.get(name)} != ptxas {want}")
    for failure in failures:
        print("FAIL", failure)
    print("kernel_resources_check:", "FAILED" if failures else "PASSED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
