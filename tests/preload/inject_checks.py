#!/usr/bin/python3
"""Injection tests: programs no hook can see, traced through CUDA's tool injection and CUPTI's
API callbacks, and the interposed build of the same work, recorded once.

    inject_checks.py --agent LIB --devsim DIR --driver-program P --shared-program P
                     --static-program P --out DIR --case NAME

Each case runs its programs on the simulated device with PROFAGENT_OUTPUT_DIR under DIR, then
parses what the agent wrote. Only the Python standard library is used.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkers import CheckFailed, Trace, expect, expected_counts, check_links  # noqa: E402

DRIVER_STEPS = 4
OPTIONS = None


def run(name, program_args, preload=True, env=None):
    """Runs a program; returns (completed process, output dir)."""
    out = os.path.join(OPTIONS.out, name)
    os.makedirs(out)
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PROFAGENT_", "CUDA_INJECTION"))}
    environment.pop("LD_PRELOAD", None)
    environment.update(LD_LIBRARY_PATH=OPTIONS.devsim, PROFAGENT_OUTPUT_DIR=out)
    if preload:
        environment["LD_PRELOAD"] = OPTIONS.agent
    environment.update(env or {})
    done = subprocess.run(program_args, env=environment, capture_output=True, text=True, timeout=120)
    with open(os.path.join(out, "run.stderr"), "w") as f:
        f.write(done.stderr)
    expect(done.returncode == 0, f"{name}: exit code {done.returncode}, stderr:\n{done.stderr}")
    return done, out


def traces(out):
    return sorted(glob.glob(os.path.join(out, "*.trace.json")))


def only_trace(out):
    found = traces(out)
    expect(len(found) == 1, f"expected one trace in {out}, found {found}")
    return Trace(found[0])


def api(name):
    """The API a call implements: nvcc's private launch entry __cudaLaunchKernel is
    cudaLaunchKernel, whichever of the two names the trace gives it."""
    return name[2:] if name.startswith("__cuda") else name


def call_counts(trace):
    return Counter(api(e["name"]) for e in trace.runtime + trace.driver)


def check_complete(trace, wanted, driver_calls):
    """Every kernel, copy and set is there, linked by correlation to the call that issued it,
    whose name is right; each API call the program made appears exactly once."""
    kernels = Counter(e["name"] for e in trace.device if e["cat"] == "kernel")
    expect(dict(kernels) == wanted["kernels"], f"kernels {dict(kernels)}, issued {wanted['kernels']}")
    memcpy = sum(1 for e in trace.device if e["cat"] == "gpu_memcpy")
    memset = sum(1 for e in trace.device if e["cat"] == "gpu_memset")
    expect(memcpy == wanted["memcpy"], f"{memcpy} copies in the trace, {wanted['memcpy']} issued")
    expect(memset == wanted["memset"], f"{memset} sets in the trace, {wanted['memset']} issued")
    check_links(trace)
    issuers = {"kernel": "LaunchKernel", "gpu_memcpy": "Memcpy", "gpu_memset": "Memset"}
    for e in trace.device:
        host = trace.launcher(e)
        expect(issuers[e["cat"]] in host["name"], f"{e['name']} linked to {host['name']}")
    for e in trace.device:
        if e["cat"] in ("gpu_memcpy", "gpu_memset"):
            host = trace.launcher(e)
            expect(host["args"].get("bytes") == e["args"]["bytes"],
                   f"{host['name']} says {host['args'].get('bytes')} bytes, its {e['cat']} moved {e['args']['bytes']}")
    drops = trace.document.get("profagent_drops", {})
    expect(drops.get("late_device_records", 0) == 0 and drops.get("unmatched_device_records", 0) == 0,
           f"device records counted late or unmatched: {drops}")
    counts = call_counts(trace)
    for name, count in wanted["calls"].items():
        expect(counts[api(name)] == count, f"{name}: {counts[api(name)]} calls in the trace, {count} made")
    kinds = trace.driver if driver_calls else trace.runtime
    others = trace.runtime if driver_calls else trace.driver
    expect(kinds and not others, f"calls in the wrong category: {sorted(e['name'] for e in others)[:5]}")


def driver_case(kind):
    done, out = run(kind, [OPTIONS.driver_program, kind, str(DRIVER_STEPS)])
    check_complete(only_trace(out), expected_counts(done.stdout), driver_calls=True)


def case_driver_cubin():
    driver_case("cubin")


def case_driver_ptx():
    driver_case("ptx")


def case_driver_fatbin():
    driver_case("fatbin")


def case_driver_injection_only():
    """No LD_PRELOAD: the driver loads the agent from CUDA_INJECTION64_PATH alone."""
    done, out = run("injected", [OPTIONS.driver_program, "cubin", str(DRIVER_STEPS)], preload=False,
                    env={"CUDA_INJECTION64_PATH": OPTIONS.agent})
    check_complete(only_trace(out), expected_counts(done.stdout), driver_calls=True)
    expect("[profagent] wrote " in done.stderr, "no 'wrote' line")


def case_driver_api_marker():
    """api:cuStreamSynchronize ends each step; steps 2-3 are the window (wait=1, warmup=1)."""
    done, out = run("marker", [OPTIONS.driver_program, "cubin", "8"],
                    env={"PROFAGENT_STEP_ON": "api:cuStreamSynchronize",
                         "PROFAGENT_SCHEDULE": "wait=1,warmup=1,active=2,repeat=1"})
    trace = only_trace(out)
    kernels = Counter(e["name"] for e in trace.device if e["cat"] == "kernel")
    expect(dict(kernels) == {"scale": 2, "offset": 2}, f"window kernels {dict(kernels)}, want 2 steps' worth")
    counts = call_counts(trace)
    expect(counts["cuStreamSynchronize"] == 2 and counts["cuLaunchKernel"] == 4,
           f"window calls {dict(counts)}")
    expect("cuInit" not in counts, "a call of the idle first step is in the window")
    check_links(trace)


def case_static_runtime():
    """The static runtime's calls (invisible to the preload) equal the interposed build's."""
    done, out = run("static", [OPTIONS.static_program, "4"])
    wanted = expected_counts(done.stdout)
    static = only_trace(out)
    check_complete(static, wanted, driver_calls=False)
    _, shared_out = run("shared", [OPTIONS.shared_program, "4"])
    shared = only_trace(shared_out)
    device = lambda t: Counter((e["cat"], e["name"]) for e in t.device)  # noqa: E731
    expect(device(static) == device(shared), f"device records {device(static)} vs interposed {device(shared)}")
    expect(call_counts(static) == call_counts(shared),
           f"calls {dict(call_counts(static))} vs interposed {dict(call_counts(shared))}")


def case_static_injection_only():
    """A statically linked program with no LD_PRELOAD at all: the agent comes in by injection at
    the static runtime's first call, and the trace is as complete as with the preload."""
    done, out = run("static", [OPTIONS.static_program, "4"], preload=False,
                    env={"CUDA_INJECTION64_PATH": OPTIONS.agent})
    check_complete(only_trace(out), expected_counts(done.stdout), driver_calls=False)


def case_interposed_no_duplicates():
    """Hooks and callbacks both see an interposed program's calls: each is recorded once."""
    done, out = run("shared", [OPTIONS.shared_program, "4"])
    trace = only_trace(out)
    check_complete(trace, expected_counts(done.stdout), driver_calls=False)
    seen = Counter((e["tid"], e["start_ns"], e["name"]) for e in trace.runtime)
    expect(max(seen.values()) == 1, "a call recorded twice")


def case_ctypes_unversioned():
    """A runtime function looked up by its unversioned name (ctypes) reaches the runtime past
    the hooks; the callback records it, once, with its device work linked."""
    script = ("import ctypes\n"
              "rt = ctypes.CDLL('libcudart.so.13')\n"
              "p = ctypes.c_void_p()\n"
              "print(rt.cudaMalloc(ctypes.byref(p), 4096), rt.cudaMemset(p, 0, 4096), rt.cudaDeviceSynchronize())\n")
    done, out = run("ctypes", ["/usr/bin/python3", "-c", script])
    expect(done.stdout.split() == ["0", "0", "0"], f"the calls failed: {done.stdout!r}")
    trace = only_trace(out)
    counts = call_counts(trace)
    for name in ("cudaMalloc", "cudaMemset", "cudaDeviceSynchronize"):
        expect(counts[name] == 1, f"{name}: {counts[name]} rows, 1 call made ({dict(counts)})")
    sets = [e for e in trace.device if e["cat"] == "gpu_memset"]
    expect(len(sets) == 1 and trace.launcher(sets[0])["name"] == "cudaMemset", "the set is not linked to cudaMemset")
    expect(trace.launcher(sets[0])["args"].get("bytes") == 4096, "cudaMemset's bytes")


def printenv_under_agent(name, env=None):
    done, _ = run(name, ["/usr/bin/env"], env=env)
    values = [line.split("=", 1)[1] for line in done.stdout.splitlines() if line.startswith("CUDA_INJECTION64_PATH=")]
    return values[0] if values else None


def case_variable_claimed():
    """The agent names itself for its process (and so its children) when the variable is unset."""
    value = printenv_under_agent("unset")
    expect(value and os.path.realpath(value) == os.path.realpath(OPTIONS.agent),
           f"CUDA_INJECTION64_PATH={value!r}, not the agent")
    off = printenv_under_agent("cupti_off", {"PROFAGENT_CUPTI": "off"})
    expect(off is None, f"set to {off!r} although PROFAGENT_CUPTI=off")


def case_foreign_injection_kept():
    """Another tool's CUDA_INJECTION64_PATH is never overwritten; device tracing is then off."""
    other = os.path.join(OPTIONS.devsim, "libdevsim.so")  # a library without InitializeInjection
    expect(printenv_under_agent("env", {"CUDA_INJECTION64_PATH": other}) == other, "the variable was overwritten")
    done, out = run("program", [OPTIONS.shared_program, "2"], env={"CUDA_INJECTION64_PATH": other})
    lines = [l for l in done.stderr.splitlines() if "another tool is injected" in l]
    expect(len(lines) == 1, f"expected one 'device tracing off' line, stderr:\n{done.stderr}")
    trace = only_trace(out)
    expect(not trace.device and trace.runtime, "device records although another tool owns CUPTI")


def case_launcher():
    """`profagent run` names the agent in CUDA_INJECTION64_PATH (keeping another tool's value)
    and traces a driver-API-only program."""
    launcher = [OPTIONS.launcher, "run", "--output-dir"]
    done, out = run("env", launcher + [os.path.join(OPTIONS.out, "env"), "--", "/usr/bin/env"], preload=False)
    values = [l.split("=", 1)[1] for l in done.stdout.splitlines() if l.startswith("CUDA_INJECTION64_PATH=")]
    expect(values and os.path.realpath(values[0]) == os.path.realpath(OPTIONS.agent), f"launcher set {values}")
    done, _ = run("kept", launcher + [os.path.join(OPTIONS.out, "kept"), "--", "/usr/bin/env"], preload=False,
                  env={"CUDA_INJECTION64_PATH": "/opt/other/tool.so"})
    expect("CUDA_INJECTION64_PATH=/opt/other/tool.so" in done.stdout.splitlines(), "launcher overwrote the variable")
    program_out = os.path.join(OPTIONS.out, "program")
    done, _ = run("program", launcher + [program_out, "--", OPTIONS.driver_program, "cubin", str(DRIVER_STEPS)],
                  preload=False)
    check_complete(only_trace(program_out), expected_counts(done.stdout), driver_calls=True)


def case_callbacks_refused():
    """Another subscriber holds CUPTI's callbacks: one line says so; an interposed program is
    still traced whole (hooks + activity records), a driver-only one keeps its device records
    and the DRIVER activity rows of its launches."""
    refuse = {"DEVSIM_CUPTI_FAIL": "cuptiSubscribe=CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"}
    done, out = run("interposed", [OPTIONS.shared_program, "2"], env=refuse)
    said = [l for l in done.stderr.splitlines() if "CUPTI API callbacks off" in l]
    expect(len(said) == 1, f"expected one 'callbacks off' line, stderr:\n{done.stderr}")
    check_complete(only_trace(out), expected_counts(done.stdout), driver_calls=False)
    done, out = run("driver", [OPTIONS.driver_program, "cubin", "2"], env=refuse)
    trace = only_trace(out)
    wanted = expected_counts(done.stdout)
    kernels = Counter(e["name"] for e in trace.device if e["cat"] == "kernel")
    expect(dict(kernels) == wanted["kernels"], f"kernels {dict(kernels)}")
    expect(call_counts(trace)["cuLaunchKernel"] == wanted["calls"]["cuLaunchKernel"], "launch rows missing")
    expect("cuInit" not in call_counts(trace), "a call without device work was recorded without callbacks")


def main():
    global OPTIONS
    parser = argparse.ArgumentParser()
    for option in ("--agent", "--launcher", "--devsim", "--driver-program", "--shared-program",
                   "--static-program", "--out", "--case"):
        parser.add_argument(option, required=True)
    OPTIONS = parser.parse_args()
    shutil.rmtree(OPTIONS.out, ignore_errors=True)
    os.makedirs(OPTIONS.out)
    try:
        globals()["case_" + OPTIONS.case]()
    except CheckFailed as failure:
        print(f"FAIL {OPTIONS.case}: {failure}")
        return 1
    print(f"PASS {OPTIONS.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
