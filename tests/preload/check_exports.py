#!/usr/bin/python3
"""libprofagent.so must export its interposed CUDA symbols and its C API, and nothing else
(no C++ symbols, no diopi*, nothing of spdlog/fmt/libstdc++), and its static TLS block must
stay under 64 bytes, plus the C++ runtime's 32 when it is linked in (initial-exec TLS words only: a library
dlopen'ed after start-up with a large static TLS block can fail to load), and with the runtime linked in it
needs no libm.so.6.

Versions: every CUDA symbol exactly twice, as the hidden versions `name@libcudart.so.12` and
`name@libcudart.so.13` (never unversioned, never a default `@@` version, which an unversioned
dlsym would find); the exit, exec and loader wrappers and the C API unversioned (a named
version would stop them matching the program's references to glibc's `_exit@GLIBC_2.2.5`)."""
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
    "__cudaRegisterFunction", "__cudaRegisterFatBinary", "__cudaUnregisterFatBinary", "__cudaGetKernel",
    "profagent_step", "profagent_range_push", "profagent_range_pop", "profagent_recording",
]


RUNTIMES = ("libcudart.so.12", "libcudart.so.13")
# dlopen, dlclose: hooks/loader_hooks.cpp (DIOPI importers loaded later, unloaded runtimes).
# _exit, _Exit, quick_exit, exec*: agent/exit_hooks.cpp flushes before exits that skip atexit.
# InitializeInjection: what CUDA's driver calls in the library named by CUDA_INJECTION64_PATH
# (agent/injection.h); InitializeInjectionNvtx2: what each NVTX copy calls in the library named
# by NVTX_INJECTION64_PATH (agent/nvtx_injection.h), and InitializeInjectionNvtxExtension per
# extension module (the payload schemas).
# setenv, posix_spawn, posix_spawnp: agent/child_environment.h (the agent's own variables).
UNVERSIONED = {"_exit", "_Exit", "execve", "execv", "execvp", "execvpe", "execl", "execlp",
               "execle", "fexecve", "dlopen", "dlclose", "quick_exit", "execveat", "InitializeInjection",
               "InitializeInjectionNvtx2", "InitializeInjectionNvtxExtension",
               "setenv", "posix_spawn", "posix_spawnp"}
# The NCCL hooks (hooks/nccl.cpp): libnccl.so.2 versions none of its symbols, so neither do we.
NCCL = {"ncclAllGather", "ncclAllReduce", "ncclAlltoAll", "ncclBcast", "ncclBroadcast", "ncclCommAbort",
        "ncclCommDestroy", "ncclCommInitAll", "ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommSplit",
        "ncclGroupEnd", "ncclGroupStart", "ncclRecv", "ncclReduce", "ncclReduceScatter", "ncclSend"}


def exported_symbols(library):
    """(name, version, hidden) of every defined dynamic symbol but the version nodes."""
    nm = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions", library],
                        capture_output=True, text=True, check=True)
    found = []
    for line in nm.stdout.splitlines():
        fields = line.split()
        if not fields or fields[-1] in RUNTIMES:
            continue  # the version definitions themselves (absolute symbols)
        symbol = fields[-1]
        if "@@" in symbol:
            name, version, hidden = *symbol.split("@@", 1), False
        elif "@" in symbol:
            name, version, hidden = *symbol.split("@", 1), True
        else:
            name, version, hidden = symbol, "", False
        found.append((name, version, hidden))
    return found


def version_failures(found):
    failures = []
    cuda = {}
    for name, version, hidden in found:
        if re.match(r"^(cuda|__cuda)", name):
            if not hidden or version not in RUNTIMES:
                failures.append(f"{name} exported as {name}@{version or '(none)'}, not a hidden runtime version")
            cuda.setdefault(name, set()).add(version)
        elif version:
            failures.append(f"{name} has version {version}: it must stay unversioned")
    one_version = [n for n, versions in cuda.items() if versions != set(RUNTIMES)]
    if one_version:
        failures.append(f"not exported for both runtimes: {one_version[:10]}")
    return failures


# The agent's own thread-locals stay under 64 bytes. With the C++ runtime linked in
# (agent/static_runtime.cmake) the block also holds the runtime's: the exception globals
# (16 bytes) and std::call_once's (16), which libstdc++.so.6 otherwise brings in a TLS block of
# its own (32 bytes): no more TLS in all than with the shared library.
OWN_TLS_LIMIT = 64
CXX_RUNTIME_TLS = 32


def tls_limit(library):
    dynamic = subprocess.run(["readelf", "-dW", library], capture_output=True, text=True, check=True).stdout
    return OWN_TLS_LIMIT + (0 if "[libstdc++.so" in dynamic else CXX_RUNTIME_TLS)


# Libraries every process the agent is preloaded into must map: with the C++ runtime linked in
# (agent/static_runtime.cmake) the agent calls nothing of libm (collector/rounding.h), and
# mapping libm.so.6 cost each process that never uses CUDA ~0.05 ms (docs/startup.md).
NOT_NEEDED_WITH_STATIC_RUNTIME = ("libm.so.6",)


def needed_failures(library):
    dynamic = subprocess.run(["readelf", "-dW", library], capture_output=True, text=True, check=True).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
    if any(n.startswith("libstdc++.so") for n in needed):
        return []  # the shared C++ runtime needs libm itself
    return [f"needs {n}" for n in needed if n in NOT_NEEDED_WITH_STATIC_RUNTIME]


def main(library):
    found = exported_symbols(library)
    exported = [name for name, _, _ in found]
    stray = [s for s in exported if not re.match(r"^(cuda|__cuda|profagent_)", s) and s not in UNVERSIONED | NCCL]
    missing = [s for s in REQUIRED if s not in exported]
    failures = version_failures(found) + needed_failures(library)
    if stray:
        failures.append(f"unexpected exports: {stray[:20]}")
    if missing:
        failures.append(f"missing hooks: {missing}")
    headers = subprocess.run(["readelf", "-lW", library], capture_output=True, text=True, check=True).stdout
    tls = [line.split() for line in headers.splitlines() if line.strip().startswith("TLS")]
    tls_size = int(tls[0][5], 16) if tls else 0  # MemSiz
    limit = tls_limit(library)
    if tls_size >= limit:
        failures.append(f"static TLS block is {tls_size} bytes (limit {limit})")
    if failures:
        print("FAILED:", "; ".join(failures))
        return 1
    print(f"passed: {len(exported)} exports, all hooks (both runtime versions) or C API; TLS {tls_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
