#!/usr/bin/python3
"""What profagent itself cost, in every window's outputs:
    agent_cost_checks.py --agent LIB --profagent CLI --out DIR -- PROGRAM

PROGRAM is a step loop on the simulated device (demo_train). Two runs:
  - a schedule of two windows (written by the agent's exporter thread while the program runs):
    each window's table.txt and summary.txt end with the overhead line, whose figures are the
    trace's profagent_overhead (program_ns = hooked calls x record cost + boundary time; the
    hooked calls are the trace's host events), and `profagent report` of the trace prints the
    very same line; the trace has a "profagent" process track (pid = the process's + 2^22)
    whose slices hold the window's join, and the second window the first one's writing;
  - the whole run as one window (written at exit): the table on stderr ends with the line;
  - the same with PROFAGENT_ACTIVITIES=cuda: no host events in the trace, and CUPTI's cost still
    counts every CUDA call of the run (CUPTI did its work in them): as many as the run above's.
Only the Python standard library is used.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from trace_reader import complete_events, load_trace  # noqa: E402

LINE = re.compile(r"^profagent overhead: ~(\d+\.\d{3}) ms on the program's threads \((\d+\.\d{2}) % of the window\), "
                  r"(?:of which ~(\d+\.\d{3}) ms CUPTI, )?"
                  r"(\d+\.\d{3}) ms on its own threads, (\d+\.\d) MiB(; \d+ records lost)?$", re.M)
HOST_CATEGORIES = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver"}
AGENT_PID_OFFSET = 1 << 22
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(args, out, schedule, extra=None):
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, LD_PRELOAD=args.agent, PROFAGENT_OUTPUT_DIR=out, **(extra or {}))
    if schedule:
        env["PROFAGENT_SCHEDULE"] = schedule
    done = subprocess.run(args.command, env=env, capture_output=True, text=True, timeout=240)
    expect(done.returncode == 0, f"{args.command} exited with {done.returncode}: {done.stderr[-1500:]}")
    return sorted(glob.glob(os.path.join(out, "*.trace.json"))), done.stderr


def last_line(path):
    """The overhead line of a text file: present once, and the file's last line."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = LINE.findall(text)
    expect(len(lines) == 1, f"{path}: {len(lines)} overhead lines")
    expect(text.rstrip("\n").splitlines()[-1].startswith("profagent overhead: "),
           f"{path}: the overhead line is not the last line")
    match = LINE.search(text)
    return match.group(0) if match else None


def check_figures(trace_path, trace, line):
    cost = trace.get("profagent_overhead")
    if not expect(cost is not None, f"{trace_path}: no profagent_overhead"):
        return
    cupti_ns = cost["cupti_calls"] * cost["cupti_call_cost_ps"] // 1000
    expect(cost["cupti_ns"] == cupti_ns, f"{trace_path}: cupti_ns is not its parts: {cost}")
    expect(cost["program_ns"] == cost["hooked_calls"] * cost["record_cost_ps"] // 1000 + cupti_ns + cost["boundary_ns"],
           f"{trace_path}: program_ns is not its parts: {cost}")
    # Traced by devsim's CUPTI: its cost per call was measured, and every CUDA call is counted.
    cuda_calls = [e for e in complete_events(trace) if e.get("cat") in ("cuda_runtime", "cuda_driver")]
    expect(cost["cupti_call_cost_ps"] > 0 and cost["cupti_calls"] == len(cuda_calls),
           f"{trace_path}: CUPTI's cost {cost} for {len(cuda_calls)} CUDA calls in the trace")
    expect(cost["record_cost_ps"] > 0 and cost["boundary_ns"] > 0 and cost["memory_bytes"] > 0,
           f"{trace_path}: a figure was not measured: {cost}")
    host = [e for e in complete_events(trace) if e.get("cat") in HOST_CATEGORIES
            and not e.get("name", "").startswith("ProfilerStep#")]
    drops = trace["profagent_drops"]
    lost = sum(drops.get(k, 0) for k in ("host_events", "left_out_host_events", "shorter_than_min_duration",
                                         "over_max_events"))
    expect(cost["hooked_calls"] == len(host) + lost,
           f"{trace_path}: hooked_calls {cost['hooked_calls']}, the trace has {len(host)} host events + {lost} lost")
    m = LINE.search(line or "")
    if expect(m is not None, f"{trace_path}: no line to compare"):
        expect(m.group(1) == f"{cost['program_ns'] / 1e6:.3f}" and m.group(3) == f"{cost['cupti_ns'] / 1e6:.3f}"
               and m.group(4) == f"{cost['agent_cpu_ns'] / 1e6:.3f}" and m.group(5) == f"{cost['memory_bytes'] / 2**20:.1f}",
               f"{trace_path}: the line {line!r} does not say the trace's figures {cost}")


def check_track(trace_path, trace, window):
    pid = next(e["pid"] for e in trace["traceEvents"] if e.get("name") == "process_labels"
               and e.get("args", {}).get("labels") == "CPU")
    names = [e for e in trace["traceEvents"] if e.get("ph") == "M" and e.get("name") == "process_name"
             and e.get("args", {}).get("name") == "profagent"]
    expect(len(names) == 1 and names[0]["pid"] == pid + AGENT_PID_OFFSET,
           f"{trace_path}: profagent process rows {names} (process pid {pid})")
    slices = [e for e in complete_events(trace, cat="profagent")]
    expect(all(e["pid"] == pid + AGENT_PID_OFFSET for e in slices), f"{trace_path}: a profagent slice off its track")
    work = {e["name"] for e in slices}
    expect("join window" in work, f"{trace_path}: no join slice in {sorted(work)}")
    if window > 1:
        expect(f"write window {window - 1}" in work, f"{trace_path}: no slice writing window {window - 1}: {sorted(work)}")


def check_report(args, trace_path, line):
    done = subprocess.run([args.profagent, "report", trace_path], capture_output=True, text=True, timeout=120)
    expect(done.returncode == 0, f"profagent report {trace_path} exited {done.returncode}: {done.stderr[-800:]}")
    said = LINE.search(done.stdout)
    expect(said is not None and said.group(0) == line,
           f"profagent report {trace_path} says {said and said.group(0)!r}, the window's table {line!r}")


def check_device_only(args, whole_run):
    cuda_calls = len([e for e in complete_events(whole_run) if e.get("cat") in ("cuda_runtime", "cuda_driver")])
    traces, _ = run(args, os.path.join(args.out, "device_only"), None, {"PROFAGENT_ACTIVITIES": "cuda"})
    if not expect(len(traces) == 1, f"device only: expected one window, got {traces}"):
        return
    trace = load_trace(traces[0])
    host = [e for e in complete_events(trace) if e.get("cat") in HOST_CATEGORIES
            and not e.get("name", "").startswith("ProfilerStep#")]  # steps stay, drawn from their spans
    cost = trace.get("profagent_overhead", {})
    expect(not host and cuda_calls > 0 and cost.get("cupti_calls") == cuda_calls,
           f"device only: {len(host)} host events, cupti_calls {cost.get('cupti_calls')}, the whole run's CUDA calls {cuda_calls}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True)
    parser.add_argument("--profagent", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    args.command = [c for c in args.command if c != "--"]

    traces, _ = run(args, os.path.join(args.out, "windows"), "wait=1,active=2,repeat=2")
    expect(len(traces) == 2, f"expected two windows, got {traces}")
    for window, trace_path in enumerate(traces, 1):
        stem = trace_path[: -len(".trace.json")]
        line = last_line(stem + ".table.txt")
        expect(last_line(stem + ".summary.txt") == line, f"{stem}: summary.txt and table.txt say different lines")
        trace = load_trace(trace_path)
        check_figures(trace_path, trace, line)
        check_track(trace_path, trace, window)
        check_report(args, trace_path, line)

    traces, stderr = run(args, os.path.join(args.out, "whole_run"), None)
    expect(len(traces) == 1, f"whole run: expected one window, got {traces}")
    said = [l[len("[profagent] "):] for l in stderr.splitlines() if l.startswith("[profagent] profagent overhead: ")]
    expect(len(said) == 1 and LINE.fullmatch(said[0]), f"whole run: the exit table's overhead lines are {said}")
    if traces:
        stem = traces[0][: -len(".trace.json")]
        expect(said and said[0] == last_line(stem + ".table.txt"), "whole run: stderr and table.txt say different lines")
        check_device_only(args, load_trace(traces[0]))

    for failure in failures:
        print("FAILED:", failure)
    print("passed" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
