#!/usr/bin/python3
"""A 2-rank job of the simulated NCCL whose windows are streamed in segments
(PROFAGENT_STREAM_AFTER_MB=1, enough steps to cut several): each rank's <stem>.rank.ndjson must
be what the rank table of its trace holds, and the cross-rank report the same from the tables
as from the traces.

    streamed_ranks_checks.py PROFAGENT RANKS_TRAIN LAUNCH_RANKS_SH DEVSIM_DIR WORK_DIR

From the trace, independently: the steps (ProfilerStep#N), one row per collective kernel
[Comm hash, Seq, Collective name, bytes, its NCCL call's start, the kernel's start and end]
(Unix ns: baseTimeNanoseconds + ts), and the Distributed Summary as `profagent report
--summary distributed` computes it from the trace. The rows are compared as a multiset (a
streamed table has them segment by segment); the file must be one JSON object on one line.

Three runs: with a schedule (steps: the Distributed Summary folded step by step, equal to the
trace's; by the summaries' fold, and with PROFAGENT_SUMMARIES=off by its own), and the whole
run as one window (its steps marked by profagent_step() before its first segment: folded by
them, its Distributed Summary the trace's too, and `profagent report --ranks` needs no trace)."""
import glob
import json
import os
import shutil
import subprocess
import sys

profagent, program, launcher, devsim_dir, work = sys.argv[1:6]
RANKS = 2
STEPS = 1800  # ~16 host events a step: past the 1 MiB threshold, then several segments
DTYPE_BYTES = {"Float": 4}
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run_job(out_dir, schedule, summaries):
    shutil.rmtree(out_dir, ignore_errors=True)
    env = dict(os.environ, LD_LIBRARY_PATH=devsim_dir, PROFAGENT_OUTPUT_DIR=out_dir, PROFAGENT_STREAM_AFTER_MB="1",
               NCCL_COMM_ID=f"streamed_ranks_{os.getpid()}_{os.path.basename(out_dir)}")
    for name in ("PROFAGENT_SKIP_FIRST", "PROFAGENT_ACTIVE", "PROFAGENT_REPEAT", "PROFAGENT_SUMMARIES"):
        env.pop(name, None)
    if summaries is not None:
        env["PROFAGENT_SUMMARIES"] = summaries
    if schedule:
        env.update(PROFAGENT_SKIP_FIRST="1", PROFAGENT_ACTIVE=str(STEPS - 1), PROFAGENT_REPEAT="1")
    r = subprocess.run([profagent, "run", "--", launcher, str(RANKS), program, str(STEPS)], env=env,
                       capture_output=True, text=True, timeout=240)
    expect(r.returncode == 0, f"job exited {r.returncode}: {r.stderr[-2000:]}")
    return r


def abs_ns(trace, ts):
    return trace["baseTimeNanoseconds"] + round(ts * 1000)


def rows_of_trace(trace):
    """One row per collective kernel, as exporters/rank_table.h defines it."""
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    calls = {e["args"]["External id"]: e for e in events
             if e.get("cat") == "cpu_op" and "Comm hash" in e.get("args", {})}
    rows = []
    for e in events:
        args = e.get("args", {})
        if e.get("cat") != "kernel" or "Comm hash" not in args:
            continue
        call = calls.get(args.get("External id"))
        if not expect(call is not None, f"kernel at {e['ts']}: no NCCL call by its External id"):
            continue
        start = abs_ns(trace, e["ts"])
        rows.append([args["Comm hash"], args["Seq"], args["Collective name"],
                     call["args"]["In msg nelems"] * DTYPE_BYTES[call["args"]["dtype"]],
                     abs_ns(trace, call["ts"]), start, start + round(e["dur"] * 1000)])
    return sorted(rows)


def steps_of_trace(trace):
    return sorted([int(e["name"][len("ProfilerStep#"):]), abs_ns(trace, e["ts"]), abs_ns(trace, e["ts"]) + round(e["dur"] * 1000)]
                  for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))


def distributed_of_trace(path):
    r = subprocess.run([profagent, "report", path, "--summary", "distributed", "--format", "json"],
                       capture_output=True, text=True, timeout=240)
    if not expect(r.returncode == 0, f"report {path} exited {r.returncode}: {r.stderr[-1000:]}"):
        return None
    out = json.loads(r.stdout)["traces"][0]
    shares = [row["time_ns"] for row in out["summaries"]["distributed"]["rows"]]
    return dict(zip(("span_ns", "communication_ns", "computation_ns", "overlap_ns"), shares))


def check_rank_tables(out_dir, scheduled):
    traces = sorted(glob.glob(os.path.join(out_dir, "*.trace.json")))
    expect(len(traces) == RANKS, f"{out_dir}: {len(traces)} traces, expected {RANKS}")
    for path in traces:
        name = os.path.basename(path)
        with open(path) as f:
            trace = json.load(f)
        streamed = trace.get("profagent_streamed", {}).get("segments", 0)
        expect(streamed >= 2, f"{name}: streamed in {streamed} segments, the test wants several")
        table_path = path[:-len(".trace.json")] + ".rank.ndjson"
        if not expect(os.path.exists(table_path), f"{name}: a streamed window wrote no .rank.ndjson"):
            continue
        with open(table_path) as f:
            text = f.read()
        expect(text.count("\n") == 1 and text.endswith("}\n"), f"{table_path}: not one JSON object on one line")
        table = json.loads(text)
        info = trace["distributedInfo"]
        expect((table["rank"], table["world_size"]) == (info["rank"], info["world_size"]),
               f"{name}: rank table says rank {table['rank']} of {table['world_size']}, the trace {info}")
        rows = rows_of_trace(trace)
        expect(len(rows) >= 2 * (STEPS - 1), f"{name}: {len(rows)} collective kernels in the trace")
        got = sorted(table["collectives"])
        expect(got == rows, f"{name}: {len(got)} rows in the rank table, {len(rows)} from the trace; first that differ: "
                            f"{next(((a, b) for a, b in zip(got, rows) if a != b), None)}")
        expect(table["steps"] == steps_of_trace(trace), f"{name}: the rank table's steps are not the trace's")
        if scheduled:
            expect(len(table["steps"]) == STEPS - 1, f"{name}: {len(table['steps'])} steps")
        # The whole run too: its steps (profagent_step()) were listed by its first segment.
        expect(len(table["steps"]) >= STEPS - 1, f"{name}: {len(table['steps'])} steps")
        want = distributed_of_trace(path)
        expect(table["distributed"] == want, f"{name}: distributed {table['distributed']} != the trace's {want}")


def ranks_report(out_dir, *extra):
    r = subprocess.run([profagent, "report", "--ranks", out_dir, "--format", "json", *extra],
                       capture_output=True, text=True, timeout=240)
    expect(r.returncode == 0, f"report --ranks {extra} exited {r.returncode}: {r.stderr[-2000:]}")
    return (json.loads(r.stdout) if r.returncode == 0 else None), r.stderr


def check_report(out_dir):
    tables, said = ranks_report(out_dir)
    traces, _ = ranks_report(out_dir, "--traces")
    if tables is None or traces is None:
        return
    fallback = [line for line in said.splitlines() if "no Distributed Summary" in line]
    expect(len(fallback) == 0,
           f"report --ranks said {len(fallback)} fallback lines: {said[-1000:]}")
    for key in ("straggler", "collectives", "missing_ranks", "step_time_spread", "stragglers"):
        expect(tables.get(key) == traces.get(key), f"report --ranks {key}: {tables.get(key)} from the tables, "
                                                    f"{traces.get(key)} from the traces")
    for rank, v in tables["ranks"].items():
        for key, value in v.items():
            if key != "file":
                expect(value == traces["ranks"][rank][key], f"rank {rank}: {key} {value} from the table, "
                                                            f"{traces['ranks'][rank][key]} from the trace")


# The Distributed Summary folded by the summaries' fold (the default list holds it), or alone
# for the rank table (PROFAGENT_SUMMARIES=off); the whole run as one window, its steps marked by
# profagent_step().
for name, schedule, summaries in (("scheduled", True, None), ("scheduled_no_summaries", True, "off"),
                                  ("whole_run", False, None)):
    out = os.path.join(work, name)
    run_job(out, schedule, summaries)
    check_rank_tables(out, schedule)
    check_report(out)
    if not failures:
        shutil.rmtree(out, ignore_errors=True)

for failure in failures:
    print("FAILED:", failure)
print("passed" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
