#!/usr/bin/python3
"""Interval merging of docs/report.md on tiny Kineto-layout traces with chosen ns: overlapping
events of one kind (on any thread or stream) count once, touching ones add nothing, identical
and nested ones count once. Each case states its expected numbers by hand; they are checked
against recompute.py's model AND against `profagent report --format json`, then recompute.py
compares every other number of the same trace.

    interval_cases.py --profagent build/bin/profagent --work DIR CASE
    interval_cases.py --list
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import recompute  # noqa: E402
import summaries_ref as S  # noqa: E402
import trace_model  # noqa: E402

PID = 4242
STEP = (500, 10500)  # one ProfilerStep#1 of 10000 ns: ratios are time / 100


def us(ns):
    return ns / 1000.0


def x(cat, name, tid, start, end, pid=PID, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": us(start), "dur": us(end - start),
            "args": args}


def ops(intervals):
    """intervals: (thread, start, end) -> cpu_op events."""
    return [x("cpu_op", "aten::op", tid, s, e) for tid, s, e in intervals]


def kernels(intervals):
    """intervals: (stream, start, end) -> kernels and the launches that issued them (thread 1,
    inside the step, each 10 ns long)."""
    out = []
    for i, (stream, s, e) in enumerate(intervals):
        corr = 100 + i
        launch = 600 + 20 * i
        out.append(x("cuda_runtime", "cudaLaunchKernel", 1, launch, launch + 10, correlation=corr))
        out.append(x("kernel", "gemm", stream, s, e, pid=0, device=0, stream=stream, correlation=corr))
    return out


# Each case: (events, {(table, row): (calls, merged ns)}).
TWO_THREADS = [(1, 1000, 3000), (1, 4000, 6000), (2, 1500, 3500), (2, 4500, 5000)]
CASES = {
    # Thread 1 |____| |____|, thread 2 overlapping both: [1000,3500) + [4000,6000).
    "two_threads": (ops(TWO_THREADS), {("cpu", "Operator"): (4, 4500)}),
    # Nested on one thread (the inner one is OperatorInner), and one nested in time on another thread.
    "nested": (ops([(1, 1000, 5000), (1, 2000, 3000), (2, 2500, 4000)]),
               {("cpu", "Operator"): (2, 4000), ("cpu", "OperatorInner"): (1, 1000)}),
    "identical": (ops([(1, 1000, 2000), (2, 1000, 2000), (3, 1000, 2000)]), {("cpu", "Operator"): (3, 1000)}),
    # end == start: merges without adding anything.
    "touching": (ops([(1, 1000, 2000), (2, 2000, 3000), (3, 3000, 3500)]), {("cpu", "Operator"): (3, 2500)}),
    "kernels_two_streams": (kernels([(7, 1000, 3000), (7, 4000, 6000), (8, 1500, 3500), (8, 4500, 5000)]),
                            {("gpu", "Kernel"): (4, 4500)}),
    "kernels_nested_identical_touching": (
        kernels([(7, 1000, 5000), (8, 2000, 3000), (9, 2000, 3000), (7, 5000, 6000), (8, 7000, 8000)]),
        {("gpu", "Kernel"): (5, 6000)}),
}


def write_trace(path, events):
    step = x("user_annotation", "ProfilerStep#1", 1, *STEP)
    doc = {"schemaVersion": 1, "traceEvents": [step] + events, "displayTimeUnit": "ms"}
    with open(path, "w") as f:
        json.dump(doc, f)


def overview_rows(overview):
    return {(side, r["type"]): (r["calls"], r["time_ns"], r["ratio"]) for side in ("cpu", "gpu")
            for r in overview.get(side, [])}


def check(where, want, rows, failures):
    for key, (calls, time_ns) in want.items():
        got = rows.get(key)
        ratio = 100.0 * time_ns / (STEP[1] - STEP[0])
        if got is None or got[0] != calls or got[1] != time_ns or abs(got[2] - ratio) > 1e-9:
            failures.append("%s %s/%s: expected calls %d, %d ns, %.4f%%; got %r" % (where, key[0], key[1], calls,
                                                                                 time_ns, ratio, got))


def run(case, profagent, work):
    events, want = CASES[case]
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, case + ".json")
    write_trace(path, events)
    failures = []
    _, _, model = S.compute(trace_model.Trace(path))
    check("recompute.py", want, overview_rows(model["overview"]), failures)
    out = subprocess.run([profagent, "report", "--format", "json", "--summary", "overview", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if recompute.NO_REPORT in out.stderr:
        for f in failures:
            print(f)
        print("%s: recompute.py %s the hand-computed values; SKIPPED the report side, %s has no report "
              "command yet" % (case, "DISAGREES with" if failures else "agrees with", profagent))
        return 1 if failures else recompute.SKIP
    if out.returncode != 0:
        failures.append("profagent report exited %d: %s" % (out.returncode, out.stderr.strip()))
    else:
        doc = json.loads(out.stdout)
        check("profagent report", want, overview_rows(doc["traces"][0]["summaries"]["overview"]), failures)
    full = subprocess.run([sys.executable, os.path.join(HERE, "recompute.py"), "--profagent", profagent, "--quick",
                           path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if full.returncode != 0:
        failures.append("recompute.py on the same trace:\n" + full.stdout)
    for f in failures:
        print(f)
    print("%s: %s" % (case, "ok" if not failures else "FAILED"))
    return 0 if not failures else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--profagent")
    ap.add_argument("--work", default="interval_cases_out")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    return run(a.case, a.profagent, a.work)


if __name__ == "__main__":
    sys.exit(main())
