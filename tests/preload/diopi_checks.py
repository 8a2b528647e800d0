#!/usr/bin/python3
"""Preload tests of the DIOPI wrappers. Same command line as
run_preload.py, with checkers of its own:

    diopi_checks.py --out DIR --checker NAME -- cmake -E env LD_PRELOAD=... PROG ARGS...

  diopi_train        train.py under the agent: same program output and same implemented
                     operators as without the agent; every device record issued inside an
                     operator carries that (innermost) operator's External id; diopiMm nests
                     inside the operators that call it; shapes are right; every operator row
                     of the table equals the sums recomputed from the trace.
  diopi_train_streamed        train.py streamed in segments: same output; the summaries
                     folded while it streamed equal `profagent report`'s of its trace.
  diopi_train_streamed_steps  the same with steps (each record in its step, those in none left out):
                     the folded summaries equal `profagent report`'s of its trace (the whole
                     run as one window, or a scheduled window of steps).
  diopi_unchanged    no crash and the same program output as without the agent (framework
                     without DIOPI runtime functions, late dlopen, lazy binding); optional
                     --expect-log REGEX that one [profagent] line must match.
Standard library only.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkers  # noqa: E402
import run_preload  # noqa: E402
import streamed_checks  # noqa: E402
from checkers import expect  # noqa: E402

# train.py's model: conv input (16, 3, 32, 32), 16 filters of 3x3, padding 1.
CONV_DIMS = [[16, 16, 32, 32], [16, 3, 32, 32], [16, 3, 3, 3], [16], [], [], [], []]
CONV_TYPES = ["float32"] * 4 + ["diopiSize_t"] * 3 + ["int64_t"]
NESTING_OPERATORS = {"diopiLinear", "diopiLinearBackward", "diopiMatmul"}


def program_lines(stdout):
    """What the program printed, minus its wall-clock timings."""
    return [line for line in stdout.splitlines() if not re.search(r"\btime [0-9.]+ ms", line)]


def check_same_output(context):
    run = context.run
    expect(run.returncode == 0, f"the program exited with {run.returncode} under the agent")
    plain = context.run_without_agent()
    expect(plain.returncode == 0, f"the program exited with {plain.returncode} without the agent")
    ours, theirs = program_lines(run.stdout), program_lines(plain.stdout)
    expect(ours == theirs, f"the program's output changed under the agent:\n{ours}\nwithout:\n{theirs}")
    expect(checkers.other_lines(run.stderr) == checkers.other_lines(plain.stderr),
           "the program's own stderr changed under the agent")
    return ours


def innermost(operators, event, tolerant):
    """The innermost operator around a host call on its thread (driver calls come from CUPTI
    with an aligned, not identical, clock: the most-overlapping operator for them)."""
    same_thread = [o for o in operators if (o["pid"], o["tid"]) == (event["pid"], event["tid"])]
    if tolerant:
        def overlap(o):
            return min(o["end_ns"], event["end_ns"]) - max(o["start_ns"], event["start_ns"])
        inside = [o for o in same_thread if overlap(o) > 0]
        deepest = [o for o in inside if not any(p is not o and contains(o, p) for p in inside)]
        return max(deepest, key=overlap) if deepest else None
    inside = [o for o in same_thread if contains(o, event)]
    return min(inside, key=lambda o: o["end_ns"] - o["start_ns"]) if inside else None


def contains(outer, inner):
    return outer["start_ns"] <= inner["start_ns"] and inner["end_ns"] <= outer["end_ns"]


def check_attribution(trace, operators):
    attributed = 0
    for device in trace.device:
        host = trace.launcher(device)
        expect(host is not None, f"device record {device['name']} has no launching host call")
        op = innermost(operators, host, checkers.is_driver_call(host))
        if op is None:
            continue
        got = device["args"].get("External id")
        expect(got == op["args"]["External id"],
               f"{device['name']} launched inside {op['name']} (External id {op['args']['External id']}) "
               f"carries External id {got}")
        attributed += 1
    expect(attributed > 0, "no device record was issued inside an operator")
    return attributed


def check_nesting(operators):
    mms = [o for o in operators if o["name"] == "diopiMm"]
    expect(mms, "no diopiMm operator in the trace (the vendor calls it from diopiLinear*)")
    for mm in mms:
        parents = [o for o in operators if o is not mm and o["tid"] == mm["tid"] and contains(o, mm)]
        expect(any(p["name"] in NESTING_OPERATORS for p in parents),
               f"diopiMm at {mm['ts']} is not nested inside diopiLinear/diopiLinearBackward/diopiMatmul")
    return len(mms)


def check_shapes(operators):
    convs = [o for o in operators if o["name"] == "diopiConvolution2d"]
    expect(convs, "no diopiConvolution2d operator in the trace")
    for conv in convs:
        expect(conv["args"].get("Input Dims") == CONV_DIMS,
               f"diopiConvolution2d Input Dims {conv['args'].get('Input Dims')} != {CONV_DIMS}")
        expect(conv["args"].get("Input type") == CONV_TYPES,
               f"diopiConvolution2d Input type {conv['args'].get('Input type')} != {CONV_TYPES}")


def shapes_text(dims):
    """torch's str() of the shapes list, as the table's Input Shapes column shows it."""
    return "[" + ", ".join("[" + ", ".join(str(d) for d in dim) + "]" for dim in dims) + "]"


def check_operator_rows(trace, operators, summary, by_shape=False):
    """Operator rows: count and CPU total from the operator events; CUDA total = device time of
    records whose External id is the operator's or that of an operator nested in it; Self CUDA
    = device time of records attributed to it directly."""
    by_external = collections.defaultdict(int)
    for device in trace.device:
        by_external[device["args"].get("External id")] += device["end_ns"] - device["start_ns"]
    def key(op):
        return (op["name"], shapes_text(op["args"].get("Input Dims", [])) if by_shape else "")
    expected = collections.defaultdict(lambda: [0, 0, 0, 0])
    for op in operators:
        row = expected[key(op)]
        nested = [o for o in operators if o["tid"] == op["tid"] and contains(op, o)]  # includes op
        row[0] += 1
        row[1] += op["end_ns"] - op["start_ns"]
        row[2] += by_external[op["args"]["External id"]]
        row[3] += sum(by_external[o["args"]["External id"]] for o in nested)
    rows = {(r["name"], r["input_shapes"]): r for r in summary["rows"] if r["kind"] == "operator"}
    expect(set(rows) == set(expected), f"operator rows {sorted(rows)} != operators in the trace {sorted(expected)}")
    for name, (count, cpu_total, self_cuda, cuda_total) in expected.items():
        r = rows[name]
        got = (r["count"], r["cpu_total_ns"], r["self_cuda_ns"], r["cuda_total_ns"])
        expect(got == (count, cpu_total, self_cuda, cuda_total),
               f"operator row {name}: (count, CPU total, Self CUDA, CUDA total) = {got}, "
               f"the trace says {(count, cpu_total, self_cuda, cuda_total)}")
        expect(r["self_cpu_ns"] <= r["cpu_total_ns"], f"operator row {name}: Self CPU above CPU total")
    return len(expected)


def check_diopi_train(context):
    lines = check_same_output(context)
    expect(any(line.startswith("implemented operators: ") for line in lines),
           "train.py printed no implemented operators")
    trace = checkers.Trace(checkers.only_file(context.out_dir, "*.trace.json"))
    operators = [e for e in trace.complete if e.get("cat") == "cpu_op"]
    expect(operators, "no DIOPI operator in the trace")
    attributed = check_attribution(trace, operators)
    nested = check_nesting(operators)
    check_shapes(operators)
    rows = check_operator_rows(trace, operators, checkers.summary_rows(context.out_dir))
    checkers.check_table(trace, checkers.summary_rows(context.out_dir))
    context.summary = (f"{len(operators)} operators, {attributed} device records attributed, "
                       f"{nested} nested diopiMm, {rows} operator rows recomputed")


def check_diopi_group_by_shape(context):
    """PROFAGENT_GROUP_BY=input_shape: operator rows split per shapes, each equal to the trace."""
    check_same_output(context)
    trace = checkers.Trace(checkers.only_file(context.out_dir, "*.trace.json"))
    operators = [e for e in trace.complete if e.get("cat") == "cpu_op"]
    summary = checkers.summary_rows(context.out_dir)
    rows = check_operator_rows(trace, operators, summary, by_shape=True)
    adamw = [r for r in summary["rows"] if r["name"] == "diopiAdamW"]
    expect(len(adamw) == 4, f"diopiAdamW should split into 4 shape rows (conv.w, (16,), fc.w, fc.b): {adamw}")
    with open(checkers.only_file(context.out_dir, "*.table.txt"), encoding="utf-8") as f:
        table = f.read()
    expect("Input Shapes" in table and shapes_text(CONV_DIMS)[:40] in table,
           "the table has no Input Shapes column with the convolution's shapes")
    context.summary = f"{rows} operator rows per (name, shapes) recomputed"


def check_diopi_train_streamed(context):
    """train.py streamed in segments (PROFAGENT_STREAM_AFTER_MB=1): same output as without the
    agent; the summaries folded while it streamed equal `profagent report`'s of its trace."""
    check_same_output(context)
    trace = checkers.Trace(checkers.only_file(context.out_dir, "*.trace.json"))
    streamed = trace.document.get("profagent_streamed")
    expect(streamed is not None and streamed["segments"] >= 2, f"the window was not streamed: {streamed}")
    lines = streamed_checks.check_folded_summaries(
        context, rows_in=("Operator Summary", "Kernel Summary", "Memory Manipulation Summary", "Operator Type"))
    streamed_checks.remove_trace_of_passed_check(context)
    context.summary = f"{streamed['segments']} segments; {lines} summary lines equal to the report's"


def check_diopi_train_streamed_steps(context):
    """The same with steps (PROFAGENT_STEP_ON): the summaries folded while it streamed, each
    record in its step and those in none left out, equal `profagent report`'s of its trace."""
    check_same_output(context)
    trace = checkers.Trace(checkers.only_file(context.out_dir, "*.trace.json"))
    streamed = trace.document.get("profagent_streamed")
    window = trace.document["profagent_window"]
    # A scheduled window ends at its last step's boundary, however far the agent's thread got:
    # on a loaded machine that can be after one segment (then the segment and the tail are folded).
    least = 2 if window["whole_run"] else 1
    expect(streamed is not None and streamed["segments"] >= least, f"the window was not streamed: {streamed}")
    expect(window["last_step"] > window["first_step"], f"the window has no steps: {window}")
    lines = streamed_checks.check_folded_summaries(
        context, rows_in=("Operator Summary", "Kernel Summary", "Memory Manipulation Summary", "Operator Type",
                          "Overview Summary", "Model Summary", "Distributed Summary", "Step Trace"),
        with_steps=True)
    step_lines = streamed_checks.check_step_lines(context, trace)
    written, _ = streamed_checks.streamed_summary_file(context)
    left_out = [line.strip() for line in written if "Left out (in no step)" in line]
    # The whole run as one window: what follows the last marker is in no step (not listed at exit).
    expect(left_out or not window["whole_run"], "no summary says which records were in no step")
    streamed_checks.remove_trace_of_passed_check(context)
    context.summary = (f"{streamed['segments']} segments, {window['last_step'] - window['first_step'] + 1} steps; "
                       f"{lines} summary lines equal to the report's, {step_lines} step lines to the trace's; {(left_out or ['none left out'])[0]}")


def memory_summary_json(out):
    """The "memory" object of a summary file (`profagent report --format json` or .summary.ndjson)."""
    return out.get("memory") if "memory" in out else out["traces"][0]["summaries"].get("memory")


def key_averages_lines(lines):
    """A table's lines from its first dashed line to its totals (blank lines left out)."""
    start = next((i for i, line in enumerate(lines) if line.startswith("-----")), len(lines))
    block = []
    for line in lines[start:]:
        if line.startswith(("Memory (allocations", "Memory columns", "profagent overhead:", "Steps:")):
            break
        if line.strip():
            block.append(line.rstrip())
    return block


def memory_lines(lines):
    """The memory summary's lines, from its heading to the first blank line."""
    start = next((i for i, line in enumerate(lines) if line.startswith("Memory (allocations")), None)
    expect(start is not None, f"no memory summary in {lines[:3]}")
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def check_memory_table(context, trace_path, summary_lines):
    """The folded table with its memory columns, printed and in <stem>.table.txt, equals
    `profagent report`'s key_averages of the trace, with no line saying its memory columns are
    short; the memory summary under it equals the one in <stem>.summary.txt."""
    with open(checkers.only_file(context.out_dir, "*.table.txt"), encoding="utf-8") as f:
        written = f.read().splitlines()
    printed = [line[len("[profagent] "):] for line in checkers.profagent_lines(context.run.stderr)]
    table = key_averages_lines(written)
    expect("Self CUDA Mem" in table[1], f"the table has no memory columns: {table[1]}")
    expect(key_averages_lines(printed) == table, "the table printed on stderr differs from <stem>.table.txt")
    report = subprocess.run([streamed_checks.profagent_cli(context), "report", "--summary", "key_averages", trace_path],
                            capture_output=True, text=True, check=False, timeout=120)
    expect(report.returncode == 0, f"profagent report failed: {report.stderr[-500:]}")
    reported = key_averages_lines(report.stdout.splitlines()[2:])
    differing = [(a, b) for a, b in zip(table, reported) if a != b]
    expect(len(table) == len(reported) and not differing,
           f"the folded table differs from `profagent report`'s: {differing[:2] or (table[-3:], reported[-3:])}")
    short = [line for line in written if line.startswith("Memory columns")]
    expect(not short, f"the table says: {short}")
    expect(memory_lines(written) == memory_lines(summary_lines),
           "the memory summary under the table differs from <stem>.summary.txt's")


def check_diopi_train_streamed_memory(context):
    """The same with PROFAGENT_PROFILE_MEMORY and call stacks: train.py makes its tensors in its
    first two steps, in the window's first segment, and they are live at its end. The memory
    summary (every allocation placed in its step, operator and call site), the table's memory
    columns and .summary.ndjson's "memory" equal `profagent report`'s of the trace, and the
    trace's allocation events name the call sites of calls written segments before them."""
    check_same_output(context)
    trace_path = checkers.only_file(context.out_dir, "*.trace.json")
    trace = checkers.Trace(trace_path)
    streamed = trace.document.get("profagent_streamed")
    expect(streamed is not None and streamed["segments"] >= 2, f"the window was not streamed: {streamed}")
    allocations = [e for e in trace.document["traceEvents"] if e.get("name") == "[memory]"]
    expect(len(allocations) >= 40, f"{len(allocations)} allocation events")
    unnamed = [e for e in allocations if not e["args"].get("Call site")]
    expect(not unnamed, f"{len(unnamed)} of {len(allocations)} allocation events name no call site: {unnamed[:1]}")
    lines = streamed_checks.check_folded_summaries(
        context, rows_in=("Operator Summary", "Kernel Summary", "Overview Summary"), with_steps=True)
    written, _ = streamed_checks.streamed_summary_file(context)
    placed = [line for line in written if "peak allocated" in line]
    expect(placed and " in diopi" in placed[0] and ", at " in placed[0],
           f"the peak is not placed in an operator and at a call site: {placed}")
    live = [line for line in written if "by cudaMalloc" in line]
    expect(live and all("before this window" not in line and ", at " in line for line in live),
           f"live allocations made in the window's first segment are not placed: {live[:3]}")
    check_memory_table(context, trace_path, written)
    with open(checkers.only_file(context.out_dir, "*.summary.ndjson"), encoding="utf-8") as f:
        summary = json.loads(f.readline())
    report = subprocess.run([streamed_checks.profagent_cli(context), "report", "--format", "json", "--summary",
                             "memory", trace_path], capture_output=True, text=True, check=False, timeout=120)
    expect(report.returncode == 0, f"profagent report failed: {report.stderr[-500:]}")
    reported = json.loads(report.stdout)["traces"][0]["summaries"]["memory"]
    memory = summary.get("memory")
    expect(memory is not None, f".summary.ndjson has no memory key: {list(summary)}")
    peaks = [(d["device"], d["peak_allocated"], d["peak_reserved"]) for d in memory["devices"]]
    expect(peaks == [(0, d["peak_allocated"], d["peak_reserved"]) for d in reported["devices"]],
           f".summary.ndjson's peaks {peaks} differ from the report's")
    made = sum(s["allocations"] for s in memory["steps"])
    traced = sum(1 for e in allocations if e["args"]["Bytes"] > 0)
    expect(made == traced, f".summary.ndjson counts {made} allocations in steps, the trace has {traced}")
    unplaced = [a for a in memory["live"] if not a["in_window"] or not a["made"].get("call_site")]
    listed = len(trace.document["profagent_memory"]["live"])
    expect(len(memory["live"]) == memory["live_count"] == listed > 0 and not unplaced,
           f"{memory['live_count']} live allocations, {len(unplaced)} not placed: {unplaced[:1]}")
    expect("not_exact" not in summary["streamed"], f"the memory columns are said not exact: {summary['streamed']}")
    memory_rows = [r for r in summary["rows"] if r["self_cuda_memory_usage"]]
    expect(memory_rows, "no row of the table has CUDA memory")
    streamed_checks.remove_trace_of_passed_check(context)
    context.summary = (f"{streamed['segments']} segments, {len(allocations)} allocation events with call sites; "
                       f"{lines} summary lines equal to the report's; {len(memory_rows)} rows with CUDA memory")


def check_diopi_unchanged(context):
    lines = check_same_output(context)
    if context.expect_log:
        ours = checkers.profagent_lines(context.run.stderr)
        expect(any(re.search(context.expect_log, line) for line in ours),
               f"no [profagent] line matches {context.expect_log!r}: {ours[:5]}")
    context.summary = f"{len(lines)} program lines identical with and without the agent"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--checker", required=True)
    parser.add_argument("--expect-log", default="")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    shutil.rmtree(options.out, ignore_errors=True)
    os.makedirs(options.out)
    agent_run = run_preload.run(command)
    agent_run.save(options.out, "run")
    context = checkers.Context(options.out, agent_run, lambda: run_preload.run(run_preload.without_agent(command)))
    context.expect_log = options.expect_log
    return checkers.report(globals()["check_" + options.checker], context, command, agent_run,
                           options.checker)


if __name__ == "__main__":
    sys.exit(main())
