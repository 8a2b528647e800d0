#!/usr/bin/python3
"""Recomputes every summary of a saved trace from docs/report.md alone (trace_model.py,
summaries_ref.py: no code shared with exporters/summaries) and compares it with
`profagent report --format json` of the same file: integers exactly, ratios to 1e-6
relative, row sets equal and ordered by the sort key. Also checks that the text output shows
the same numbers (two decimals in --time-unit) and the effect of --time-unit, --steps,
--row-limit and --sort-by.

    recompute.py --profagent build/bin/profagent TRACE [--thread-sep] [--op-detail]
                 [--steps A-B] [--expect-phase Backward=evaluate_function ...] [--quick]

Exit 0 when everything agrees, 1 with a diff (summary, row, field, both values) otherwise.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summaries_ref as S  # noqa: E402
import trace_model  # noqa: E402

PADDLE_KEYS = {"CPUTotal": ("cpu", "total_ns"), "CPUAvg": ("cpu", "avg_ns"), "CPUMax": ("cpu", "max_ns"),
               "CPUMin": ("cpu", "min_ns"), "GPUTotal": ("gpu", "total_ns"), "GPUAvg": ("gpu", "avg_ns"),
               "GPUMax": ("gpu", "max_ns"), "GPUMin": ("gpu", "min_ns")}
NO_REPORT = "unknown command 'report'"  # a launcher built before the report command existed
SKIP = 77  # CTest's SKIP_RETURN_CODE: nothing was compared, which must not read as a pass
UNITS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}


class Diff:
    def __init__(self):
        self.lines = []

    def __call__(self, where, field, expected, actual):
        self.lines.append("MISMATCH %s | %s: recomputed %r, report %r" % (where, field, expected, actual))

    def ok(self):
        return not self.lines


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b)) or abs(a - b) < 1e-9


def zero_stat(s):
    return s is None or (s.get("total_ns", 0) == 0 and s.get("max_ns", 0) == 0)


def cmp_stat(diff, where, exp, act):
    if zero_stat(exp) and zero_stat(act):
        return
    if exp is None or act is None:
        return diff(where, "stat", exp, act)
    for k in ("total_ns", "avg_ns", "max_ns", "min_ns"):
        if k in exp and exp[k] != act.get(k):
            diff(where, k, exp[k], act.get(k))
    if not close(exp["ratio"], act.get("ratio")):
        diff(where, "ratio", exp["ratio"], act.get("ratio"))


def cmp_row(diff, where, exp, act):
    if exp.get("calls") != act.get("calls"):
        diff(where, "calls", exp.get("calls"), act.get("calls"))
    cmp_stat(diff, where + " cpu", exp.get("cpu"), act.get("cpu"))
    cmp_stat(diff, where + " gpu", exp.get("gpu"), act.get("gpu"))


def by_name(rows, key="name"):
    out = {}
    for r in rows:
        out.setdefault(r[key], r)
    return out


def cmp_named(diff, where, exp_rows, act_rows, cmp, key="name"):
    e, a = by_name(exp_rows, key), by_name(act_rows, key)
    for name in sorted(set(e) | set(a), key=str):
        if name not in a:
            diff(where, "row %r" % name, "present", "missing")
        elif name not in e:
            diff(where, "row %r" % name, "absent", "present")
        else:
            cmp(diff, "%s row %r" % (where, name), e[name], a[name])


def sort_value(row, sort_by, gpu_only=False):
    side, field = PADDLE_KEYS.get(sort_by, ("cpu", "total_ns"))
    if gpu_only:  # the Kernel Summary sorts by GPU time; a GPU key chooses which
        return (row.get("gpu") or {}).get(field if side == "gpu" else "total_ns", 0)
    # READING: rows without a CPU column (kernels, copies no call issued) sort on the GPU
    # column of the same key.
    stat = row.get(side) if row.get(side) is not None else row.get("gpu")
    return (stat or {}).get(field, 0)


def check_order_and_limit(diff, where, exp_rows, act_rows, sort_by, limit):
    gpu_only = where == "kernel"
    keys = [sort_value(r, sort_by, gpu_only) for r in act_rows]
    for i in range(1, len(keys)):
        if keys[i] > keys[i - 1]:
            diff(where, "order by %s at row %d (%r)" % (sort_by, i, act_rows[i]["name"]), "<= %s" % keys[i - 1], keys[i])
    want = len(exp_rows) if limit <= 0 else min(limit, len(exp_rows))
    if len(act_rows) != want:
        diff(where, "rows shown (limit %d)" % limit, want, len(act_rows))
    shown = {r["name"] for r in act_rows}
    floor = min(keys) if keys else None
    for r in exp_rows:
        if r["name"] not in shown and floor is not None and sort_value(r, sort_by, gpu_only) > floor:
            diff(where, "row %r left out by the limit" % r["name"], "shown", "left out")


def tree(flat):
    """Flat rows with depth -> nested {"children": [...]} (children follow their parent)."""
    roots, stack = [], []
    for r in flat:
        node = dict(r, children=[])
        depth = r.get("depth", 0)
        while len(stack) > depth:
            stack.pop()
        (stack[-1]["children"] if stack else roots).append(node)
        stack.append(node)
    return roots


def cmp_detail_row(diff, where, exp, act):
    cmp_row(diff, where, exp, act)
    if "children" in exp:
        key = lambda r: "%s [%s]" % (r["name"], r.get("kind", "?"))  # noqa: E731
        e = {key(c): c for c in exp["children"]}
        a = {key(c): c for c in act.get("children", [])}
        for k in sorted(set(e) | set(a)):
            if k not in a or k not in e:
                diff(where, "child %s" % k, "present" if k in e else "absent", "present" if k in a else "missing")
            else:
                cmp_detail_row(diff, where + " > " + k, e[k], a[k])


def cmp_threads(diff, name, exp, act, sort_by, limit, detail):
    e = {str(t["thread"]): t["rows"] for t in exp["threads"]}
    a = {str(t["thread"]): t["rows"] for t in act.get("threads", [])}
    if set(e) != set(a):
        diff(name, "threads", sorted(e), sorted(a))
    for t in set(e) & set(a):
        act_top = [r for r in a[t] if r.get("depth", 0) == 0]
        check_order_and_limit(diff, "%s[%s]" % (name, t), e[t], act_top, sort_by, limit)
        shown = {r["name"] for r in act_top}
        exp_rows = [r for r in e[t] if r["name"] in shown]
        cmp_named(diff, "%s[%s]" % (name, t), exp_rows, tree(a[t]) if detail else act_top,
                  cmp_detail_row if detail else cmp_row)


def cmp_timeshares(diff, where, exp, act, key):
    def one(d, w, e, a):
        for f in ("calls", "time_ns"):
            if f in e and e[f] != a.get(f):
                d(w, f, e[f], a.get(f))
        if not close(e["ratio"], a.get("ratio")):
            d(w, "ratio", e["ratio"], a.get("ratio"))
    cmp_named(diff, where, exp, act, one, key)


def compare(exp, act, opts, diff):
    """exp: summaries_ref output; act: one trace object of the report's JSON."""
    sums = act.get("summaries", {})
    for name in exp:
        if name not in sums:
            diff(name, "summary", "present", "missing")
    if "overview" in sums:
        cmp_timeshares(diff, "overview.cpu", exp["overview"]["cpu"], sums["overview"].get("cpu", []), "type")
        cmp_timeshares(diff, "overview.gpu", exp["overview"]["gpu"], sums["overview"].get("gpu", []), "type")
    if "model" in sums:
        cmp_named(diff, "model", exp["model"]["rows"], sums["model"].get("rows", []), cmp_row)
    if "distributed" in sums:
        cmp_timeshares(diff, "distributed", exp["distributed"]["rows"], sums["distributed"].get("rows", []), "name")
    for name in ("operator", "user_defined"):
        if name in sums:
            cmp_threads(diff, name, exp[name], sums[name], opts.sort_by, opts.row_limit,
                        opts.op_detail and name == "operator")
    for name in ("kernel", "memory_manipulation"):
        if name in sums:
            rows = sums[name].get("rows", [])
            check_order_and_limit(diff, name, exp[name]["rows"], rows, opts.sort_by, opts.row_limit)
            shown = {r["name"] for r in rows}
            cmp_named(diff, name, [r for r in exp[name]["rows"] if r["name"] in shown], rows, cmp_row)
    if "device" in sums:
        cmp_device(diff, exp["device"], sums["device"])
    if "perf" in sums:
        cmp_perf(diff, exp["perf"], sums["perf"])
    if "step_trace" in sums:
        cmp_step_trace(diff, exp["step_trace"], sums["step_trace"])
    if "op_type" in sums:
        cmp_op_type(diff, exp["op_type"], sums["op_type"])
    if "key_averages" in sums:
        cmp_key_averages(diff, exp["key_averages"], sums["key_averages"])
    if "memory" in sums and exp["memory"]["devices"]:
        cmp_named(diff, "memory", exp["memory"]["devices"], sums["memory"].get("devices", []), cmp_fields, "device")


def cmp_fields(diff, where, exp, act):
    for k, v in exp.items():
        if isinstance(v, float):
            if not close(v, act.get(k)):
                diff(where, k, v, act.get(k))
        elif v != act.get(k):
            diff(where, k, v, act.get(k))


def cmp_device(diff, exp, act):
    gpu = [r for r in act.get("rows", []) if r["name"].startswith("GPU")]
    cmp_named(diff, "device", exp["rows"], gpu, cmp_fields)


def cmp_perf(diff, exp, act):
    e = {x["step"]: x for x in exp["steps"]}
    a = {x["step"]: x for x in act.get("steps", [])}
    if set(e) != set(a):
        diff("perf", "steps", sorted(e, key=str), sorted(a, key=str))
    for k in set(e) & set(a):
        cmp_fields(diff, "perf step %s" % k, e[k], a[k])
    if not close(exp["reader_ratio"], act.get("reader_ratio")):
        diff("perf", "reader_ratio", exp["reader_ratio"], act.get("reader_ratio"))
    for part in ("batch_cost", "reader_cost", "ips"):
        cmp_fields(diff, "perf " + part, exp[part], act.get(part, {}))


def cmp_step_trace(diff, exp, act):
    e = {x["step"]: x for x in exp["steps"]}
    a = {x["step"]: x for x in act.get("steps", [])}
    if set(e) != set(a):
        diff("step_trace", "steps", sorted(e, key=str), sorted(a, key=str))
    for k in set(e) & set(a):
        x, y = e[k], a[k]
        for f in ("fp", "bp"):
            if (x[f] or None) != (y.get(f) or None):
                diff("step_trace step %s" % k, f, x[f], y.get(f))
        for f in ("iteration_gap_ns", "fp_bp_ns", "tail_ns"):
            if x.get(f) != y.get(f):
                diff("step_trace step %s" % k, f, x.get(f), y.get(f))
    if not exp["average"] or act.get("average") is None:  # no step with both points: null
        if (exp["average"] or None) != act.get("average"):
            diff("step_trace", "average", exp["average"], act.get("average"))
    else:
        cmp_fields(diff, "step_trace average", exp["average"], act["average"])


def cmp_op_type(diff, exp, act):
    if exp["metric"] != act.get("metric"):
        diff("op_type", "metric", exp["metric"], act.get("metric"))
    rows = act.get("rows", [])
    top = exp["rows"][:exp["limit"]]
    rest = exp["rows"][exp["limit"]:]
    want = top + ([{"type": "(others)", "calls": sum(r["calls"] for r in rest),
                    "device_ns": sum(r["device_ns"] for r in rest), "cpu_ns": sum(r["cpu_ns"] for r in rest),
                    "ratio": sum(r["ratio"] for r in rest)}] if rest else [])
    metric = "device_ns" if exp["metric"] == "device" else "cpu_ns"
    named = [r for r in rows if r["type"] != "(others)"]
    for i in range(1, len(named)):
        if named[i][metric] > named[i - 1][metric]:
            diff("op_type", "order at row %d" % i, "non-increasing %s" % metric, named[i][metric])
    # Ties at the cut may pick different types; compare only when the cut is unambiguous.
    if rest and top[-1][metric] == rest[0][metric]:
        want = [r for r in want if r["type"] != "(others)" and r[metric] != top[-1][metric]]
        rows = [r for r in rows if r["type"] in {w["type"] for w in want}]
    cmp_named(diff, "op_type", want, rows, cmp_fields, "type")


def cmp_key_averages(diff, exp, act):
    a = {}
    for r in act.get("rows", []):
        a.setdefault(r["name"], r)
    for r in exp["rows"]:
        if r["name"] not in a:
            continue  # the row limit may leave it out; shown rows are checked
        # The report's rows are the summary file's (torch's names: "count").
        for f, g in (("calls", "count"), ("cpu_total_ns", "cpu_total_ns"), ("self_cpu_ns", "self_cpu_ns"),
                     ("cuda_total_ns", "cuda_total_ns")):
            if r[f] != a[r["name"]].get(g):
                diff("key_averages row %r" % r["name"], f, r[f], a[r["name"]].get(g))
    if not any(r["name"] in a for r in exp["rows"]) and exp["rows"]:
        diff("key_averages", "rows", "some of %d" % len(exp["rows"]), "none matched")


def run_report(profagent, trace, *args):
    cmd = [profagent, "report", *args, trace]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if NO_REPORT in p.stderr:
        print("recompute: SKIPPED, %s has no report command yet" % profagent, file=sys.stderr)
        sys.exit(SKIP)
    if p.returncode != 0:
        raise SystemExit("recompute: %s exited %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
    return p.stdout


def report_json(opts, trace, *extra):
    args = ["--format", "json", "--row-limit", str(opts.row_limit), "--sort-by", opts.sort_by, *extra]
    if opts.steps:
        args += ["--steps", opts.steps]
    if opts.thread_sep:
        args.append("--thread-sep")
    if opts.op_detail:
        args.append("--op-detail")
    doc = json.loads(run_report(opts.profagent, trace, *args))
    traces = doc.get("traces", [])
    if doc.get("profagent_report") != 1 or len(traces) != 1:
        raise SystemExit("recompute: unexpected report document: %s" % json.dumps(doc)[:300])
    return traces[0]


def parse_steps(text):
    if not text:
        return None
    lo, _, hi = text.partition("-")
    return (int(lo) if lo else None, int(hi) if hi else None)


def cmp_header(diff, span, phases, trace, act):
    sp = act.get("span", {})
    want = {"kind": "ProfileStep" if span.has_steps else "Window", "cpu_ns": span.cpu_ns, "gpu_ns": span.gpu_ns}
    cmp_fields(diff, "span", want, sp)
    # --steps cuts the trace to the chosen steps first: nothing of it is outside them then.
    if span.has_steps and span.selected_host is None:
        cmp_fields(diff, "outside_steps", {"host": span.outside_host, "device": span.outside_device},
                   act.get("outside_steps", {}))
    if act.get("source") != trace.source:
        diff("trace", "source", trace.source, act.get("source"))
    found = {p: v for p, v in (act.get("phases") or {}).items() if v}
    for p in S.PHASES:
        if (p in phases.sources) != (p in found):
            diff("phases", p, phases.sources.get(p, "not found"), found.get(p, "not found"))
    for cat, n in trace.skipped.items():
        got = (act.get("skipped") or {}).get(cat)
        if got != n:
            diff("skipped", cat, n, got)


def text_rows(exp, name):
    if name in ("operator", "user_defined"):
        return exp[name]["threads"][0]["rows"]
    return exp[name]["rows"]


def check_text(diff, opts, trace, exp, unit):
    """A few rows of each Paddle table: Total and Ratio(%) in `unit`, two decimals."""
    args = ["--format", "text", "--time-unit", unit, "--row-limit", "0"]
    if opts.steps:
        args += ["--steps", opts.steps]
    lines = run_report(opts.profagent, trace, *args).splitlines()
    checked = 0
    for name in ("operator", "kernel", "memory_manipulation", "user_defined"):
        rows = [r for r in text_rows(exp, name) if len(r["name"]) <= 30][:3]
        for r in rows:
            side = r["cpu"] or r["gpu"]
            if side is None:
                continue
            want = ["%.2f" % (side["total_ns"] / UNITS[unit]), "%.2f" % side["ratio"]]
            hits = [l for l in lines if l.strip().startswith(r["name"] + " ") and all(w in l.split() or
                    any(tok.startswith(w) for tok in l.replace("/", " ").replace("(", " ").split()) for w in want)]
            if not hits:
                diff("text %s (%s)" % (name, unit), "row %r" % r["name"], " ".join(want), "no such line")
            checked += 1
    return checked


def check_option_effects(diff, opts, trace):
    base = report_json(opts, trace)
    ops = base["summaries"].get("operator", {}).get("threads", [{}])[0].get("rows", [])
    top = [r for r in ops if r.get("depth", 0) == 0]
    if len(top) > 1:
        one = argparse.Namespace(**dict(vars(opts), row_limit=1))
        limited = report_json(one, trace)["summaries"]["operator"]["threads"][0]["rows"]
        if len([r for r in limited if r.get("depth", 0) == 0]) != 1:
            diff("--row-limit 1", "operator rows", 1, len(limited))
    other = argparse.Namespace(**dict(vars(opts), sort_by="cpu_time_total"))
    mapped = report_json(other, trace)["summaries"].get("operator", {}).get("threads", [{}])[0].get("rows", [])
    if [r["name"] for r in mapped] != [r["name"] for r in ops]:
        diff("--sort-by cpu_time_total", "operator order", "same as CPUTotal", [r["name"] for r in mapped][:5])


def check_one(opts, trace_path, diff):
    trace = trace_model.Trace(trace_path)
    span, phases, exp = S.compute(trace, parse_steps(opts.steps), opts.thread_sep, opts.op_detail)
    act = report_json(opts, trace_path)
    cmp_header(diff, span, phases, trace, act)
    compare(exp, act, opts, diff)
    for spec in opts.expect_phase:
        phase, _, text = spec.partition("=")
        how = phases.sources.get(phase, "")
        got = (act.get("phases") or {}).get(phase) or ""
        if text.lower() not in how.lower() and text.lower() not in got.lower():
            diff("phases", phase, "found by %s" % text, "recomputed %r, report %r" % (how, got))
    summary = "%s: %s, span %d ns CPU / %d ns GPU, %d steps, phases %s" % (
        trace_path, trace.source, span.cpu_ns, span.gpu_ns, len(span.steps) if span.has_steps else 0,
        json.dumps(phases.sources))
    if not opts.quick:
        for unit in ("ms", "us"):
            check_text(diff, opts, trace_path, exp, unit)
        check_option_effects(diff, opts, trace_path)
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--profagent", required=True)
    ap.add_argument("--steps", default="")
    ap.add_argument("--sort-by", default="CPUTotal", choices=sorted(PADDLE_KEYS))
    ap.add_argument("--row-limit", type=int, default=100)
    ap.add_argument("--thread-sep", action="store_true")
    ap.add_argument("--op-detail", action="store_true")
    ap.add_argument("--expect-phase", action="append", default=[], help="Phase=text of how it must be found")
    ap.add_argument("--quick", action="store_true", help="JSON only (no text and option runs)")
    opts = ap.parse_args(argv)
    diff = Diff()
    for t in opts.traces:
        print("recompute:", check_one(opts, t, diff))
    for line in diff.lines:
        print(line)
    print("recompute: %s (%d mismatches)" % ("agrees" if diff.ok() else "DISAGREES", len(diff.lines)))
    return 0 if diff.ok() else 1


if __name__ == "__main__":
    sys.exit(main())
