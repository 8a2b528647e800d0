#!/usr/bin/python3
"""<stem>.summary.txt per window: report_agent_summary_checks.py --agent LIB --out DIR -- PROGRAM

Runs PROGRAM (a step loop calling profagent_step(), on the simulated device) with the agent and
a schedule of two windows of two steps each, then checks that every window's trace.json has a
summary.txt of the same stem whose Step Trace lists exactly that window's ProfilerStep numbers,
whose Device Summary has the CPU rows (the trace's profagent_cpu_times, end >= start), and
that PROFAGENT_SUMMARIES chooses what is written (`perf`: that table only; `off`: no file).
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

failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(args, out, summaries=None):
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, LD_PRELOAD=args.agent, PROFAGENT_OUTPUT_DIR=out,
               PROFAGENT_SCHEDULE="wait=1,active=2,repeat=2")
    if summaries is not None:
        env["PROFAGENT_SUMMARIES"] = summaries
    done = subprocess.run(args.command, env=env, capture_output=True, text=True, timeout=240)
    expect(done.returncode == 0, f"{args.command} exited with {done.returncode}: {done.stderr[-1500:]}")
    return sorted(glob.glob(os.path.join(out, "*.trace.json")))


def table_rows(text, title):
    """The data rows of the text table under ====title==== (or ---title---)."""
    start = re.search(r"[-=]+" + re.escape(title) + r"[-=]+\n", text)
    if start is None:
        return None
    lines = text[start.end():].splitlines()
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"[- ]+", line) and line.strip()]
    return lines[rules[1] + 1:rules[2]] if len(rules) >= 3 else []


def check_window(trace_path):
    summary_path = trace_path[: -len(".trace.json")] + ".summary.txt"
    if not expect(os.path.exists(summary_path), f"no {summary_path}"):
        return
    trace = load_trace(trace_path)
    with open(summary_path) as f:
        text = f.read()
    steps = sorted({int(e["name"].split("#")[1]) for e in complete_events(trace)
                    if e.get("name", "").startswith("ProfilerStep#")})
    rows = table_rows(text, "Step Trace") or []
    listed = [int(row.split()[0]) for row in rows if row.split() and row.split()[0].isdigit()]
    expect(steps and listed == steps, f"{summary_path}: Step Trace lists steps {listed}, the trace has {steps}")
    cpu = trace.get("profagent_cpu_times")
    if expect(cpu is not None, f"{trace_path}: no profagent_cpu_times"):
        for key in ("ns", "process_ns", "system_busy_ns", "system_idle_ns"):
            expect(cpu["end"][key] >= cpu["start"][key], f"{trace_path}: cpu times {key} went back")
    device = table_rows(text, "Device Summary") or []
    process = [row for row in device if row.startswith("CPU(Process)")]
    expect(process and re.fullmatch(r"CPU\(Process\)\s+[0-9.]+", process[0].strip()),
           f"{summary_path}: CPU(Process) row is {process}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    args.command = [c for c in args.command if c != "--"]
    traces = run(args, os.path.join(args.out, "default"))
    expect(len(traces) == 2, f"expected two windows, got {traces}")
    for trace in traces:
        check_window(trace)
    for trace in run(args, os.path.join(args.out, "perf"), "perf"):
        with open(trace[: -len(".trace.json")] + ".summary.txt") as f:
            titles = re.findall(r"^[-=]{3,}([A-Za-z ]+?)[-=]{3,}$", f.read(), re.M)
        expect(titles == ["Perf Summary"], f"PROFAGENT_SUMMARIES=perf wrote {titles}")
    off = os.path.join(args.out, "off")
    expect(len(run(args, off, "off")) == 2 and not glob.glob(os.path.join(off, "*.summary.txt")),
           "PROFAGENT_SUMMARIES=off: summary files written (or windows missing)")
    for failure in failures:
        print("FAILED:", failure)
    print("passed" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
