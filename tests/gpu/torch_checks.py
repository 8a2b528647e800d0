"""The checks that need PyTorch (and Triton, CuPy, NCCL) on a CUDA device: the training loop
under `profagent run` and under plain LD_PRELOAD against torch.profiler's own trace of the same
steps, DataLoader workers, the step time with and without the agent, CUDA graphs, NVTX ranges,
NCCL, the caching allocator's reserved memory, Triton and CuPy kernels. Each program is under
tests/gpu/programs; every check skips where its framework is missing.
"""
import collections
import glob
import json
import os
import statistics

import trace_compare
from harness import Failed, Skipped, expect, passed

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
# The step window of the comparison: 30 steps, steps 12-14 recorded by both profilers.
STEPS, SKIP_FIRST, WARMUP, ACTIVE = 30, 10, 2, 3


def needs_cuda_torch(context):
    if not context.facts.get("cuda_available"):
        raise Skipped("needs PyTorch on a CUDA device (" + context.facts.get("torch_why", "not found") + ")")


def needs_module(context, name):
    needs_cuda_torch(context)
    if not context.facts.get(name):
        raise Skipped(f"{name} is not installed for {context.options.python}")


def script(name):
    return os.path.join(PROGRAMS, name)


def trace_folder(context, name):
    out = os.path.join(context.work, "traces", name)
    os.makedirs(out, exist_ok=True)
    return out


def one_trace(out, pattern="*.trace.json"):
    """The trace of the program's own process: the largest, should a child process it forked
    have written one of its own (its CPU-side calls: PROFAGENT_CHILD=light)."""
    found = sorted(glob.glob(os.path.join(out, pattern)), key=os.path.getsize)
    expect(found, f"no {pattern} in {os.path.basename(out)}: {sorted(os.listdir(out))}")
    return found[-1]


def profagent_run(context, out, program_args, options=(), env=None, timeout=150):
    """`profagent run` of the bundle: the user's way in."""
    command = [context.launcher, "run", "--output-dir", out, *options, "--", context.options.python, *program_args]
    completed = context.run(command, env=env, timeout=timeout)
    expect(not completed.timed_out, f"profagent run of {os.path.basename(program_args[0])} did not finish in time")
    expect(completed.returncode == 0, f"profagent run of {os.path.basename(program_args[0])} exited "
                                      f"{completed.returncode}: {completed.tail()}")
    return completed


def schedule_options():
    return ["--skip-first", str(SKIP_FIRST), "--warmup", str(WARMUP), "--active", str(ACTIVE),
            "--repeat", "1", "--step-on", "python"]


def reference_trace(context):
    """torch.profiler's trace of the same steps (made once, shared by the comparisons; a failed
    run is not tried again)."""
    if "reference_trace" in context.facts:
        if context.facts["reference_trace"] is None:
            raise Failed("the torch.profiler reference run failed (see its check)")
        return context.facts["reference_trace"]
    context.facts["reference_trace"] = None
    out = trace_folder(context, "torch_profiler")
    completed = context.run([context.options.python, script("train_loop.py"), "--steps", str(STEPS),
                             "--torch-profiler", out, "--skip-first", str(SKIP_FIRST), "--warmup", str(WARMUP),
                             "--active", str(ACTIVE)], timeout=150)
    expect(completed.returncode == 0, f"the torch.profiler run failed: {completed.tail()}")
    path = one_trace(out, "torch_profiler.trace.json")
    context.keep(path)
    context.facts["reference_trace"] = path
    return path


def compare_with_reference(context, ours_path):
    result = trace_compare.compare(trace_compare.load(ours_path), trace_compare.load(reference_trace(context)))
    for line in trace_compare.format_rows(result) + [f"note: {n}" for n in result.notes]:
        context.log.write("  " + line)
    context.facts.setdefault("operator_results", []).append(result.operators)
    if not result.passed:
        raise Failed("; ".join(result.problems[:6]) + (f" (+{len(result.problems) - 6} more)"
                                                       if len(result.problems) > 6 else ""))
    return passed(result.figure(), rows=result.rows, notes=result.notes)


def check_train_vs_torch_profiler(context):
    needs_cuda_torch(context)
    reference_trace(context)
    out = trace_folder(context, "train_profagent_run")
    profagent_run(context, out, [script("train_loop.py"), "--steps", str(STEPS)], schedule_options())
    ours = one_trace(out)
    context.keep(ours)
    context.facts["training_trace"] = ours
    return compare_with_reference(context, ours)


def check_train_ld_preload(context):
    """Plain LD_PRELOAD, no launcher: the variables by hand; the agent itself gives Python its
    start-up hook (the phases, `python` steps), as `profagent run` does."""
    needs_cuda_torch(context)
    out = trace_folder(context, "train_ld_preload")
    environment = {"LD_PRELOAD": context.agent, "PROFAGENT_OUTPUT_DIR": out,
                   "PROFAGENT_SCHEDULE": f"skip_first={SKIP_FIRST},warmup={WARMUP},active={ACTIVE},repeat=1",
                   "PROFAGENT_STEP_ON": "python"}
    completed = context.run([context.options.python, script("train_loop.py"), "--steps", str(STEPS)],
                            env=environment, timeout=150)
    expect(completed.returncode == 0, f"the training loop exited {completed.returncode}: {completed.tail()}")
    ours = one_trace(out)
    context.keep(ours)
    return compare_with_reference(context, ours)


def check_python_frames(context):
    """Python frames in call stacks (PROFAGENT_WITH_STACK=1, plain LD_PRELOAD) on this machine's
    Python: the cudaDeviceSynchronize of programs/python_frames.py's known_call() carries the
    frame `python_frames.py(<line>): known_call`, and the agent says nothing about Python (no
    unsupported version, no failed layout check)."""
    needs_cuda_torch(context)
    out = trace_folder(context, "python_frames")
    completed = context.run([context.options.python, script("python_frames.py")],
                            env={"LD_PRELOAD": context.agent, "PROFAGENT_OUTPUT_DIR": out,
                                 "PROFAGENT_WITH_STACK": "1"}, timeout=90)
    expect(completed.returncode == 0, f"python_frames.py exited {completed.returncode}: {completed.tail()}")
    result = completed.json_line() or {}
    said = [line for line in completed.stderr.splitlines() if line.startswith("[profagent]") and "Python" in line]
    expect(not said, f"Python {result.get('python')}: {said[:2]}")
    path = one_trace(out)
    context.keep(path)
    names = [frame.get("name", "") for frame in trace_compare.load(path).get("stackFrames", {}).values()]
    wanted = f"{result.get('file')}({result.get('line')}): {result.get('function')}"
    python_frames = [name for name in names if ".py(" in name]
    expect(any(name.endswith(wanted) for name in names),
           f"Python {result.get('python')}: no frame {wanted} among {len(python_frames)} Python frames "
           f"{python_frames[:4]}")
    return passed(f"Python {result.get('python')}: {wanted} in the stacks, {len(python_frames)} Python frames")


def check_operators(context):
    """torch operators in profagent's training traces (the Python hook's emit_nvtx, turned back
    into operators by the agent): every kernel of the recorded steps attributed to one, and per
    step the same operator names with the same counts as torch.profiler's trace."""
    needs_cuda_torch(context)
    results = context.facts.get("operator_results")
    if not results:
        raise Skipped("no training comparison ran")
    expect(any(result is not None for result in results),
           "profagent's training traces hold no operator (cpu_op): emit_nvtx was not turned on")
    problems = [line for result in results if result for line in result]
    expect(not problems, "; ".join(problems[:4]))
    return passed("every kernel of the recorded steps is attributed to an operator; "
                  "the steps' operators match torch.profiler's by name and count")


def check_dataloader_workers(context):
    """The same loop with 2 DataLoader worker processes (forked after CUDA is initialised):
    it must finish, and record the same kernels per step as the loop without workers."""
    needs_cuda_torch(context)
    out = trace_folder(context, "train_workers")
    profagent_run(context, out, [script("train_loop.py"), "--steps", str(STEPS), "--workers", "2"],
                  schedule_options())
    ours = one_trace(out)
    context.keep(ours)
    view = trace_compare.StepView(trace_compare.load(ours))
    reference = trace_compare.StepView(trace_compare.load(reference_trace(context)))
    expect([s[0] for s in view.steps] == [s[0] for s in reference.steps],
           f"recorded steps {[s[0] for s in view.steps]}, torch.profiler's {[s[0] for s in reference.steps]}")
    for number, _, _ in view.steps:
        difference = trace_compare.counter_difference(view.kernels(number), reference.kernels(number))
        expect(not difference, f"step {number}: " + "; ".join(difference[:3]))
    return passed(f"{len(view.steps)} steps with 2 workers, same kernels per step as torch.profiler's")


def median_step_ms(context, times_path, skip=5):
    with open(times_path) as f:
        seconds = json.load(f)["step_seconds"][skip:]
    expect(seconds, "no step time recorded")
    return statistics.median(seconds) * 1e3


def check_overhead(context):
    """Step time of the training loop without the agent, with the agent recording every step
    (`profagent run`, no schedule), and with the agent idle (every step skipped): 3 rounds,
    modes interleaved, median step time per run (steps 5+), ratio of medians."""
    needs_cuda_torch(context)
    out = trace_folder(context, "overhead")
    modes = ("none", "idle", "recording")
    medians = collections.defaultdict(list)
    for round_number in range(3):
        for mode in modes:
            times = os.path.join(out, f"{mode}{round_number}.json")
            args = [script("train_loop.py"), "--steps", "40", "--times", times]
            if mode == "none":
                completed = context.run([context.options.python, *args], timeout=120)
                expect(completed.returncode == 0, f"the loop failed: {completed.tail()}")
            else:
                schedule = ["--skip-first", "1000000000"] if mode == "idle" else []
                profagent_run(context, os.path.join(out, mode), args, schedule + ["--step-on", "python"], timeout=120)
            medians[mode].append(median_step_ms(context, times))
    none = statistics.median(medians["none"])
    ratios = {mode: statistics.median(medians[mode]) / none for mode in ("idle", "recording")}
    figure = (f"median step {none:.3f} ms alone; ratio idle {ratios['idle']:.3f}, recording "
              f"{ratios['recording']:.3f} (3 rounds)")
    expect(ratios["recording"] <= context.options.max_overhead_ratio,
           f"{figure}: recording costs more than the bound {context.options.max_overhead_ratio}")
    return passed(figure, step_ms=dict(medians))


def linked_kernels(view, pattern):
    """Kernels whose name contains `pattern`, and how many of them have their launch."""
    kernels = [e for e in view.device if e["cat"] == "kernel" and pattern in e["name"]]
    return kernels, sum(1 for e in kernels if view.launch(e) is not None)


def traced_program(context, name, program_args=(), env=None, options=()):
    """Runs a program of tests/gpu/programs under `profagent run` (whole run one window);
    returns its result line and the StepView of its trace."""
    out = trace_folder(context, name)
    completed = profagent_run(context, out, [script(name + ".py"), *program_args], options, env=env)
    path = one_trace(out)
    context.keep(path)
    return completed.json_line(), trace_compare.StepView(trace_compare.load(path)), trace_compare.load(path)


def check_triton(context):
    needs_module(context, "triton")
    result, view, _ = traced_program(context, "triton_add", env={"TRITON_CACHE_DIR": os.path.join(context.work, "triton")})
    expect(result["correct"], "the Triton kernel computed a wrong result under the agent")
    kernels, linked = linked_kernels(view, result["kernel"])
    launchers = collections.Counter(view.launch(e)["name"] for e in kernels if view.launch(e) is not None)
    expect(len(kernels) == result["launches"], f"{result['launches']} launches, {len(kernels)} kernels in the trace")
    expect(linked == len(kernels), f"{len(kernels) - linked} of {len(kernels)} Triton kernels not linked to a launch")
    return passed(f"{len(kernels)} Triton kernels, each linked to its launch ({dict(launchers)})")


def check_cupy(context):
    needs_module(context, "cupy")
    result, view, _ = traced_program(context, "cupy_kernels", env={"CUPY_CACHE_DIR": os.path.join(context.work, "cupy")})
    expect(result["correct"], "CuPy computed a wrong result under the agent")
    figures = []
    for name, launches in result["kernels"].items():
        kernels, linked = linked_kernels(view, name)
        expect(len(kernels) == launches, f"{launches} launches of {name}, {len(kernels)} kernels in the trace")
        expect(linked == launches, f"{launches - linked} {name} kernels not linked to a launch")
        figures.append(f"{name} {launches}")
    return passed("kernels linked to their launches: " + ", ".join(figures))


def check_cuda_graphs(context):
    needs_cuda_torch(context)
    result, view, _ = traced_program(context, "cuda_graphs")
    expect(result["correct"], "graph replays computed a wrong result under the agent")
    launches = sorted((e for e in view.calls.values() if e["name"].startswith("cudaGraphLaunch")),
                      key=lambda e: e["ts"])
    expect(len(launches) == result["replays"], f"{result['replays']} replays, {len(launches)} cudaGraphLaunch calls")
    per_launch = collections.Counter()
    for e in view.device:
        call = view.launch(e)
        if e["cat"] == "kernel" and call is not None and call["name"].startswith("cudaGraphLaunch"):
            per_launch[call["args"]["correlation"]] += 1
    counts = [per_launch[e["args"]["correlation"]] for e in launches]
    expect(counts and min(counts) > 0 and len(set(counts)) == 1,
           f"kernels per replay differ or are missing: {counts}")
    return passed(f"{len(launches)} replays, {counts[0]} kernels each, linked to their cudaGraphLaunch")


def check_nvtx(context):
    """torch.cuda.nvtx ranges (torch's own NVTX copy, through NVTX's injection): every range and
    mark with its count, and the kernels launched inside the inner ranges attributed to them."""
    needs_cuda_torch(context)
    result, view, document = traced_program(context, "nvtx_ranges")
    events = [e for e in document.get("traceEvents", []) if isinstance(e, dict)]
    names = collections.Counter(e.get("name") for e in events if e.get("ph") in ("X", "i")
                                and e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("gpu_check_nvtx"))
    context.log.write(f"  events named gpu_check_nvtx*: {dict(names)}")
    wanted = dict(result["ranges"], **result["marks"])
    expect(names == collections.Counter(wanted), f"NVTX ranges and marks: wanted {wanted}, trace has {dict(names)}")
    inner = {e["args"].get("External id") for e in events if e.get("ph") == "X" and e.get("name") == "gpu_check_nvtx_inner"}
    attributed = [e for e in view.device if e["cat"] == "kernel" and e.get("args", {}).get("External id") in inner]
    expect(len(attributed) >= result["ranges"]["gpu_check_nvtx_inner"],
           f"{len(attributed)} kernels carry an inner range's External id, wanted at least one per range")
    return passed(f"NVTX ranges and marks all present: {dict(names)}; {len(attributed)} kernels attributed to the inner ranges")


NCCL_KERNEL = ("nccl", "onerank")  # NCCL's kernels, and its one-rank reduction kernel


def nccl_kernels(view):
    return collections.Counter(e["name"] for e in view.device
                               if e["cat"] == "kernel" and any(k in e["name"].lower() for k in NCCL_KERNEL))


def check_nccl(context):
    """One rank, SUM and AVG all-reduces: the NCCL kernels in profagent's trace, each linked to
    its launch, are those torch.profiler records of the same program."""
    needs_cuda_torch(context)
    store = os.path.join(context.work, "nccl")
    reference_out = trace_folder(context, "nccl_torch_profiler")
    os.makedirs(os.path.join(store, "reference"), exist_ok=True)
    completed = context.run([context.options.python, script("nccl_allreduce.py"), os.path.join(store, "reference"),
                             "--torch-profiler", reference_out], timeout=120)
    expect(completed.returncode == 0, f"the torch.profiler run failed: {completed.tail()}")
    reference_path = one_trace(reference_out, "torch_profiler.trace.json")
    context.keep(reference_path)
    reference = nccl_kernels(trace_compare.StepView(trace_compare.load(reference_path)))
    os.makedirs(os.path.join(store, "ours"), exist_ok=True)
    result, view, _ = traced_program(context, "nccl_allreduce", [os.path.join(store, "ours")])
    expect(result["correct"], "the all-reduces computed a wrong result under the agent")
    ours = nccl_kernels(view)
    unlinked = sum(1 for e in view.device if e["cat"] == "kernel" and view.launch(e) is None)
    expect(unlinked == 0, f"{unlinked} kernels not linked to a launch")
    difference = trace_compare.counter_difference(ours, reference)
    expect(not difference, "NCCL kernels differ from torch.profiler's: " + "; ".join(difference[:3]))
    return passed(f"{sum(ours.values())} NCCL kernels for {result['all_reduces']} one-rank all-reduces, as "
                  f"torch.profiler, all linked (NCCL {result['nccl_version']}; {sorted(ours)[:2]})")


def nccl_operators(document):
    """The NCCL calls and groups the agent recorded as operators, by their id."""
    return {e["args"]["External id"]: e for e in document.get("traceEvents", [])
            if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") == "cpu_op"
            and str(e.get("name", "")).startswith("nccl")}


def check_nccl_ranks(context):
    """A torchrun-style launch under `profagent run`: the launcher writes nothing, every rank one
    trace with distributedInfo (backend nccl); every ncclAllReduce an operator with Kineto's
    communication args and a sequence number; every NCCL kernel linked by External id to the
    NCCL call (or group) that launched it and carrying its args."""
    needs_cuda_torch(context)
    out = trace_folder(context, "nccl_ranks")
    completed = profagent_run(context, out, [script("nccl_ranks.py"), "--ranks", "1"])
    result = completed.json_line()
    expect(result["correct"], "the collectives computed a wrong result under the agent")
    paths = sorted(glob.glob(os.path.join(out, "*.trace.json")))
    expect(len(paths) == result["ranks"], f"{len(paths)} traces for {result['ranks']} ranks (the launcher writes none)")
    figures = []
    for path in paths:
        context.keep(path)
        document = trace_compare.load(path)
        info = document.get("distributedInfo", {})
        expect(info.get("backend") == "nccl" and info.get("world_size") == result["ranks"], f"distributedInfo {info}")
        ops = nccl_operators(document)
        reduces = sorted((e for e in ops.values() if e["name"] == "ncclAllReduce"), key=lambda e: e["ts"])
        expect(len(reduces) == result["all_reduces"], f"{len(reduces)} ncclAllReduce operators, "
                                                      f"{result['all_reduces']} all-reduces")
        expect(all(e["args"].get("Collective name") == "allreduce" and e["args"].get("Group size") == result["ranks"]
                   and e["args"].get("In msg nelems") == 1 << 20 for e in reduces), "ncclAllReduce args wrong")
        seqs = [e["args"]["Seq"] for e in reduces]
        expect(seqs == sorted(set(seqs)), f"sequence numbers of the all-reduces not increasing: {seqs}")
        kernels = [e for e in document["traceEvents"] if isinstance(e, dict) and e.get("cat") == "kernel"
                   and any(k in e["name"].lower() for k in NCCL_KERNEL)]
        unlinked = [e["name"] for e in kernels if e["args"].get("External id") not in ops
                    or "Collective name" not in e["args"]]
        expect(kernels and not unlinked, f"{len(unlinked)} of {len(kernels)} NCCL kernels without their NCCL call: "
                                         f"{unlinked[:2]}")
        # An AVG all-reduce runs on the device even on one rank: each has its kernel.
        launched = {e["args"].get("External id") for e in kernels}
        without = [e["args"]["Seq"] for e in reduces if e["args"]["External id"] not in launched]
        expect(not without, f"all-reduces without a kernel (Seq): {without}")
        figures.append(f"rank {info.get('rank')}: {len(reduces)} all-reduces, {len(kernels)} NCCL kernels")
    return passed("; ".join(figures) + ", every kernel linked to its NCCL call with its args")


def last_reserved(document, device=0):
    """Reserved bytes of the last value of the agent's memory counter track of `device`."""
    counters = [e for e in document.get("traceEvents", []) if isinstance(e, dict) and e.get("ph") == "C"
                and e.get("name") == f"Memory (GPU {device})"]
    expect(counters, f"no 'Memory (GPU {device})' counter track in the trace")
    return int(max(counters, key=lambda e: float(e["ts"]))["args"]["Reserved"])


def check_memory_reserved(context):
    needs_cuda_torch(context)
    result, _, document = traced_program(context, "memory_reserved", env={"PROFAGENT_PROFILE_MEMORY": "1"})
    agent = last_reserved(document)
    torch_reserved = result["reserved"]
    difference = agent - torch_reserved
    figure = (f"agent reserved {agent / 2**20:.2f} MiB, torch.cuda.memory_reserved() "
              f"{torch_reserved / 2**20:.2f} MiB, difference {difference / 2**20:+.2f} MiB")
    allowed = max(2 << 20, 0.02 * torch_reserved)
    expect(abs(difference) <= allowed, f"{figure} (allowed {allowed / 2**20:.2f} MiB)")
    return passed(figure)
