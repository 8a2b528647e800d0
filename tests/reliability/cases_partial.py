"""The crash-safe partial trace (agent/partial_writer.h, exporters/partial_trace.h).

Program: programs/long_window.cu (partial.cmake): one window as long as the run; iteration k
launches `tick` with grid k+1 inside a user range and prints when it started and ended.

- partial_sigkill: the job is killed with SIGKILL after several intervals. Every version of
  `<stem>.trace.json.partial` read while it ran parses, and the one left behind holds every
  iteration that had ended by its `through_ns` (each launch with its kernel, linked by one flow)
  and none that began after it; what it lacks is the last interval only.
- partial_step_windows: windows of 400 steps (a step per iteration): each window being recorded
  has its own partial trace (.w1, then .w2), each removed once its window's files are written.
- partial_sigkill_streamed: a window streamed in segments (PROFAGENT_STREAM_AFTER_MB=1) in the
  three formats (json, json.gz, perfetto), killed by SIGKILL. Every version of each
  `.partial` read while it ran is whole: the JSON parses, the json.gz is exactly one gzip
  member that Python's gzip reads to its end (no EOFError), the Perfetto trace ends on a packet
  boundary and the tests' decoder reads it; the ones left behind hold their segments (the
  host events `profagent_partial` counts, every kernel linked to its launch) and
  `profagent report` reads each.
- partial_matches_final: the job ends normally. A copy of the partial taken while it ran holds
  exactly the events the final trace holds for those intervals (same calls, kernels, times and
  flows; a call's External id aside where its range ended in a later interval), and at exit
  the final trace replaced it: no `.partial` or swap file is left.
"""
import gzip
import json
import os
import sys
import zlib
import re
import shutil
import signal
import subprocess
import threading
import time

import reliability as R

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from perfetto_reader import read_perfetto  # noqa: E402

INTERVAL_MS = 300


def program(env):
    return os.path.join(os.path.dirname(env.app), "long_window")


def start(env, out, iterations, interval_ms=INTERVAL_MS, extra=None):
    run_env = R.clean_environment()
    run_env.update({"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_PARTIAL_INTERVAL_MS": str(interval_ms),
                    "LD_LIBRARY_PATH": env.devsim, "LD_PRELOAD": env.agent, **(extra or {})})
    process = subprocess.Popen([program(env), str(iterations)], env=run_env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    done = {}  # iteration -> (start, end) in Unix ns

    def read_lines():
        for line in process.stdout:
            fields = line.split()
            if len(fields) == 4 and fields[0] == "done":
                done[int(fields[1])] = (int(fields[2]), int(fields[3]))
    reader = threading.Thread(target=read_lines, daemon=True)
    reader.start()
    return process, done, reader


def partial_path(out):
    found = [n for n in os.listdir(out) if n.endswith(".trace.json.partial") and not n.startswith(".")]
    R.expect(len(found) <= 1, f"more than one partial trace: {found}")
    return os.path.join(out, found[0]) if found else None


def wait_for_intervals(process, out, intervals, copy_to=None):
    """Reads the published partial trace until it holds `intervals`; every read must parse.
    Returns the number of reads and the last document."""
    reads, document = 0, None
    deadline = time.time() + 90
    while time.time() < deadline:
        R.expect(process.poll() is None, f"the program ended early (status {process.returncode})")
        path = partial_path(out)
        if path:
            if copy_to:
                shutil.copyfile(path, copy_to)
            document = R.load(copy_to or path)  # a half-written file fails the case here
            reads += 1
            if document["profagent_partial"]["intervals"] >= intervals:
                return reads, document
        time.sleep(0.05)
    raise R.Failed(f"no partial trace with {intervals} intervals within 90 s: {os.listdir(out)}")


def kernels_by_iteration(document):
    return {e["args"]["grid"][0] - 1: e for e in R.events(document) if e.get("cat") == "kernel"}


def check_links(document, kernels):
    """Each kernel is linked to one cudaLaunchKernel in the file: same correlation, one flow."""
    launches = {e["args"]["correlation"]: e for e in R.events(document, "cudaLaunchKernel")}
    R.expect(len(launches) == len(kernels), f"{len(launches)} launches for {len(kernels)} kernels")
    starts = {e["id"] for e in document["traceEvents"] if e.get("ph") == "s" and e.get("cat") == "ac2g"}
    ends = {e["id"] for e in document["traceEvents"] if e.get("ph") == "f" and e.get("cat") == "ac2g"}
    for k, kernel in kernels.items():
        correlation = kernel["args"]["correlation"]
        R.expect(correlation in launches, f"the kernel of iteration {k} has no launch in the partial trace")
        R.expect(correlation in starts and correlation in ends, f"the flow of iteration {k} is broken")
    R.expect(starts == ends, f"flows without an end or a start: {sorted(starts ^ ends)[:5]}")


def case_partial_sigkill(env):
    out = env.out("partial_sigkill")
    process, done, reader = start(env, out, 0)
    try:
        reads, _ = wait_for_intervals(process, out, 4)
    finally:
        killed_ns = time.time_ns()
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        reader.join(timeout=10)
    R.expect(process.returncode == -signal.SIGKILL, f"status {process.returncode}")
    R.expect(not R.traces(out), f"a final trace after SIGKILL: {os.listdir(out)}")
    path = partial_path(out)
    R.expect(path is not None, f"no partial trace left: {os.listdir(out)}")
    document = R.load(path)
    partial = document["profagent_partial"]
    through = partial["through_ns"]
    kernels = kernels_by_iteration(document)
    R.expect(kernels, "the partial trace holds no kernel")
    ended = {k for k, (_, end) in done.items() if end <= through}
    began_after = {k for k, (start, _) in done.items() if start > through}
    R.expect(ended <= set(kernels), f"iterations ended by through_ns missing: {sorted(ended - set(kernels))[:10]}")
    R.expect(not (began_after & set(kernels)), f"iterations begun after through_ns: {sorted(began_after & set(kernels))[:5]}")
    R.expect(max(kernels) >= max(ended), "the partial trace stops before its through_ns")
    # All but the last interval: what it lacks began at most an interval (and the time to write
    # one, on a loaded machine) before the kill.
    lag_ms = (killed_ns - through) / 1e6
    R.expect(lag_ms <= INTERVAL_MS + 2000, f"the partial trace ends {lag_ms:.0f} ms before the kill")
    check_links(document, kernels)
    ranges = R.events(document, "iteration")
    R.expect(len(ranges) >= len(kernels) - 1, f"{len(ranges)} iteration ranges for {len(kernels)} kernels")
    R.expect(partial["host_events"] == len([e for e in R.events(document) if e.get("pid") == process.pid]),
             "profagent_partial.host_events is not the number of host events in the file")
    return (f"{reads} reads of the partial while it ran, all valid; {partial['intervals']} intervals, "
            f"{len(kernels)} iterations of {len(done)} done, {lag_ms:.0f} ms before the kill")


def flow_ids(document):
    return {e["id"] for e in document["traceEvents"] if e.get("ph") == "s"}


def event_key(e, flows):
    """An event as the final trace must hold it, but its time: without External id, and
    without the correlation made up for a call without device work (no flow starts there)."""
    args = {k: v for k, v in e.get("args", {}).items()
            if k != "External id" and not (k == "correlation" and v not in flows)}
    return json.dumps({**{k: v for k, v in e.items() if k not in ("args", "ts")}, "args": args}, sort_keys=True)


def times_by_key(document, phases):
    flows = flow_ids(document)
    found = {}
    for e in document["traceEvents"]:
        if e.get("ph") in phases and e.get("cat") != "gpu_user_annotation":
            found.setdefault(event_key(e, flows), []).append(round(e["ts"] * 1000) + document["baseTimeNanoseconds"])
    return found


def case_partial_matches_final(env):
    out = env.out("partial_matches_final")
    copy = os.path.join(env.work, "partial_matches_final.copy")
    process, done, reader = start(env, out, 4000)
    _, snapshot = wait_for_intervals(process, out, 3, copy_to=copy)
    stdout_rest, stderr = process.communicate(timeout=120)
    reader.join(timeout=10)
    R.expect(process.returncode == 0, f"status {process.returncode}: {stderr[-400:]}")
    R.expect(not R.leftovers(out), f"left behind: {R.leftovers(out)}")
    final = R.one_valid_trace(out)
    # Each event of the partial is in the final trace, at the same time up to one shift: the
    # partial's wall-clock offset was read at its first interval, the final's at its end.
    final_times = times_by_key(final, ("X", "s", "f"))
    shifts, missing, calls = [], [], 0
    for key, times in times_by_key(snapshot, ("X", "s", "f")).items():
        for ts in times:
            calls += 1
            nearest = min(final_times.get(key, [float("inf")]), key=lambda t: abs(t - ts))
            (missing if nearest == float("inf") else shifts).append(key if nearest == float("inf") else nearest - ts)
    R.expect(not missing, f"{len(missing)} of {calls} events of the partial are not in the final trace, e.g. {missing[:2]}")
    R.expect(max(shifts) - min(shifts) <= 2,
             f"the partial's times are not the final's shifted by one offset: shifts {min(shifts)}..{max(shifts)} ns")
    kernels = kernels_by_iteration(snapshot)
    check_links(snapshot, kernels)
    return f"{calls} events of {snapshot['profagent_partial']['intervals']} intervals all in the final trace (one shift: {min(shifts)} ns)"


def case_partial_step_windows(env):
    out = env.out("partial_step_windows")
    process, done, reader = start(env, out, 1600, interval_ms=100,
                                  extra={"PROFAGENT_STEP_ON": "kernel:^tick", "PROFAGENT_SCHEDULE": "active=400,repeat=2"})
    seen = {}  # partial name -> intervals seen; every read must parse
    while process.poll() is None:
        for name in os.listdir(out):
            if name.endswith(".trace.json.partial") and not name.startswith("."):
                try:
                    document = R.load(os.path.join(out, name))
                except R.Failed:
                    if os.path.exists(os.path.join(out, name)):
                        raise
                    continue  # removed between the listing and the read: its window was written
                seen[name] = max(seen.get(name, 0), document["profagent_partial"]["intervals"])
        time.sleep(0.02)
    stdout_rest, stderr = process.communicate(timeout=60)
    reader.join(timeout=10)
    R.expect(process.returncode == 0, f"status {process.returncode}: {stderr[-400:]}")
    windows = sorted(re.search(r"\.w(\d+)\.", name).group(1) for name in seen)
    R.expect(windows == ["1", "2"], f"partial traces seen: {seen}")
    finals = [os.path.basename(p) for p in R.traces(out)]
    R.expect(len(finals) == 2 and ".w1.steps0-399." in finals[0] and ".w2.steps400-799." in finals[1],
             f"final traces: {finals}")
    R.expect(not R.leftovers(out), f"left behind: {R.leftovers(out)}")
    return f"partial traces {seen}, then {finals}"


STREAMED_SUFFIXES = (".trace.json.partial", ".trace.json.gz.partial", ".pftrace.partial")


def read_streamed_partial(path, copy):
    """A copy of one streamed partial trace, read as its consumers read its format: the JSON
    document (Perfetto: its events as the JSON trace's, its last metadata's top-level keys)."""
    shutil.copyfile(path, copy)
    data = open(copy, "rb").read()
    if path.endswith(".pftrace.partial"):
        try:
            document = read_perfetto(copy)
        except Exception as error:  # the decoder's errors: a cut packet, a damaged field
            raise R.Failed(f"{path}: {error}") from error
        return dict(document["metadata"], traceEvents=document["traceEvents"])
    if path.endswith(".gz.partial"):
        d = zlib.decompressobj(31)
        plain = d.decompress(data)
        R.expect(d.eof and not d.unused_data, f"{path} is not exactly one whole gzip member")
        with gzip.open(copy, "rt") as f:  # Python's gzip: EOFError on a member without its end
            return json.load(f)
    return R.load(copy)


def host_events(document, pid):
    return len([e for e in R.events(document) if e.get("pid") == pid])


def case_partial_sigkill_streamed(env):
    out = env.out("partial_sigkill_streamed")
    run_env = R.clean_environment()
    # Published every 100 ms (the shortest interval allowed): the default 10 s lets the
    # program write hundreds of MB before a second segment is published.
    run_env.update({"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_STREAM_AFTER_MB": "1",
                    "PROFAGENT_PARTIAL_INTERVAL_MS": "100",
                    "PROFAGENT_TRACE_FORMAT": "json,json.gz,perfetto", "LD_LIBRARY_PATH": env.devsim,
                    "LD_PRELOAD": env.agent})
    threads_app = os.path.join(os.path.dirname(env.app), "preload_threads")
    process = subprocess.Popen([threads_app, "2", "10000000", "outer"], env=run_env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    reads = 0
    segments = {}
    try:
        deadline = time.time() + 120
        # Each format read until it holds 2 segments (a read of a large JSON takes seconds).
        while min(segments.get(s, 0) for s in STREAMED_SUFFIXES) < 2:
            R.expect(time.time() < deadline, f"no streamed partial of each format with 2 segments in 120 s: {segments}")
            R.expect(process.poll() is None, f"the program ended early (status {process.returncode})")
            for name in os.listdir(out) if os.path.isdir(out) else []:
                suffix = next((s for s in STREAMED_SUFFIXES if name.endswith(s) and not name.startswith(".")), None)
                if suffix and segments.get(suffix, 0) < 2:
                    document = read_streamed_partial(os.path.join(out, name), os.path.join(env.work, "streamed.copy"))
                    segments[suffix] = document["profagent_partial"]["intervals"]
                    reads += 1
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    R.expect(process.returncode == -signal.SIGKILL, f"status {process.returncode}")
    R.expect(not R.traces(out), f"a final trace after SIGKILL: {os.listdir(out)}")
    left = {}
    for suffix in STREAMED_SUFFIXES:
        found = [n for n in os.listdir(out) if n.endswith(suffix) and not n.startswith(".")]
        R.expect(len(found) == 1, f"{suffix}: {found} left after SIGKILL ({os.listdir(out)})")
        path = os.path.join(out, found[0])
        document = read_streamed_partial(path, os.path.join(env.work, "streamed.copy"))
        partial = document["profagent_partial"]
        R.expect(partial["host_events"] == host_events(document, process.pid),
                 f"{found[0]}: profagent_partial.host_events {partial['host_events']}, "
                 f"{host_events(document, process.pid)} in the file")
        kernels = [e for e in document["traceEvents"] if e.get("cat") == "kernel"]
        R.expect(kernels, f"{found[0]} holds no kernel")
        starts = {e["id"] for e in document["traceEvents"] if e.get("ph") == "s" and e.get("cat") == "ac2g"}
        ends = {e["id"] for e in document["traceEvents"] if e.get("ph") == "f" and e.get("cat") == "ac2g"}
        R.expect(starts == ends and len(ends) >= len(kernels), f"{found[0]}: {len(starts)} flow starts, "
                 f"{len(ends)} ends for {len(kernels)} kernels")
        report = subprocess.run([os.path.join(os.path.dirname(env.app), "profagent"), "report", path],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        R.expect(report.returncode == 0 and "Device Summary" in report.stdout,
                 f"profagent report {found[0]}: status {report.returncode}, {report.stderr[-300:]}")
        left[suffix] = (partial["intervals"], partial["host_events"], len(kernels))
    return (f"{reads} reads of the three partials while it ran, all whole; left after SIGKILL "
            + ", ".join(f"{s}: {n} segments, {h} host events, {k} kernels" for s, (n, h, k) in left.items()))


CASES = {
    "partial_sigkill_streamed": case_partial_sigkill_streamed,
    "partial_step_windows": case_partial_step_windows,
    "partial_sigkill": case_partial_sigkill,
    "partial_matches_final": case_partial_matches_final,
}
