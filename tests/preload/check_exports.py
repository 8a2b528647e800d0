#!/usr/bin/python3
"""libprofagent.so must export its interposed CUDA symbols and its C API, and nothing else
(no C++ symbols, no diopi*, nothing of spdlog/fmt/libstdc++), and its static TLS block must
stay under 64 bytes (initial-exec TLS words only, pitfalls §10)."""
import re
import subprocess
import sys

REQUIRED = [
    "cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz",
    "__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "cudaLaunchCooperativeKernel", "cudaGraphLaunch_ptsz",
    "cudaMemcpy", "cudaMemcpy_ptds", "cudaMemcpyAsync_ptsz", "cudaMemcpy2DAsync_ptsz", "cudaMemcpyPeerAsync",
    "cudaMemset", "cudaMemsetAsync_ptsz", "cudaMalloc", "cudaFree", "cudaMallocAsync_ptsz", "cudaFreeAsync",
    "cudaDeviceSynchronize", "cudaStreamSynchronize_ptsz", "cudaEventSynchronize", "cudaStreamWaitEvent_ptsz",
    "cudaEventRecord_ptsz", "cudaStreamBeginCapture", "cudaStreamEndCapture_ptsz", "cudaProfilerStart",
    "__cudaRegisterFunction", "__cudaRegisterFatBinary", "__cudaGetKernel",
    "profagent_step", "profagent_range_push", "profagent_range_pop",
]


def main(library):
    nm = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True, check=True)
    exported = [line.split()[-1].split("@")[0] for line in nm.stdout.splitlines() if line.strip()]
    # dlopen: hooks/diopi re-patches DIOPI importers after every load (never a diopi* export).
    # _exit, _Exit, exec*: agent/exit_hooks.cpp flushes before exits that skip atexit.
    exit_paths = {"_exit", "_Exit", "execve", "execv", "execvp", "execvpe", "execl", "execlp",
                  "execle", "fexecve", "quick_exit", "execveat"}
    stray = [s for s in exported
             if not re.match(r"^(cuda|__cuda|profagent_)", s) and s != "dlopen" and s not in exit_paths]
    missing = [s for s in REQUIRED if s not in exported]
    failures = []
    if stray:
        failures.append(f"unexpected exports: {stray[:20]}")
    if missing:
        failures.append(f"missing hooks: {missing}")
    headers = subprocess.run(["readelf", "-lW", library], capture_output=True, text=True, check=True).stdout
    tls = [line.split() for line in headers.splitlines() if line.strip().startswith("TLS")]
    tls_size = int(tls[0][5], 16) if tls else 0  # MemSiz
    if tls_size >= 64:
        failures.append(f"static TLS block is {tls_size} bytes (limit 64)")
    if failures:
        print("FAILED:", "; ".join(failures))
        return 1
    print(f"passed: {len(exported)} exports, all hooks or C API; TLS {tls_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
