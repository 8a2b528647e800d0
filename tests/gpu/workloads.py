"""The project's own nvcc-built programs on the device at hand: built here with the toolkit's
nvcc (sm_<arch> code plus PTX), run with and without the agent, their traces checked as the
preload tests check devsim's (tests/preload/checkers.py, check_workload_unchanged), and the
launch loop of tests/bench/bench_calls.cu timed with and without the agent.
"""
import concurrent.futures
import os
import re
import statistics
import sys
import time

from harness import Failed, Skipped, expect, passed

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TESTS, "preload"))
import checkers  # noqa: E402 (tests/preload: the devsim tests' trace checks)
import cupti_semantics  # noqa: E402

WORKLOAD_DIR = os.path.join(TESTS, "workloads")
SIMBLAS_DIR = os.path.join(WORKLOAD_DIR, "simblas")

# name: (source under tests/, links libsimblas, extra nvcc flags)
PROGRAMS = {
    "demo_train": ("workloads/demo_train.cu", True, []),
    "simblas_check": ("workloads/simblas/simblas_check.cu", True, []),
    "graph_branches": ("workloads/graph_branches.cu", False, []),
    "capture_fork": ("workloads/capture_fork.cu", False, []),
    "stream_ordered_alloc": ("workloads/stream_ordered_alloc.cu", False, []),
    "managed_prefetch": ("workloads/managed_prefetch.cu", False, []),
    "per_thread_pinned": ("workloads/per_thread_pinned.cu", False, ["--default-stream=per-thread", "-lpthread"]),
    "register_limits": ("workloads/register_limits.cu", False, []),
    "bench_calls": ("bench/bench_calls.cu", False, []),
    "cupti_semantics": ("gpu/programs/cupti_semantics.cu", False, ["-lcupti"]),
    "graph_capture_app": ("preload/programs/graph_capture_app.cu", False, ["-ldl"]),
}
# The workload checks: program and arguments (the one-device programs of tests/workloads), and
# the checker the preload tests hold each to (tests/preload/CMakeLists.txt, WorkloadTest.cmake):
# workload_unchanged for the workloads of the samples' kinds; consistent_trace, with the
# output compared as run_and_match does, for demo_train and simblas_check (they record
# several events, which the Kineto event-wait check of workload_unchanged does not tell apart).
RUNS = {
    "demo_train": (["demo_train", "10"], "consistent_trace"),
    "demo_train_graph": (["demo_train", "5", "--graph"], "consistent_trace"),
    "simblas_check": (["simblas_check"], "consistent_trace"),
    "graph_branches": (["graph_branches"], "workload_unchanged"),
    "capture_fork": (["capture_fork"], "workload_unchanged"),
    "stream_ordered_alloc": (["stream_ordered_alloc"], "workload_unchanged"),
    "managed_prefetch": (["managed_prefetch"], "workload_unchanged"),
    "per_thread_pinned": (["per_thread_pinned"], "workload_unchanged"),
    "register_limits": (["register_limits"], "workload_unchanged"),
    # CUDA graph replays attributed to the NVTX range open at their capture (docs/graphs.md):
    # real CUPTI's exec node ids, clone callbacks and launch correlation, as devsim's.
    "graph_capture_attributed": (["graph_capture_app", "6"], "graph_capture_attributed"),
}


def nvcc_common(context):
    arch = context.options.arch
    launcher = [context.options.compiler_launcher] if context.options.compiler_launcher else []
    return launcher + [os.path.join(context.options.cuda_home, "bin", "nvcc"), "-O2", "-std=c++17",
                       "-cudart", "shared", f"-gencode=arch=compute_{arch},code=[sm_{arch},compute_{arch}]"]


def wanted_programs(context):
    """The programs the selected workload checks run, and bench_calls."""
    selected = context.options.workloads.split(",") if context.options.workloads else list(RUNS)
    return {RUNS[name][0][0] for name in selected} | {"bench_calls", "cupti_semantics"}


def build_commands(context, out):
    """(name, command) for libsimblas.so first, then every program wanted."""
    stubs = os.path.join(context.options.cuda_home, "lib64", "stubs")
    # At link time the driver is the toolkit's stub, seen under its soname by the linker only.
    stub_dir = os.path.join(out, "driver-stub")
    os.makedirs(stub_dir, exist_ok=True)
    if not os.path.lexists(os.path.join(stub_dir, "libcuda.so.1")):
        os.symlink(os.path.join(stubs, "libcuda.so"), os.path.join(stub_dir, "libcuda.so.1"))
    simblas = ("libsimblas.so", nvcc_common(context) + [
        "-shared", "-Xcompiler", "-fPIC,-fvisibility=hidden", "-I", SIMBLAS_DIR,
        os.path.join(SIMBLAS_DIR, "simblas.cu"), "-o", os.path.join(out, "libsimblas.so"),
        "-L", stubs, "-lcuda"])
    programs = []
    for name, (source, uses_simblas, extra) in PROGRAMS.items():
        if name not in wanted_programs(context):
            continue
        command = nvcc_common(context) + ["-I", WORKLOAD_DIR, "-I", SIMBLAS_DIR,
                                          os.path.join(TESTS, source), "-o", os.path.join(out, name),
                                          "-L", os.path.join(context.options.cuda_home, "lib64")] + extra
        if uses_simblas:
            command += ["-L", out, "-lsimblas", "-Xlinker", f"-rpath-link,{stub_dir}",
                        "-Xlinker", "-rpath,$ORIGIN"]
        programs.append((name, command))
    return simblas, programs


def check_build(context):
    """Builds the programs the checks run (in parallel); the workload checks use what was built."""
    nvcc = os.path.join(context.options.cuda_home, "bin", "nvcc")
    if not os.access(nvcc, os.X_OK):
        raise Skipped(f"no nvcc at {nvcc}")
    out = os.path.join(context.work, "workloads")
    os.makedirs(out, exist_ok=True)
    begin = time.monotonic()
    simblas, programs = build_commands(context, out)
    completed = context.run(simblas[1], timeout=240)
    expect(completed.returncode == 0, f"libsimblas.so did not build: {completed.tail()}")
    built, failed = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=context.options.jobs) as pool:
        results = pool.map(lambda item: (item[0], context.run(item[1], timeout=240)), programs)
        for name, result in results:
            (built if result.returncode == 0 else failed).append(name)
    context.facts["workload_dir"] = out
    context.facts["workloads_built"] = set(built)
    expect(not failed, f"nvcc failed for {', '.join(failed)} (built: {', '.join(built)})")
    return passed(f"{len(built)} programs and libsimblas.so built for sm_{context.options.arch} "
                  f"in {time.monotonic() - begin:.0f} s")


def device_environment(context):
    """Where the programs find the CUDA runtime: the simulated device's folder on devsim, the
    toolkit's lib64 on a GPU (the driver is the system's)."""
    if context.options.devsim:
        return {"LD_LIBRARY_PATH": context.options.devsim_dir}
    return {"LD_LIBRARY_PATH": os.path.join(context.options.cuda_home, "lib64")}


def program(context, name):
    if name not in context.facts.get("workloads_built", ()):
        raise Skipped(f"{name} was not built (see workloads.build)")
    return os.path.join(context.facts["workload_dir"], name)


class RunView:
    """A Completed run as tests/preload/checkers.py expects one."""

    def __init__(self, completed):
        expect(not completed.timed_out, f"{' '.join(completed.command[-2:])} did not finish in time")
        self.stdout, self.stderr, self.returncode = completed.stdout, completed.stderr, completed.returncode


def output_unchanged(under_agent, alone):
    """As run_and_match's ALSO_UNDER_AGENT: same exit status and stdout, numbers aside."""
    expect(under_agent.returncode == alone.returncode,
           f"exit status {under_agent.returncode} under the agent, {alone.returncode} without")
    expect(checkers.without_numbers(under_agent.stdout) == checkers.without_numbers(alone.stdout),
           f"stdout differs under the agent: {under_agent.stdout[-300:]!r} / {alone.stdout[-300:]!r}")


def check_workload(name):
    argv, checker = RUNS[name]

    def check(context):
        command = [program(context, argv[0])] + argv[1:]
        out = os.path.join(context.work, "traces", "workload_" + name)
        os.makedirs(out, exist_ok=True)
        # Info level: the agent names the CUPTI it loaded ([profagent] lines are not the program's).
        environment = dict(device_environment(context), PROFAGENT_OUTPUT_DIR=out, PROFAGENT_LOG_LEVEL="info")
        under_agent = RunView(context.run(command, env=dict(environment, LD_PRELOAD=context.agent), timeout=120))
        alone = RunView(context.run(command, env=environment, timeout=120))
        checker_context = checkers.Context(out, under_agent, lambda: alone)
        checker_context.profagent_cli = context.launcher
        try:
            if checker == "consistent_trace":
                output_unchanged(under_agent, alone)
            getattr(checkers, "check_" + checker)(checker_context)
        except checkers.CheckFailed as failure:
            raise Failed(str(failure)) from None
        finally:
            for trace in sorted(os.listdir(out)):
                context.keep(os.path.join(out, trace))
        cupti = [line for line in under_agent.stderr.splitlines() if "loaded from" in line]
        context.facts.setdefault("agent_cupti_lines", set()).update(cupti)
        return passed(checker_context.summary + (f"; {cupti[0]}" if cupti else ""))
    return check


def check_cupti_semantics(context):
    """The CUPTI rules the agent relies on (cupti_semantics.py), on the device at hand."""
    built = "cupti_semantics" in context.facts.get("workloads_built", ())
    return cupti_semantics.check(context, program(context, "cupti_semantics") if built else None,
                                 device_environment(context))


BENCH_FIGURE = re.compile(r"calls=(\d+) wall_ns=(\d+) cpu_ns=(\d+)")


def bench_ns_per_call(context, environment, call, calls, sync_every):
    command = [program(context, "bench_calls"), call, str(calls), str(sync_every)]
    completed = context.run(command, env=environment, timeout=60)
    match = BENCH_FIGURE.search(completed.stdout)
    expect(completed.returncode == 0 and match, f"bench_calls {call} failed: {completed.tail()}")
    return int(match.group(2)) / int(match.group(1))


def check_launch_cost(context):
    """Per-call cost of a launch loop (empty kernel <<<1,1>>>, a synchronisation every 1000) on
    the runtime at hand: without the agent, with the agent loaded and idle (every step skipped),
    and recording with CUPTI. Modes interleaved, 3 rounds, medians; figures, not thresholds."""
    calls = context.options.bench_calls
    base = dict(device_environment(context), PROFAGENT_OUTPUT_DIR=os.path.join(context.work, "bench_out"))
    modes = {
        "none": base,
        "idle": dict(base, LD_PRELOAD=context.agent, PROFAGENT_SKIP_FIRST="1000000000"),
        "recording": dict(base, LD_PRELOAD=context.agent),
    }
    samples = {mode: [] for mode in modes}
    for _ in range(3):
        for mode, environment in modes.items():
            samples[mode].append(bench_ns_per_call(context, environment, "launch", calls, 1000))
    median = {mode: statistics.median(values) for mode, values in samples.items()}
    figure = (f"launch {median['none']:.0f} ns/call alone, +{median['idle'] - median['none']:.0f} ns idle, "
              f"+{median['recording'] - median['none']:.0f} ns recording ({calls} calls, medians of 3)")
    return passed(figure, samples_ns_per_call=samples)
