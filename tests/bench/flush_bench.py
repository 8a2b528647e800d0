#!/usr/bin/env python3
"""The agent's exit flush end to end, per trace format and per workload, on one core.

For each workload (host-only calls; the same calls with devsim CUPTI; launches with their kernels)
and each trace format (PROFAGENT_TRACE_FORMAT = json, json.gz, perfetto), bench_calls runs under
the agent pinned to one CPU (sched_setaffinity of this driver, inherited by every child), after a
run without the agent. The flush is everything from the end of main to the end of the process
(freeze, join, the trace, tables, summaries), minus the same for the agent absent:

  - CPU s (user + system) and wall s, median of --runs by CPU; events/s of each;
  - system time and minor page faults of the flush (getrusage at the end of main vs wait4);
  - callgrind instructions per trace event (small N, --toggle-collect of the exit flush), split
    by phase: freeze/cut, join, trace writer (gzip's deflate apart), summaries and tables.

Targets (printed): JSON >= 3 M events/s and Perfetto >= 5 M events/s of flush CPU for every
workload. Figures only: the exit status is non-zero only when a run fails or prints nothing.
Events: the JSON trace's events (every event has one "ph" key), counted in the .json and in the
decompressed .json.gz; a .pftrace holds the same events (the Perfetto writer counts them the same
way), so its run uses the count of the same workload's JSON run.

  flush_bench.py --program BENCH_CALLS --agent LIBPROFAGENT --devsim DIR --work DIR
                 [--events N] [--runs R] [--cg-events N] [--cpu K] [--formats LIST] [--smoke]
"""
import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from overhead_bench import (BenchError, Runner, count_in_file, fmt, median, print_table)  # noqa: E402

FORMATS = ("json", "json.gz", "perfetto")
SUFFIX = {"json": ".trace.json", "json.gz": ".trace.json.gz", "perfetto": ".pftrace"}
TARGET = {"json": 3_000_000, "json.gz": 5_000_000, "perfetto": 5_000_000}
NO_HOST_COST = {"DEVSIM_HOST_COST_SCALE": "0"}
# (title, agent mode, bench_calls call, calls per trace event estimate divisor, sync every)
WORKLOADS = (("host-only calls", "host", "profiler", 1, 0),
             ("calls + CUPTI", "cupti", "profiler", 1, 0),
             ("launches + kernels", "cupti", "launch", 2, 1000))
# Inclusive instructions of these functions (callgrind_annotate --inclusive) give the phases.
PHASES = (("freeze/cut", r"profagent::agent::freeze_last_window\("),
          ("join", r"profagent::collector::join\("),
          ("trace writer", r"profagent::exporters::write_(chrome|perfetto)_trace\("),
          ("deflate", r"^deflate$|[ :]deflate\b"),
          ("export, all files", r"profagent::exporters::export_window\("))


def trace_path(out_dir, fmt_name):
    found = [f for f in os.listdir(out_dir) if f.endswith(SUFFIX[fmt_name])]
    if len(found) != 1:
        raise BenchError(f"{out_dir}: expected one *{SUFFIX[fmt_name]}, found {found}")
    return os.path.join(out_dir, found[0])


def trace_events(path):
    if path.endswith(".gz"):
        count, tail = 0, b""
        with gzip.open(path, "rb") as f:
            while chunk := f.read(1 << 22):
                block = tail + chunk
                count += block.count(b'"ph":')
                tail = block[-4:]
                count -= tail.count(b'"ph":')
        return count
    return count_in_file(path, b'"ph":')


def flush_figures(r, absent):
    def flush_part(run, total_key, at_main_key):
        return run[total_key] - run[at_main_key]
    return {"cpu": (flush_part(r, "total_cpu_ns", "proc_cpu_ns") - flush_part(absent, "total_cpu_ns", "proc_cpu_ns")) / 1e9,
            "sys": (flush_part(r, "total_sys_ns", "proc_sys_ns") - flush_part(absent, "total_sys_ns", "proc_sys_ns")) / 1e9,
            "wall": ((r["end_ns"] - r["main_end_ns"]) - (absent["end_ns"] - absent["main_end_ns"])) / 1e9,
            "faults": flush_part(r, "total_minflt", "minflt") - flush_part(absent, "total_minflt", "minflt"),
            "rss_mb": r["peak_rss_kb"] / 1024}


def measure(runner, args, workload, fmt_name, json_events):
    title, mode, call, per_event, sync_every = workload
    calls = max(args.events // per_event, 1)
    samples = []
    for _ in range(args.runs):
        absent = runner.run("absent", call, calls, sync_every, extra=NO_HOST_COST)
        r = runner.run(mode, call, calls, sync_every, extra=dict(NO_HOST_COST, PROFAGENT_TRACE_FORMAT=fmt_name))
        path = trace_path(r["out_dir"], fmt_name)
        sample = flush_figures(r, absent)
        sample["bytes"] = os.path.getsize(path)
        sample["events"] = json_events.get(title) if fmt_name == "perfetto" else trace_events(path)
        if fmt_name == "json":
            json_events[title] = sample["events"]
        samples.append(sample)
        shutil.rmtree(r["out_dir"], ignore_errors=True)  # hundreds of MB: let their pages be reused
        shutil.rmtree(absent["out_dir"], ignore_errors=True)
    samples.sort(key=lambda s: s["cpu"])
    return samples[len(samples) // 2], calls


def row(workload, fmt_name, s, calls):
    events = s["events"] or 0
    per_s = lambda t: fmt(events / t if t > 0 else None, 0)  # noqa: E731
    cpu_rate = events / s["cpu"] if s["cpu"] > 0 else 0
    verdict = "meets" if cpu_rate >= TARGET[fmt_name] else "below"
    return [workload[0], fmt_name, str(calls), str(events), fmt(s["cpu"], 3), fmt(s["sys"], 3), fmt(s["wall"], 3),
            per_s(s["cpu"]), per_s(s["wall"]), fmt(s["faults"] / events if events else None, 3),
            fmt(s["bytes"] / events if events else None), fmt(s["rss_mb"], 0),
            f">= {TARGET[fmt_name] / 1e6:.0f} M/s ({verdict})"]


def section_timed(runner, args):
    rows, json_events = [], {}
    for workload in args.workloads:
        for fmt_name in args.formats:
            if fmt_name == "perfetto" and "json" not in args.formats:
                raise BenchError("perfetto's event count comes from the json run: keep json in --formats")
            sample, calls = measure(runner, args, workload, fmt_name, json_events)
            rows.append(row(workload, fmt_name, sample, calls))
    print_table(f"Exit flush end to end on one core (CPU {args.cpu}; median of {args.runs} runs by flush CPU; "
                f"load average {os.getloadavg()[0]:.1f})",
                ["workload", "format", "calls", "trace events", "CPU s", "of it sys s", "wall s",
                 "events/s (CPU)", "events/s (wall)", "faults/event", "bytes/event", "peak RSS MB", "target (CPU)"],
                rows,
                ["flush = from the end of main to the end of the process, minus the same for the agent absent "
                 "(run just before); CPU = user + system; faults = minor page faults of the flush.",
                 "every process pinned to one CPU (sched_setaffinity of the driver, inherited); "
                 f"{' '.join(f'{k}={v}' for k, v in NO_HOST_COST.items())}; launches synchronise every 1000.",
                 "json.gz has the compact formats' target; zlib level 1 bounds it (tests/bench/trace_formats_bench)."])
    for r in rows:
        print(f"  exit flush {r[1]}, {r[0]}: {r[3]} events, {r[7]} events/s CPU, {r[8]} events/s wall; target {r[12]}")


def inclusive_costs(path):
    """Function -> inclusive instructions, from callgrind_annotate --inclusive=yes."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                          capture_output=True, text=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+(?:\([\d.]+%\)\s+)?(?:\S*?:)?(.*?)(?:\s+\[.*\])?$", line)
        if m and m.group(1).replace(",", "").isdigit() and m.group(2):
            costs[m.group(2)] = max(costs.get(m.group(2), 0), int(m.group(1).replace(",", "")))
    return costs


def phase_cost(costs, pattern):
    return max((ir for name, ir in costs.items() if re.search(pattern, name)), default=0)


def section_instructions(runner, args):
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("\n  instructions: skipped (valgrind is not installed)")
        return
    rows = []
    for workload in args.workloads:
        title, mode, call, per_event, sync_every = workload
        calls = max(args.cg_events // per_event, 1)
        for fmt_name in args.formats:
            out_file = os.path.join(args.work, f"callgrind.flush.{call}.{mode}.{fmt_name}.out")
            wrapper = ["valgrind", "--tool=callgrind", "--toggle-collect=profagent::agent::flush_all*",
                       f"--callgrind-out-file={out_file}"]
            env = dict(NO_HOST_COST, PROFAGENT_TRACE_FORMAT="json")
            # The count of events of this workload: a JSON run of the same size, not under callgrind.
            events = trace_events(trace_path(runner.run(mode, call, calls, sync_every, extra=env)["out_dir"], "json"))
            runner.run(mode, call, calls, sync_every, extra=dict(env, PROFAGENT_TRACE_FORMAT=fmt_name), wrapper=wrapper)
            costs = inclusive_costs(out_file)
            total = phase_cost(costs, r"profagent::agent::flush_all")
            phases = {name: phase_cost(costs, pattern) for name, pattern in PHASES}
            writer = phases["trace writer"] - phases["deflate"]
            rest = phases["export, all files"] - phases["trace writer"]
            freeze = phases["freeze/cut"] - phases["join"]
            per = lambda ir: fmt(ir / events if events else None, 0)  # noqa: E731
            rows.append([title, fmt_name, str(events), per(total), per(freeze), per(phases["join"]), per(writer),
                         per(phases["deflate"]), per(rest), per(total - phases["freeze/cut"] - phases["export, all files"])])
    print_table(f"Instructions per trace event of the exit flush (callgrind, ~{args.cg_events} events per trace)",
                ["workload", "format", "trace events", "all", "freeze/cut", "join", "trace writer", "deflate",
                 "tables, summaries, other files", "other"], rows,
                ["inclusive instructions of each phase (callgrind_annotate --inclusive) / the JSON trace's events; "
                 "freeze/cut = freeze_last_window less the join; trace writer = write_chrome_trace or "
                 "write_perfetto_trace less zlib's deflate; page faults and system time are the kernel's, not "
                 "counted here (the timed table's sys and faults columns)."])


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for opt, what in (("--program", "bench_calls"), ("--agent", "libprofagent.so"),
                      ("--devsim", "folder of the simulated libcudart/libcupti"), ("--work", "scratch folder")):
        p.add_argument(opt, required=True, help=what)
    p.add_argument("--events", type=int, default=1_000_000, help="host calls per timed run (launches: half as many)")
    p.add_argument("--runs", type=int, default=3, help="timed runs per case (median by flush CPU)")
    p.add_argument("--cg-events", type=int, default=40_000, help="host calls per callgrind run")
    p.add_argument("--cpu", type=int, default=-1, help="the CPU to pin to (default: the last one allowed)")
    p.add_argument("--formats", default=",".join(FORMATS))
    p.add_argument("--workloads", default="host,cupti,launch",
                   help="host (host-only calls), cupti (calls + CUPTI), launch (launches + kernels)")
    p.add_argument("--sections", default="timed,instructions")
    p.add_argument("--smoke", action="store_true", help="tiny N: only checks everything runs")
    args = p.parse_args()
    args.formats = args.formats.split(",")
    keys = {"host": 0, "cupti": 1, "launch": 2}
    args.workloads = [WORKLOADS[keys[k]] for k in args.workloads.split(",")]
    if args.smoke:
        args.events, args.runs, args.cg_events = 4000, 1, 2000
    for key in ("work", "program", "agent", "devsim"):
        setattr(args, key, os.path.abspath(getattr(args, key)))
    # Runner's fields that these runs use (overhead_bench.Runner).
    args.exporter_bench = args.collector_bench = ""
    os.makedirs(args.work, exist_ok=True)
    allowed = sorted(os.sched_getaffinity(0))
    args.cpu = args.cpu if args.cpu >= 0 else allowed[-1]
    os.sched_setaffinity(0, {args.cpu})
    return args


def main():
    args = parse_args()
    runner = Runner(args)
    print(f"profagent exit flush benchmark — {time.strftime('%Y-%m-%d %H:%M:%S')}, pinned to CPU {args.cpu} "
          f"of {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}"
          + (" (smoke run: tiny N, figures meaningless)" if args.smoke else ""))
    failed = []
    for name, section in (("timed", section_timed), ("instructions", section_instructions)):
        if name not in args.sections.split(","):
            continue
        try:
            section(runner, args)
        except (BenchError, OSError) as error:
            failed.append(name)
            print(f"\nsection {name} FAILED: {error}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
