"""Checkers of the files libprofagent.so wrote. Each check_<name>
receives a Context and raises CheckFailed with a sentence saying what is wrong.

Times: the trace's ts/dur are microseconds with exactly 3 decimals, so ns = round(x * 1000)
is exact and sums recomputed from the trace must equal the summary's ns numbers exactly.
"""
import bisect
import collections
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from trace_reader import load_trace  # noqa: E402

DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


class CheckFailed(Exception):
    pass


def report(check, context, command, agent_run, name):
    """Runs one checker; prints the verdict (and, on failure, what ran and its stderr tail)."""
    try:
        check(context)
    except CheckFailed as failure:
        print(f"FAILED: {failure}")
        print(f"--- command: {' '.join(command)}")
        print(f"--- exit code {agent_run.returncode}; stderr:\n{agent_run.stderr[-4000:]}")
        return 1
    print(f"passed: {name} ({context.summary})")
    return 0


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


class Context:
    def __init__(self, out_dir, run, run_without_agent):
        self.out_dir = out_dir
        self.run = run
        self.run_without_agent = run_without_agent
        self.summary = ""


def is_driver_call(event):
    return event.get("cat") == "cuda_driver" or not re.match(r"^_*cuda", event["name"])


def ns(value):
    return round(value * 1000)


# ---- reading the output ----------------------------------------------------------------------

def only_file(out_dir, pattern):
    found = glob.glob(os.path.join(out_dir, "**", pattern), recursive=True)
    expect(len(found) == 1, f"expected exactly one {pattern} in {out_dir}, found {found}")
    return found[0]


def expected_counts(stdout):
    lines = [line for line in stdout.splitlines() if line.startswith("expect ")]
    expect(len(lines) == 1, "the program printed no 'expect {...}' line")
    return json.loads(lines[0][len("expect "):])


def profagent_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("[profagent]")]


def other_lines(stderr):
    return [line for line in stderr.splitlines() if not line.startswith("[profagent]")]


class Trace:
    """The trace.json events, indexed the ways the checks need."""

    def __init__(self, path):
        self.document = load_trace(path)
        events = self.document["traceEvents"]
        self.complete = [e for e in events if e.get("ph") == "X"]
        for e in self.complete:
            e["start_ns"] = ns(e["ts"])
            e["end_ns"] = ns(e["ts"]) + ns(e["dur"])
        self.device = [e for e in self.complete if e.get("cat") in DEVICE_CATEGORIES]
        # Driver calls no hook saw (CUPTI's record of simblas' cuLaunchKernel): category
        # cuda_driver, or cuda_runtime with a driver API name (cu*, not cuda*).
        host = [e for e in self.complete if e.get("cat") in ("cuda_runtime", "cuda_driver")]
        self.driver = [e for e in host if is_driver_call(e)]
        self.runtime = [e for e in host if not is_driver_call(e)]
        self.ranges = [e for e in self.complete if e.get("cat") == "user_annotation"]
        self.flow_starts = {e["id"]: e for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g"}
        self.flow_ends = {(e["pid"], e["tid"], ns(e["ts"])): e for e in events
                          if e.get("ph") == "f" and e.get("cat") == "ac2g"}
        self.host_at = {(e["pid"], e["tid"], e["start_ns"]): e for e in self.runtime + self.driver}

    def launcher(self, device_event):
        """The host call an ac2g flow links to this device event, or None."""
        end = self.flow_ends.get((device_event["pid"], device_event["tid"], device_event["start_ns"]))
        if end is None:
            return None
        start = self.flow_starts.get(end["id"])
        if start is None:
            return None
        return self.host_at.get((start["pid"], start["tid"], ns(start["ts"])))


class RangeIndex:
    """The ranges of each (name, pid, tid), sorted by start, to find those that overlap a host
    call without scanning every range (a run has tens of thousands)."""

    def __init__(self, ranges):
        self.spans = collections.defaultdict(list)
        for r in ranges:
            self.spans[(r["name"], r["pid"], r["tid"])].append(r)
        self.starts, self.longest = {}, {}
        for key, spans in self.spans.items():
            spans.sort(key=lambda r: r["start_ns"])
            self.starts[key] = [r["start_ns"] for r in spans]
            self.longest[key] = max(r["end_ns"] - r["start_ns"] for r in spans)

    def overlapping(self, name, host_event):
        key = (name, host_event["pid"], host_event["tid"])
        spans = self.spans.get(key, [])
        if not spans:
            return []
        # A range that overlaps the call starts before the call ends, and no earlier than the
        # call's start minus the longest range of that key.
        first = bisect.bisect_left(self.starts[key], host_event["start_ns"] - self.longest[key])
        last = bisect.bisect_left(self.starts[key], host_event["end_ns"])
        return spans[first:last]


def enclosing(index, host_event, name):
    """The `name` range around a host call on its thread. Driver calls come from CUPTI's
    records, whose clock is aligned to ours only to within a measured offset, so the range
    that overlaps the call most is taken rather than demanding exact containment."""
    def overlap(r):
        return min(r["end_ns"], host_event["end_ns"]) - max(r["start_ns"], host_event["start_ns"])
    candidates = [r for r in index.overlapping(name, host_event) if overlap(r) > 0]
    return max(candidates, key=overlap) if candidates else None


# ---- the checks of a devsim run --------------------------------------------------------------

def check_last_line(context):
    lines = profagent_lines(context.run.stderr)
    expect(lines, "profagent printed nothing on stderr")
    last = context.run.stderr.rstrip("\n").splitlines()[-1]
    expect(last.startswith("[profagent] wrote "), f"the last stderr line is not the 'wrote' line: {last!r}")
    paths = [p.strip() for p in last[len("[profagent] wrote "):].split(",")]
    for path in paths:
        expect(os.path.exists(path), f"the 'wrote' line names {path}, which does not exist")


def check_device_records(trace, wanted):
    for e in trace.device:
        args = e.get("args", {})
        expect("device" in args and "stream" in args, f"device record without device/stream: {e}")
        expect(e["pid"] == args["device"], f"device record not on its device's row: {e}")
    kernels = [e for e in trace.device if e["cat"] == "kernel"]
    for base, count in wanted["kernels"].items():
        found = sum(1 for e in kernels if base in e["name"])
        expect(found == count, f"{count} {base} launched, {found} in the trace")
    memcpy = sum(1 for e in trace.device if e["cat"] == "gpu_memcpy")
    memset = sum(1 for e in trace.device if e["cat"] == "gpu_memset")
    expect(memcpy == wanted["memcpy"], f"{wanted['memcpy']} copies issued, {memcpy} in the trace")
    expect(memset == wanted["memset"], f"{wanted['memset']} sets issued, {memset} in the trace")
    runtime_kernels = sum(wanted["kernels"].values())
    expect(len(kernels) == runtime_kernels + wanted["driver_kernels"],
           f"{runtime_kernels + wanted['driver_kernels']} kernels in all, {len(kernels)} in the trace")


def check_links(trace):
    """Every device record is linked (ac2g flow, equal correlation) to the call that issued
    it, and starts no earlier than that call."""
    for e in trace.device:
        host = trace.launcher(e)
        expect(host is not None, f"{e['cat']} {e['name']!r} at {e['ts']} has no ac2g flow to a host call")
        expect(host["args"].get("correlation") == e["args"]["correlation"],
               f"{e['name']!r}: correlation {e['args']['correlation']} but its launch has {host['args'].get('correlation')}")
        expect(e["start_ns"] >= host["start_ns"],
               f"{e['name']!r} starts at {e['ts']} before its launch {host['name']} at {host['ts']}")


def check_driver_threads(trace):
    """Driver calls no hook saw are drawn on the OS thread that made them (CUPTI's threadId
    is not an OS tid: the collector must map it)."""
    threads = {(e["pid"], e["tid"]) for e in trace.runtime + trace.ranges}
    for call in trace.driver:
        expect((call["pid"], call["tid"]) in threads,
               f"driver call {call['name']} at {call['ts']} is on thread {call['tid']}, which made no "
               f"hooked call (known threads {sorted(t for _, t in threads)}): CUPTI threadId not mapped to the OS tid?")


# Driver calls NVIDIA's runtime makes inside its own calls (cudaGetDevice asks
# cuCtxGetDevice_v2; a kernel's first launch fetches it with cuLibraryGetKernel). CUPTI reports
# them in the driver domain, but they are not the program's calls.
RUNTIME_INTERNAL_DRIVER_CALLS = {"cuCtxGetDevice_v2", "cuLibraryGetKernel", "cuLibraryLoadData"}


def check_no_runtime_internal_calls(trace):
    """No driver row is a call the runtime made inside one of its own (recorded or left out)."""
    internal = [e["name"] for e in trace.driver if e["name"] in RUNTIME_INTERNAL_DRIVER_CALLS]
    expect(not internal, f"{len(internal)} driver calls the runtime made internally are rows of the trace: "
                         f"{sorted(set(internal))}")


def check_external_ids(trace, wanted):
    """Kernels inside a range carry the range's External id — also those launched through
    the driver (simblas' cuLaunchKernel), which no hook sees."""
    driver_kernels = 0
    ranges = RangeIndex(trace.ranges)
    for e in trace.device:
        if e["cat"] != "kernel":
            continue
        host = trace.launcher(e)
        innermost = "driver_region" if is_driver_call(host) else "iteration"
        driver_kernels += is_driver_call(host)
        scope = enclosing(ranges, host, innermost)
        expect(scope is not None, f"kernel {e['name']!r}: its launch is not inside a {innermost} range")
        expect(e["args"].get("External id") == scope["args"]["External id"],
               f"kernel {e['name']!r}: External id {e['args'].get('External id')} != {innermost} range's "
               f"{scope['args']['External id']}")
    expect(driver_kernels == wanted["driver_kernels"],
           f"{wanted['driver_kernels']} driver-level launches, {driver_kernels} kernels linked to cuda_driver calls")
    for name, count in wanted["ranges"].items():
        found = sum(1 for r in trace.ranges if r["name"] == name)
        expect(found == count, f"{count} {name} ranges opened, {found} in the trace")


def check_syncs(trace):
    """A synchronisation ends after what it waited for: cudaDeviceSynchronize after all work
    issued before it; cudaStreamSynchronize after the work of the call just before it (the
    program issues that call on the synchronised stream)."""
    by_host = collections.defaultdict(list)
    for e in trace.device:
        by_host[id(trace.launcher(e))].append(e)
    calls = sorted(trace.runtime, key=lambda h: h["start_ns"])
    device_syncs = stream_syncs = 0
    latest_before = None          # of the device records of every call before this one
    previous_on_thread = {}       # (pid, tid) -> the last call before this one on that thread
    for call in calls:
        if call["name"] == "cudaDeviceSynchronize":
            device_syncs += 1
            expect(latest_before is None or latest_before["end_ns"] <= call["end_ns"],
                   f"cudaDeviceSynchronize at {call['ts']} ended before {latest_before}")
        if call["name"].startswith("cudaStreamSynchronize"):
            stream_syncs += 1
            before = previous_on_thread.get((call["pid"], call["tid"]))
            waited = by_host[id(before)] if before is not None else []
            expect(waited, f"the call before cudaStreamSynchronize ({before and before['name']}) issued no device work")
            late = [e for e in waited if e["end_ns"] > call["end_ns"]]
            expect(not late, f"cudaStreamSynchronize at {call['ts']} ended before {late[:1]}")
        for e in by_host[id(call)]:
            if latest_before is None or e["end_ns"] > latest_before["end_ns"]:
                latest_before = e
        previous_on_thread[(call["pid"], call["tid"])] = call
    expect(device_syncs > 0 and stream_syncs > 0, "the run has no device or stream synchronisation")


def summary_rows(out_dir):
    with open(only_file(out_dir, "*.summary.ndjson"), encoding="utf-8") as f:
        return json.loads(f.readline())


def table_row_names(trace):
    """The table's row name of each host call (by id()): its name, and for a CUDA graph launch
    the graph its device records came from ("cudaGraphLaunch (graph 3)": a row per graph)."""
    names = {}
    for e in trace.device:
        graph = e.get("args", {}).get("graph id", 0)
        host = trace.launcher(e) if graph else None
        if host is not None and "GraphLaunch" in host["name"]:
            names[id(host)] = f"{host['name']} (graph {graph})"
    return names


def check_table(trace, summary):
    """Every number of the table equals the sum recomputed from the trace."""
    row_names = table_row_names(trace)
    sums = collections.defaultdict(lambda: [0, 0])
    for e in trace.device:
        sums[("device", e["name"])][0] += 1
        sums[("device", e["name"])][1] += e["end_ns"] - e["start_ns"]
    for e in trace.runtime + trace.driver + trace.ranges:
        sums[("host", row_names.get(id(e), e["name"]))][0] += 1
        sums[("host", row_names.get(id(e), e["name"]))][1] += e["end_ns"] - e["start_ns"]
    issued = collections.defaultdict(int)
    for e in trace.device:
        host = trace.launcher(e)
        if host is not None:
            issued[row_names.get(id(host), host["name"])] += e["end_ns"] - e["start_ns"]
    checked = 0
    for row in summary["rows"]:
        if row["kind"] in ("kernel", "memcpy", "memset"):
            count, total = sums[("device", row["name"])]
            expect((row["count"], row["cuda_total_ns"], row["self_cuda_ns"]) == (count, total, total),
                   f"table row {row['name']!r}: {row} but the trace sums to count {count}, {total} ns")
        elif row["kind"] in ("runtime", "driver", "range"):
            count, total = sums[("host", row["name"])]
            expect((row["count"], row["cpu_total_ns"]) == (count, total),
                   f"table row {row['name']!r}: {row} but the trace sums to count {count}, {total} ns")
            if row["kind"] in ("runtime", "driver"):
                expect(row["cuda_total_ns"] == issued[row["name"]],
                       f"table row {row['name']!r}: CUDA total {row['cuda_total_ns']} != {issued[row['name']]} "
                       "ns of device work it issued")
        else:
            continue
        checked += 1
    device_total = sum(e["end_ns"] - e["start_ns"] for e in trace.device)
    expect(summary["self_cuda_time_total_ns"] == device_total,
           f"Self CUDA time total {summary['self_cuda_time_total_ns']} != {device_total} ns in the trace")
    self_cpu = sum(row["self_cpu_ns"] for row in summary["rows"])
    expect(summary["self_cpu_time_total_ns"] == self_cpu,
           f"Self CPU time total {summary['self_cpu_time_total_ns']} != sum of rows {self_cpu}")
    return checked


def clean_devsim_run(context):
    """A devsim program's run that ended well: its own counts (expected_counts) and its trace."""
    run = context.run
    expect(run.returncode == 0, f"the program exited with {run.returncode}")
    wanted = expected_counts(run.stdout)
    expect(wanted["failures"] == 0, "CUDA calls failed on devsim")
    check_last_line(context)
    return wanted, Trace(only_file(context.out_dir, "*.trace.json"))


def check_devsim_run(context):
    wanted, trace = clean_devsim_run(context)
    check_device_records(trace, wanted)
    check_links(trace)
    check_driver_threads(trace)
    check_no_runtime_internal_calls(trace)
    check_external_ids(trace, wanted)
    check_syncs(trace)
    import kineto_checks  # noqa: E402 (it uses this module's helpers)
    kineto = kineto_checks.check_kineto_fields(trace)
    rows = check_table(trace, summary_rows(context.out_dir))
    context.summary = (f"{len(trace.device)} device records, {len(trace.runtime)} runtime calls, "
                       f"{rows} table rows recomputed; {kineto}")


# ---- the real libcudart.so.13, no driver -----------------------------------------------------

def check_real_runtime_unchanged(context):
    """Without a driver every call fails (cudaErrorInsufficientDriver, 35): the program must
    behave exactly as without the agent, and the failures must be in the trace."""
    baseline = context.run_without_agent()
    run = context.run
    expect(run.stdout == baseline.stdout, f"stdout differs:\n{run.stdout}\n--- without agent ---\n{baseline.stdout}")
    expect(other_lines(run.stderr) == other_lines(baseline.stderr), "stderr (without [profagent] lines) differs")
    expect(run.returncode == baseline.returncode,
           f"exit code {run.returncode} with the agent, {baseline.returncode} without")
    expect(run.returncode != 0, "the run against the real runtime was expected to fail without a driver")
    trace = Trace(only_file(context.out_dir, "*.trace.json"))
    failed = [e for e in trace.runtime if e.get("args", {}).get("cuda_error") == 35]
    expect(failed, "no failed runtime call with cuda_error 35 in the trace")
    names = {e["name"] for e in failed}
    for name in ("cudaMalloc", "cudaMemcpy", "cudaDeviceSynchronize"):
        expect(name in names, f"the failed {name} is not in the trace (failed calls: {sorted(names)})")
    # The "wrote" line names the output folder, whose path may hold the word too.
    cupti_lines = [line for line in profagent_lines(run.stderr)
                   if re.search("cupti", line, re.I) and not line.startswith("[profagent] wrote")]
    expect(len(cupti_lines) == 1, f"CUPTI's refusal should be reported once, got {cupti_lines}")
    check_last_line(context)
    context.summary = f"{len(failed)} failed calls recorded, output identical"


# ---- a process that never uses CUDA ----------------------------------------------------------

def check_silent_without_cuda(context):
    baseline = context.run_without_agent()
    run = context.run
    expect((run.stdout, run.stderr, run.returncode) == (baseline.stdout, baseline.stderr, baseline.returncode),
           f"output or exit code changed: {run.stderr!r} / {baseline.stderr!r}")
    expect(not profagent_lines(run.stderr), f"profagent printed {profagent_lines(run.stderr)}")
    written = [name for name in os.listdir(context.out_dir) if not name.startswith("run.")]
    expect(not written, f"profagent wrote {written} for a process that never used CUDA")
    context.summary = "nothing written, nothing printed"


# ---- host-only (PROFAGENT_CUPTI=off): kernel names from __cudaRegisterFunction ---------------

def check_host_only_kernel_names(context):
    run = context.run
    expect(run.returncode == 0, f"the program exited with {run.returncode}")
    wanted = expected_counts(run.stdout)
    check_last_line(context)
    trace = Trace(only_file(context.out_dir, "*.trace.json"))
    expect(not trace.device, f"{len(trace.device)} device records although CUPTI is off")
    launches = [e for e in trace.runtime if "LaunchKernel" in e["name"]]
    for base, count in wanted["kernels"].items():
        named = sum(1 for e in launches if base in e.get("args", {}).get("kernel", ""))
        expect(named == count, f"{count} launches of {base}, {named} launch events name it")
    expect(len(launches) == sum(wanted["kernels"].values()), f"{len(launches)} launch events")
    context.summary = f"{len(launches)} launches named without device records"


def check_devsim_run_flushed_by_exit_handler(context):
    """As devsim_run, and the files were written by the atexit handler (registered at the
    first CUDA call, so it runs before ld.so finalises libcupti/libcudart), not by the ELF
    destructor fallback. Needs PROFAGENT_LOG_LEVEL=debug."""
    check_devsim_run(context)
    flushes = [line for line in profagent_lines(context.run.stderr) if line.startswith("[profagent] flushing at ")]
    expect(flushes == ["[profagent] flushing at exit"], f"flushed by {flushes}, expected the exit handler once")


def check_devsim_run_after_early_constructor(context):
    """A library constructor used CUDA before main (maybe before the agent's own
    constructor): those calls were forwarded and succeeded, and the run is still complete."""
    expect("early constructor: cudaMalloc cudaSuccess, cudaFree cudaSuccess" in context.run.stdout,
           f"the early constructor's calls did not succeed: {context.run.stdout!r}")
    check_devsim_run(context)


# ---- any workload: a complete, self-consistent trace -----------------------------------------

def check_consistent_trace(context):
    """For workloads whose counts the checker does not know (demo_train): exit 0, the 'wrote'
    line, every device record linked to its call, every table number recomputed."""
    expect(context.run.returncode == 0, f"the program exited with {context.run.returncode}")
    check_last_line(context)
    trace = Trace(only_file(context.out_dir, "*.trace.json"))
    expect(trace.device, "no device record in the trace")
    # The simulated device finishes long before the join's wait bound: any record the join
    # gave up on is lost work, not a slow device.
    drops = trace.document.get("profagent_drops", {})
    for counter in ("late_device_records", "unmatched_device_records"):
        expect(drops.get(counter, 0) == 0, f"profagent_drops.{counter} = {drops.get(counter)}")
    check_links(trace)
    check_driver_threads(trace)
    check_no_runtime_internal_calls(trace)
    rows = check_table(trace, summary_rows(context.out_dir))
    graph_launches = sum(1 for e in trace.runtime if e["name"].startswith("cudaGraphLaunch"))
    context.summary = (f"{len(trace.device)} device records linked, {rows} table rows recomputed, "
                       f"{graph_launches} graph launches")


# ---- a workload of the kind users write: unchanged by the agent, its trace valid ----------

def without_numbers(text):
    """Output with every number replaced: times and rates differ from run to run."""
    return re.sub(r"[0-9]+(\.[0-9]+)?", "#", text)


WORK_ISSUING_CALL = re.compile(r"^_*cuda(LaunchKernel|LaunchCooperativeKernel|Memcpy|Memset)")


def check_calls_have_device_work(trace):
    """Every successful launch, copy or set call has a device record carrying its correlation
    (a kind of work the agent does not ask CUPTI for would be missing here), except calls
    captured into a graph (`captured`: their work runs in the graph's launches)."""
    done = {e["args"]["correlation"] for e in trace.device}
    calls = [e for e in trace.runtime if WORK_ISSUING_CALL.match(e["name"])
             and not e["args"].get("cuda_error") and not e["args"].get("captured")]
    for call in calls:
        expect(call["args"].get("correlation") in done,
               f"{call['name']} at {call['ts']} (correlation {call['args'].get('correlation')}) has no device record")
    return len(calls)


def check_workload_unchanged(context):
    """The agent changes nothing the program does (exit status, stdout, its own stderr lines,
    numbers aside) and writes a consistent trace with Kineto's fields."""
    from kineto_checks import check_kineto_fields
    alone = context.run_without_agent()
    expect(context.run.returncode == alone.returncode,
           f"exit status {context.run.returncode} under the agent, {alone.returncode} without")
    expect(without_numbers(context.run.stdout) == without_numbers(alone.stdout),
           f"stdout differs under the agent:\n{context.run.stdout[-2000:]}\n--- without:\n{alone.stdout[-2000:]}")
    program_stderr = without_numbers("\n".join(other_lines(context.run.stderr)))
    expect(program_stderr == without_numbers(alone.stderr.rstrip("\n")),
           f"the program's stderr differs under the agent:\n{program_stderr[-2000:]}\n--- without:\n{alone.stderr[-2000:]}")
    check_consistent_trace(context)
    trace = Trace(only_file(context.out_dir, "*.trace.json"))
    issued = check_calls_have_device_work(trace)
    kineto = check_kineto_fields(trace)
    context.summary += f"; {issued} work-issuing calls each with their device record; {kineto}; output unchanged"


# ---- an output directory that cannot be created ----------------------------------------------

def check_unwritable_output_dir(context):
    """Fail open: the program's output and exit code do not change, the table is still
    printed, and the last line says that nothing was written and why."""
    baseline = context.run_without_agent()
    run = context.run
    expect(run.stdout == baseline.stdout and run.returncode == baseline.returncode,
           "stdout or exit code changed when the output directory is unusable")
    expect(other_lines(run.stderr) == other_lines(baseline.stderr), "the program's stderr changed")
    last = run.stderr.rstrip("\n").splitlines()[-1]
    expect(last.startswith("[profagent] wrote nothing: ") and len(last) > len("[profagent] wrote nothing: "),
           f"the last line does not say why nothing was written: {last!r}")
    expect(any("Self CPU time total" in line for line in profagent_lines(run.stderr)), "no table printed")
    context.summary = last


# ---- checks kept in modules of their own, found here by name --------------------------------

from graph_checks import (check_graph_capture_attributed, check_graph_capture_not_recorded,  # noqa: E402,F401
                          check_graph_capture_windows, check_graph_launches_linked)
from library_checks import check_second_library_descriptor  # noqa: E402,F401
from nvtx_checks import (check_nvtx_other_tool_kept, check_nvtx_range_marker, check_nvtx_ranges,  # noqa: E402,F401
                         check_torch_ops)
from streamed_checks import (check_streamed_limits_run, check_streamed_run,  # noqa: E402,F401
                             check_streamed_step_over_bound, check_streamed_steps_run,
                             check_streamed_laggard_run, check_streamed_windows_run)
from streamed_stacks_checks import check_streamed_stacks_run  # noqa: E402,F401
