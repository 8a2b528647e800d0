"""Step windows keep the device work issued in them, also when no host sync follows.

Program: programs/queued_steps.cu (windows_wait.cmake). Its steps only queue work on a
non-blocking stream (work_a, work_b, an async copy, the marker kernel step_end; grid k+1 and
(k+1) * 4096 bytes in step k) and the host synchronises once, after the last step, so every
window is cut while its kernels are still queued. Each window's trace.json must hold every
kernel and copy of its own steps, each linked to its launch call (same CUPTI correlation id)
and that call inside the window's steps; none of another step; 0 late, 0 unmatched. With a
device slower than PROFAGENT_WINDOW_WAIT_MS the missing work is counted in its own window's
profagent_drops.late_device_records, said once on stderr, and appears in no window.
"""
import os
import re

import reliability as R

STEPS = 12
# Work kernels of 2 ms: step k's work ends ~4(k+1) ms after the start, long after its step
# (a step takes microseconds on the host).
QUEUED = {"DEVSIM_KERNEL_NS": "work_=2000000"}
KERNELS = ("work_a", "work_b", "step_end")
NAME = re.compile(r"\.w(\d+)\.steps(\d+)-(\d+)\.trace\.json$")


def program(env):
    return os.path.join(os.path.dirname(env.app), "queued_steps")


def window_files(out):
    found = {}
    for path in R.traces(out):
        match = NAME.search(path)
        R.expect(match, f"unexpected trace {os.path.basename(path)}")
        found[int(match.group(1))] = path
    return found


def step_spans(document):
    """ProfilerStep#N -> (start, end) in the trace's µs."""
    spans = {}
    for e in R.events(document):
        if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"):
            spans[int(e["name"][len("ProfilerStep#"):])] = (e["ts"], e["ts"] + e["dur"])
    return spans


def device_records(document):
    """(what, step) for every kernel and host-to-device copy, with its event."""
    found = []
    for e in R.events(document):
        if e.get("cat") == "kernel":
            base = e["name"].split("(")[0]
            found.append(((base, e["args"]["grid"][0] - 1), e))
        elif e.get("cat") == "gpu_memcpy" and "HtoD" in e["name"]:
            found.append((("copy", e["args"]["bytes"] // 4096 - 1), e))
    return found


def expected_records(steps):
    """Step STEPS (in progress at exit: the final sync and copy back) queues none of these."""
    return sorted((what, k) for k in steps if k < STEPS for what in KERNELS + ("copy",))


def check_links(document, records, steps):
    """Every record's correlation is that of a runtime call issued inside the window's steps."""
    calls = {e["args"]["correlation"]: e for e in R.events(document)
             if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    spans = step_spans(document)
    R.expect(sorted(spans) == list(steps), f"ProfilerStep annotations {sorted(spans)}, expected {list(steps)}")
    first, last = spans[steps[0]][0], spans[steps[-1]][1]
    for (what, k), e in records:
        call = calls.get(e["args"].get("correlation"))
        R.expect(call is not None, f"{what} of step {k} is not linked to a launch call in its window")
        R.expect(first <= call["ts"] <= last, f"the launch of {what} (step {k}) lies outside the window's steps")
        step_start, step_end = spans[k]
        R.expect(step_start <= call["ts"] <= step_end, f"the launch of {what} (step {k}) is not in step {k}")
        R.expect(e["ts"] >= call["ts"], f"{what} of step {k} starts before its launch")


def check_window(path, steps):
    document = R.load(path)
    records = device_records(document)
    got = sorted(key for key, _ in records)
    R.expect(got == expected_records(steps),
             f"{os.path.basename(path)}: device records {got}, expected those of steps {list(steps)}")
    check_links(document, records, steps)
    drops = document["profagent_drops"]
    R.expect(drops["late_device_records"] == 0 and drops["unmatched_device_records"] == 0,
             f"{os.path.basename(path)}: drops {drops}")
    return document["profagent_window"]["join_wait_ms"]


def run_queued(env, name, mode, extra):
    out = env.out(name)
    extra = dict(QUEUED, PROFAGENT_OUTPUT_DIR=out, **extra)
    agent, plain = R.both(env, [program(env), mode, str(STEPS)], extra, timeout=120)
    R.expect_unchanged(agent, plain)
    R.expect(agent.returncode == 0, f"status {agent.returncode}: {agent.stderr[-400:]!r}")
    late_lines = [line for line in agent.agent_lines() if "had not come" in line]
    R.expect(not late_lines, f"late records said: {late_lines}")
    return out, agent


def windows_case(name, mode, step_on, schedule, windows):
    """`windows`: window number -> the steps it must hold (the first and last in its name)."""
    def case(env):
        extra = dict(PROFAGENT_SCHEDULE=schedule, PROFAGENT_STEP_ON=step_on)
        out, _ = run_queued(env, name, mode, extra)
        files = window_files(out)
        R.expect(sorted(files) == sorted(windows), f"windows {sorted(files)}, expected {sorted(windows)}")
        waits = [check_window(files[w], steps) for w, steps in sorted(windows.items())]
        R.expect(not R.leftovers(out), f"left behind: {R.leftovers(out)}")
        total = sum(len(expected_records(steps)) for steps in windows.values())
        return f"{total} device records in {len(windows)} windows, all linked; join waits (ms) {waits}"
    return case


def case_profiler_api(env):
    """asyncAPI-like: cudaProfilerStart, async work of steps 2-4, cudaProfilerStop, then sync."""
    out, _ = run_queued(env, "windows_wait_profiler_api", "profiler", {"PROFAGENT_STEP_ON": "profiler-api"})
    files = R.traces(out)
    R.expect(len(files) == 1, f"expected one window, found {os.listdir(out)}")
    document = R.load(files[0])
    records = device_records(document)
    got = sorted(key for key, _ in records)
    R.expect(got == expected_records([2, 3, 4]), f"device records {got}, expected those of steps 2-4")
    calls = {e["args"]["correlation"] for e in R.events(document) if e.get("cat") == "cuda_runtime"
             and "correlation" in e.get("args", {})}
    R.expect(all(e["args"].get("correlation") in calls for _, e in records), "a record is not linked to its launch")
    drops = document["profagent_drops"]
    R.expect(drops["late_device_records"] == 0 and drops["unmatched_device_records"] == 0, f"drops {drops}")
    return f"{len(records)} device records between cudaProfilerStart and Stop, all linked"


def case_slow_device(env):
    """Work kernels of 60 ms, PROFAGENT_WINDOW_WAIT_MS=100: the work of windows 1-3 (steps 2-10)
    cannot be done before their waits end. It is counted in its own window, said once per
    window, and appears in no window; the window written at exit (step 11, synced) is complete."""
    out = env.out("windows_wait_slow_device")
    extra = {"DEVSIM_KERNEL_NS": "work_=60000000", "PROFAGENT_WINDOW_WAIT_MS": "100",
             "PROFAGENT_SCHEDULE": "skip_first=2,active=3", "PROFAGENT_STEP_ON": "kernel:^step_end",
             "PROFAGENT_OUTPUT_DIR": out}
    agent, plain = R.both(env, [program(env), "kernel", str(STEPS)], extra, timeout=120)
    R.expect_unchanged(agent, plain)
    files = window_files(out)
    R.expect(sorted(files) == [1, 2, 3, 4], f"windows {sorted(files)}")
    for w in (1, 2, 3):
        document = R.load(files[w])
        records = device_records(document)
        R.expect(not records, f"window {w} holds device records {[k for k, _ in records]}")
        late = document["profagent_drops"]["late_device_records"]
        R.expect(late == 12, f"window {w}: late_device_records {late}, expected 12 (3 steps x 4)")
        said = [line for line in agent.agent_lines() if "had not come" in line and f"window {w} (" in line]
        R.expect(len(said) == 1 and said[0].split(":")[1].strip().startswith("12 device records"),
                 f"window {w}: late lines {said}")
    last = R.load(files[4])
    got = sorted(key for key, _ in device_records(last))
    R.expect(got == expected_records([11]), f"the exit window holds {got}, expected only step 11's work")
    R.expect(last["profagent_drops"]["late_device_records"] == 0, f"exit window drops {last['profagent_drops']}")
    all_late = [line for line in agent.agent_lines() if "had not come" in line]
    R.expect(len(all_late) == 3, f"{len(all_late)} late lines: {all_late}")
    return "windows 1-3: 12 late each, said once each, no record in any other window"


CASES = {
    "windows_wait_kernel_marker_once": windows_case(
        "windows_wait_kernel_marker_once", "kernel", "kernel:^step_end", "skip_first=2,active=3,repeat=1",
        {1: [2, 3, 4]}),
    "windows_wait_kernel_marker_repeat": windows_case(
        "windows_wait_kernel_marker_repeat", "kernel", "kernel:^step_end", "skip_first=2,active=3,repeat=0",
        {1: [2, 3, 4], 2: [5, 6, 7], 3: [8, 9, 10], 4: [11, 12]}),
    "windows_wait_range_marker": windows_case(
        "windows_wait_range_marker", "range", "range:^step_end$", "skip_first=1,wait=1,warmup=1,active=3,repeat=2",
        {1: [3, 4, 5], 2: [8, 9, 10]}),
    "windows_wait_profiler_api": case_profiler_api,
    "windows_wait_slow_device": case_slow_device,
}
