"""A streamed window (collector/segment_stream.h) checked as the devsim runs are: the program's
threads (their iterations inside "block" ranges of 500, so that ranges span the segments, each
block with a call of its own) run under PROFAGENT_STREAM_AFTER_MB=1, which streams the window in segments while it
is recorded. Its one trace must hold every call, copy, set and kernel, each device record
linked to its call by exactly one ac2g flow and equal correlations, kernels with their
iteration range's External id, every call inside a block range; the trace says how many
segments wrote it; no partial or swap file is left. Its key_averages table, folded segment by
segment while it streamed, is printed and written to <stem>.table.txt, and equals, row by row
and in the same order, the table `profagent report` computes from the whole trace joined at once.
So do the summaries folded while it streamed (<stem>.summary.txt: Device, Operator, Kernel,
Memory Manipulation, UserDefined, operator types), line by line against `profagent report --summary`;
the summaries that are not folded are named on one line of that file, never printed differently.
"""
import bisect
import collections
import glob
import json
import os
import subprocess

import checkers as C
import test_output


class Spans:
    """The `name` ranges of each thread, to find the one around an event (ranges of one name
    do not overlap on a thread here)."""

    def __init__(self, trace, name):
        self.by_thread = collections.defaultdict(list)
        for r in trace.ranges:
            if r["name"] == name:
                self.by_thread[(r["pid"], r["tid"])].append((r["start_ns"], r["end_ns"], r))
        for spans in self.by_thread.values():
            spans.sort(key=lambda s: (s[0], s[1]))

    def around(self, e):
        spans = self.by_thread.get((e["pid"], e["tid"]), [])
        at = bisect.bisect_right([s[0] for s in spans], e["start_ns"]) - 1 if spans else -1
        return spans[at][2] if at >= 0 and spans[at][1] >= e["end_ns"] else None


def check_external_ids(trace, wanted):
    """As checkers.check_external_ids, by a search per kernel: each kernel carries the External
    id of the iteration range around its launch."""
    iterations = Spans(trace, "iteration")
    for e in trace.device:
        if e["cat"] != "kernel":
            continue
        scope = iterations.around(trace.launcher(e))
        C.expect(scope is not None, f"kernel {e['name']!r}: its launch is not inside an iteration range")
        C.expect(e["args"].get("External id") == scope["args"]["External id"],
                 f"kernel {e['name']!r}: External id {e['args'].get('External id')} != its range's {scope['args']['External id']}")
    for name, count in wanted["ranges"].items():
        found = sum(1 for r in trace.ranges if r["name"] == name)
        C.expect(found == count, f"{count} {name} ranges opened, {found} in the trace")


def table_block(lines):
    """The table's lines, from its first dashed line to its totals and the overhead line."""
    start = next((i for i, line in enumerate(lines) if line.startswith("-----")), None)
    C.expect(start is not None, f"no table in {lines[:5]}")
    block = [line.rstrip() for line in lines[start or 0:] if line.strip()]
    end = next((i for i, line in enumerate(block) if line.startswith("profagent overhead:")), len(block) - 1)
    return block[:end + 1]


def check_folded_table(context, row="iteration"):
    tables = glob.glob(os.path.join(context.out_dir, "*.table.txt"))
    C.expect(len(tables) == 1, f"a streamed window wrote {len(tables)} table files")
    with open(tables[0], encoding="utf-8") as f:
        written = table_block(f.read().splitlines())
    printed = table_block([line[len("[profagent] "):] for line in C.profagent_lines(context.run.stderr)])
    C.expect(printed == written, "the table printed on stderr differs from <stem>.table.txt")
    trace_path = glob.glob(os.path.join(context.out_dir, "*.trace.json"))[0]
    report = subprocess.run([profagent_cli(context), "report", "--summary", "key_averages", trace_path],
                            capture_output=True, text=True, check=False, timeout=120)
    C.expect(report.returncode == 0, f"profagent report failed: {report.stderr[-500:]}")
    reported = table_block(report.stdout.splitlines()[2:])  # after the trace's and the block's titles
    C.expect(len(written) > 8 and any(line.lstrip().startswith(row + " ") for line in written),
             f"the table has no {row} row: {written[:6]}")
    differing = [(a, b) for a, b in zip(written, reported) if a != b]
    C.expect(len(written) == len(reported) and not differing,
             f"the folded table differs from `profagent report`'s ({len(written)} and {len(reported)} lines): "
             f"{differing[:3] or (written, reported)}")
    check_summary_json(context, trace_path)


def check_summary_json(context, trace_path):
    """<stem>.summary.ndjson of a streamed window: every row of the folded table and its totals
    equal `profagent report --format json`'s key_averages of the trace (every row), its record
    counts the trace's, its head the trace's window."""
    files = glob.glob(os.path.join(context.out_dir, "*.summary.ndjson"))
    C.expect(len(files) == 1, f"a streamed window wrote {len(files)} .summary.ndjson files")
    with open(files[0], encoding="utf-8") as f:
        lines = f.read().splitlines()
    C.expect(len(lines) == 1, f".summary.ndjson has {len(lines)} lines")
    summary = json.loads(lines[0])
    report = subprocess.run([profagent_cli(context), "report", "--format", "json", "--summary", "key_averages",
                             "--row-limit", "0", trace_path], capture_output=True, text=True, check=False, timeout=120)
    C.expect(report.returncode == 0, f"profagent report failed: {report.stderr[-500:]}")
    table = json.loads(report.stdout)["traces"][0]["summaries"]["key_averages"]
    C.expect(len(summary["rows"]) == table["rows_total"] and summary["rows"] == table["rows"],
             f".summary.ndjson's {len(summary['rows'])} rows differ from the report's {table['rows_total']}: "
             f"{[(a, b) for a, b in zip(summary['rows'], table['rows']) if a != b][:2]}")
    C.expect((summary["self_cpu_time_total_ns"], summary["self_cuda_time_total_ns"], summary["sort_by"])
             == (table["self_cpu_total_ns"], table["self_cuda_total_ns"], table["sort_by"]),
             f"totals differ: {summary['self_cpu_time_total_ns']}, {summary['self_cuda_time_total_ns']} against {table}")
    with open(trace_path, encoding="utf-8") as f:
        document = json.load(f)
    streamed = document["profagent_streamed"]
    C.expect(summary.get("streamed", {}).get("segments") == streamed["segments"],
             f"'streamed' {summary.get('streamed')}, the trace's {streamed}")
    # A device record is a kernel, copy, set or synchronisation; a host record a call, range or
    # operator of the program's.
    categories = collections.Counter(e.get("cat") for e in document["traceEvents"] if e.get("ph") == "X")
    device = sum(categories[c] for c in C.DEVICE_CATEGORIES + ("cuda_sync",))
    host = sum(categories[c] for c in HOST_CATEGORIES)
    C.expect((summary["host_records"], summary["device_records"]) == (host, device),
             f"host_records {summary['host_records']}, device_records {summary['device_records']}: "
             f"the trace has {host} and {device}")


# The summaries a streamed window folds (exporters/summaries/streamed_summaries.h), and those it
# leaves to `profagent report`, in the order the summaries are printed.
FOLDED_SUMMARIES = ("device", "operator", "kernel", "memory_manipulation", "user_defined", "op_type", "memory")
UNFOLDED_SUMMARIES = ("overview", "model", "distributed", "perf", "step_trace")
# Folded step by step in a window with steps (exporters/summaries/streamed_step_summaries.h).
PER_STEP_SUMMARIES = ("overview", "model", "distributed", "perf", "step_trace")
PRINT_ORDER = ("device", "overview", "model", "distributed", "operator", "kernel", "memory_manipulation",
               "user_defined", "perf", "step_trace", "op_type", "key_averages", "memory")
NOT_COMPUTED = "Not computed for a streamed window: "


def profagent_cli(context):
    preload = next(a for a in context.run.command if a.startswith("LD_PRELOAD=")).split("=", 1)[1]
    return os.path.join(os.path.dirname(os.path.dirname(preload)), "bin", "profagent")


def streamed_summary_file(context, stem=""):
    """<stem>.summary.txt of the one streamed window (of the window whose files start with
    `stem`): its lines, and the summaries its "Not computed" line names (none: no such line)."""
    files = glob.glob(os.path.join(context.out_dir, stem + "*.summary.txt"))
    C.expect(len(files) == 1, f"a streamed window wrote {len(files)} summary files")
    with open(files[0], encoding="utf-8") as f:
        lines = f.read().splitlines()
    named = [line for line in lines if line.startswith(NOT_COMPUTED)]
    C.expect(len(named) <= 1, f"{len(named)} lines name the summaries not computed: {lines[-3:]}")
    missing = named[0][len(NOT_COMPUTED):].split(" (", 1)[0].split(", ") if named else []
    C.expect(not any(line.startswith("Not exact") for line in lines), f"a folded figure is not exact: {lines[-3:]}")
    return [line for line in lines if not line.startswith(NOT_COMPUTED)], missing


def check_folded_summaries(context, rows_in=("Kernel Summary",), with_steps=False, stem=""):
    """The folded summaries equal, line by line and in order, what `profagent report` computes
    from the streamed trace joined whole; `rows_in`: blocks that must have rows. `with_steps`:
    the window has steps, so the per-step summaries are folded too. `stem`: the window's files'
    start, when there are several windows."""
    written, missing = streamed_summary_file(context, stem)
    folded = [n for n in PRINT_ORDER if n in FOLDED_SUMMARIES or (with_steps and n in PER_STEP_SUMMARIES)]
    unfolded = tuple(n for n in UNFOLDED_SUMMARIES if n not in folded)
    C.expect(tuple(missing) == unfolded, f"not computed: {missing}, expected {unfolded}")
    trace_path = glob.glob(os.path.join(context.out_dir, stem + "*.trace.json"))[0]
    report = subprocess.run([profagent_cli(context), "report", "--summary", ",".join(folded), trace_path],
                            capture_output=True, text=True, check=False, timeout=120)
    C.expect(report.returncode == 0, f"profagent report failed: {report.stderr[-500:]}")
    reported = report.stdout.splitlines()[1:]  # after the trace's title
    differing = [(a, b) for a, b in zip(written, reported) if a != b]
    C.expect(len(written) == len(reported) and not differing,
             f"the folded summaries differ from `profagent report`'s ({len(written)} and {len(reported)} lines): "
             f"{differing[:3] or (written[-5:], reported[-5:])}")
    for title in rows_in:
        start = next((i for i, line in enumerate(written) if title in line), None)
        C.expect(start is not None, f"no {title} block in the summary file")
        end = next((i for i in range(start, len(written)) if not written[i].strip()), len(written))
        rules = [i for i in range(start + 1, end) if written[i].startswith("-----")]
        rows = [line for line in written[rules[1] + 1:rules[-1]] if not line.startswith("-")] if len(rules) >= 3 else []
        C.expect(rows, f"the {title} block has no rows: {written[start:end]}")
    return len(written)


def remove_trace_of_passed_check(context):
    """A streamed window's trace is tens of MB: once every check on it passed it goes (the small
    table and summary files stay); a failed check's stays to be read. PROFAGENT_TEST_KEEP_OUTPUT=1
    keeps it."""
    if not test_output.keep_output():
        for path in glob.glob(os.path.join(context.out_dir, "*.trace.json")):
            os.remove(path)


def check_streamed_run(context):
    wanted, trace = C.clean_devsim_run(context)
    streamed = trace.document.get("profagent_streamed")
    C.expect(streamed is not None, "the trace has no profagent_streamed key: the window was not streamed")
    C.expect(streamed["segments"] >= 2, f"only {streamed['segments']} segments were cut")
    C.expect(streamed["host_events"] > 0, "the segments wrote no host event")
    C.expect(streamed["written_before_scope_end"] == 0, f"events written before their scope ended: {streamed}")
    C.check_device_records(trace, wanted)
    C.check_links(trace)
    C.check_driver_threads(trace)
    check_external_ids(trace, wanted)
    events = trace.document["traceEvents"]
    # One flow start and one end per id, and one correlation per call.
    starts = collections.Counter(e["id"] for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g")
    ends = collections.Counter(e["id"] for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g")
    C.expect(starts == ends and set(starts.values()) == {1}, "ac2g flows are not one start and one end per id")
    correlations = collections.Counter(e["args"].get("correlation") for e in trace.runtime)
    repeated = {c: n for c, n in correlations.items() if n > 1 and c}
    C.expect(not repeated, f"correlation ids on more than one call: {list(repeated.items())[:5]}")
    # Every call of the iterations inside a block range, 500 iterations a block.
    blocks = [r for r in trace.ranges if r["name"] == "block"]
    iterations = wanted["ranges"]["iteration"]
    threads = len({(r["pid"], r["tid"]) for r in trace.ranges if r["name"] == "iteration"})
    C.expect(len(blocks) == threads * -(-iterations // threads // 500), f"{len(blocks)} block ranges")
    in_block = Spans(trace, "block")
    inside = ("cudaMemsetAsync", "cudaMemcpyAsync", "cudaLaunchKernel", "cudaStreamSynchronize")
    outside = [c for c in trace.runtime if c["name"].startswith(inside) and in_block.around(c) is None]
    outside += [r for r in trace.ranges if r["name"] == "iteration" and in_block.around(r) is None]
    C.expect(not outside, f"{len(outside)} calls or iteration ranges outside a block range, e.g. {outside[:1]}")
    # A call inside a block range and no iteration range has the block's External id: known
    # only once the block ended, segments later.
    queries = [c for c in trace.runtime if c["name"].startswith("cudaStreamQuery")]
    C.expect(len(queries) == len(blocks), f"{len(queries)} cudaStreamQuery calls for {len(blocks)} blocks")
    for query in queries:
        block = in_block.around(query)
        C.expect(block is not None and query["args"].get("External id") == block["args"]["External id"],
                 f"cudaStreamQuery at {query['ts']}: External id {query['args'].get('External id')}, "
                 f"its block range's {block and block['args']['External id']}")
    # The head is the whole window's (written again at its end), not its first segment's.
    window = trace.document["profagent_window"]
    last_end = max(e["end_ns"] for e in trace.complete if e.get("cat") != "profagent")
    C.expect(window["end_ns"] - trace.document["baseTimeNanoseconds"] >= last_end - 1000,
             f"profagent_window ends before the last event: {window}")
    leftovers = [n for n in os.listdir(context.out_dir) if n.endswith((".partial", ".swap"))]
    C.expect(not leftovers, f"partial files left: {leftovers}")
    check_folded_table(context)
    check_folded_summaries(context, rows_in=("Device Summary", "Kernel Summary", "Memory Manipulation Summary",
                                             "UserDefined Summary"))
    remove_trace_of_passed_check(context)
    context.summary = (f"{streamed['segments']} segments, {len(trace.device)} device records, "
                       f"{len(trace.runtime)} runtime calls, {len(starts)} flows")


HOST_CATEGORIES = ("cuda_runtime", "cuda_driver", "user_annotation", "cpu_op")


def check_streamed_limits_run(context):
    """PROFAGENT_MAX_EVENTS=20000 and PROFAGENT_MIN_DURATION_US=2 on a window streamed in segments:
    the limits apply to the whole window as when it is joined whole — at most 20,000 host events
    in the trace (its segments' and its tail's together), the earliest ones, what was left out
    counted in profagent_drops (over_max_events, shorter_than_min_duration) and said on stderr,
    every kept device record still linked to its call."""
    run = context.run
    C.expect(run.returncode == 0, f"the program exited with {run.returncode}")
    C.check_last_line(context)
    trace = C.Trace(C.only_file(context.out_dir, "*.trace.json"))
    streamed = trace.document.get("profagent_streamed")
    C.expect(streamed is not None and streamed["segments"] >= 2, f"the window was not streamed: {streamed}")
    host = [e for e in trace.complete if e.get("cat") in HOST_CATEGORIES]
    drops = trace.document["profagent_drops"]
    C.expect(len(host) <= 20000, f"{len(host)} host events kept over PROFAGENT_MAX_EVENTS=20000 "
                                 f"({streamed['host_events']} by the segments, {streamed['tail_host_events']} by the tail)")
    C.expect(len(host) >= 19000, f"only {len(host)} host events kept of 20000 allowed")
    C.expect(drops["over_max_events"] > 0 and drops["shorter_than_min_duration"] > 0, f"limits not counted: {drops}")
    # The earliest are kept: the last kept call ends before the window's end by far.
    last_end = max(e["end_ns"] for e in host)
    window_end = trace.document["profagent_window"]["end_ns"] - trace.document["baseTimeNanoseconds"]
    C.expect(last_end < window_end, "a host event kept at the window's end")
    lines = C.profagent_lines(run.stderr)
    for needle in ("PROFAGENT_MAX_EVENTS", "PROFAGENT_MIN_DURATION_US"):
        C.expect(any(needle in line for line in lines), f"no stderr line names {needle}")
    C.check_links(trace)
    leftovers = [n for n in os.listdir(context.out_dir) if n.endswith((".partial", ".swap"))]
    C.expect(not leftovers, f"partial files left: {leftovers}")
    context.summary = (f"{len(host)} host events kept in {streamed['segments']} segments and the tail; "
                       f"{drops['over_max_events']} over PROFAGENT_MAX_EVENTS, {drops['shorter_than_min_duration']} "
                       f"shorter than PROFAGENT_MIN_DURATION_US")


def check_streamed_step_over_bound(context):
    """A step longer than the bound of what the folds keep waiting for its end (one 60 s step
    around 400,000 ranges, streamed): the summaries folded while it streams are given up — said
    once on stderr, named with that reason in <stem>.summary.txt's "Not computed" line, none of
    their blocks printed — and the trace is still whole."""
    run = context.run
    C.expect(run.returncode == 0, f"the program exited with {run.returncode}")
    trace = C.Trace(C.only_file(context.out_dir, "*.trace.json"))
    streamed = trace.document.get("profagent_streamed")
    C.expect(streamed is not None and streamed["segments"] >= 2, f"the window was not streamed: {streamed}")
    given_up = [line for line in C.profagent_lines(run.stderr) if "were given up" in line]
    C.expect(len(given_up) == 1, f"{len(given_up)} stderr lines say the summaries were given up")
    C.expect("waiting for its end" in given_up[0], f"the line does not say why: {given_up[0]}")
    files = glob.glob(os.path.join(context.out_dir, "*.summary.txt"))
    C.expect(len(files) == 1, f"{len(files)} summary files")
    with open(files[0], encoding="utf-8") as f:
        lines = f.read().splitlines()
    named = [line for line in lines if line.startswith(NOT_COMPUTED)]
    C.expect(len(named) == 1 and "waiting for its end" in named[0], f"the bound is not named: {named}")
    missing = named[0][len(NOT_COMPUTED):].split(" (", 1)[0].split(", ")
    asked = ["overview", "model", "kernel", "perf", "step_trace"]
    C.expect(missing == asked, f"not computed: {missing}, expected {asked}")
    blocks = [line for line in lines if "Summary" in line and line.startswith("-")]
    C.expect(not blocks, f"blocks printed from a fold given up: {blocks}")
    remove_trace_of_passed_check(context)
    context.summary = f"{streamed['segments']} segments; given up and said: {given_up[0][:120]}"


def _ms(ns_value):
    return f"{ns_value / 1e6:.3f}ms"


def expected_step_lines(trace):
    """The step lines a whole window prints under its table (exporters/summaries/step_summary.h),
    recomputed from the trace: each ProfilerStep's length and the union of every kernel, copy and
    set of the trace inside it over that length."""
    steps = sorted((e for e in trace.complete if e["name"].startswith("ProfilerStep#")),
                   key=lambda e: (e["start_ns"], int(e["name"].split("#")[1])))
    busy = []
    for start, end in sorted((e["start_ns"], e["end_ns"]) for e in trace.device):
        if end <= start:
            continue
        if busy and start <= busy[-1][1]:
            busy[-1][1] = max(busy[-1][1], end)
        else:
            busy.append([start, end])
    lines = []
    lengths = [s["end_ns"] - s["start_ns"] for s in steps]
    ends = [end for _, end in busy]
    for step, length in zip(steps, lengths):
        covered = 0
        for start, end in busy[bisect.bisect_right(ends, step["start_ns"]):]:  # the first ending after its start
            if start >= step["end_ns"]:
                break
            covered += min(end, step["end_ns"]) - max(start, step["start_ns"])
        ratio = f"{100.0 * covered / length if length else 0.0:.2f}%"
        lines.append(f"  ProfilerStep#{int(step['name'].split('#')[1]):<6d} {_ms(length):>12s} {ratio:>12s}")
    total = sum(lengths)
    head = (f"Steps: {len(steps)}  step time avg {_ms(total // len(steps))}  min {_ms(min(lengths))}  "
            f"max {_ms(max(lengths))}  total {_ms(total)}") if steps else None
    return head, lines


def check_step_lines(context, trace):
    """The step lines under a streamed window's table (<stem>.table.txt: every step; stderr, when
    the table is printed there: the brief form, with the same head line) equal those a whole
    window prints for its trace."""
    head, lines = expected_step_lines(trace)
    C.expect(head is not None, "the trace has no ProfilerStep")
    with open(C.only_file(context.out_dir, "*.table.txt"), encoding="utf-8") as f:
        written = f.read().splitlines()
    C.expect(head in written, f"the table file has no step head {head!r}: {[w for w in written if w.startswith('Steps')]}")
    got = [line for line in written if line.startswith("  ProfilerStep#")]
    differing = [(a, b) for a, b in zip(got, lines) if a != b]
    C.expect(len(got) == len(lines) and not differing,
             f"step lines differ from the trace's ({len(got)} and {len(lines)}): {differing[:3]}")
    ours = C.profagent_lines(context.run.stderr)
    if any("Self CPU time total" in line for line in ours):  # the window's table was printed
        C.expect(any(line.endswith(head) for line in ours), "stderr's table has no step head")
    return len(lines)


def check_streamed_steps_run(context):
    """Four threads streamed with a step at each cudaStreamSynchronize (about 9 records a step, on
    four threads, the main thread idle once they run): every summary folded while it streamed,
    also those made step by step (Overview, Model, Distributed, Perf, step trace), equals
    `profagent report`'s of its trace, and the step lines under the table equal the trace's."""
    run = context.run
    C.expect(run.returncode == 0, f"the program exited with {run.returncode}")
    trace = C.Trace(C.only_file(context.out_dir, "*.trace.json"))
    streamed = trace.document.get("profagent_streamed")
    C.expect(streamed is not None and streamed["segments"] >= 2, f"the window was not streamed: {streamed}")
    lines = check_folded_summaries(context, rows_in=("Kernel Summary", "Model Summary"), with_steps=True)
    steps = check_step_lines(context, trace)
    remove_trace_of_passed_check(context)
    context.summary = f"{streamed['segments']} segments; {lines} summary lines equal to the report's, {steps} step lines"


def check_streamed_laggard_run(context):
    """streamed_laggard (tests/preload/programs/streamed_laggard.cu): a thread's first-step
    kernel and copy stay in its buffer while it waits and the main thread's steps are streamed.
    Every summary folded while it streamed, the per-step ones included (they wait for that
    thread by the collector's marks instead of giving up), equals `profagent report`'s of its
    trace; the laggard's first kernel is in the first step and its second in the last ones."""
    run = context.run
    C.expect(run.returncode == 0, f"the program exited with {run.returncode}")
    trace = C.Trace(C.only_file(context.out_dir, "*.trace.json"))
    streamed = trace.document.get("profagent_streamed")
    C.expect(streamed is not None and streamed["segments"] >= 2, f"the window was not streamed: {streamed}")
    steps = sorted((e for e in trace.complete if e["name"].startswith("ProfilerStep#")), key=lambda e: e["start_ns"])
    C.expect(len(steps) >= 1000, f"{len(steps)} steps, expected one per iteration")
    laggard = sorted((r for r in trace.ranges if r["name"] == "laggard"), key=lambda r: r["start_ns"])
    C.expect(len(laggard) == 2, f"{len(laggard)} laggard ranges, expected 2")
    C.expect(steps[0]["start_ns"] <= laggard[0]["start_ns"] < steps[0]["end_ns"],
             f"the laggard's first range is not in the first step: {laggard[0]['start_ns']} against {steps[0]}")
    C.expect(laggard[1]["start_ns"] >= steps[-2]["start_ns"],
             f"the laggard's second range is not in the last steps: {laggard[1]['start_ns']} against {steps[-2]}")
    lines = check_folded_summaries(context, rows_in=("Kernel Summary", "Model Summary"), with_steps=True)
    remove_trace_of_passed_check(context)
    context.summary = f"{streamed['segments']} segments, {len(steps)} steps; {lines} summary lines equal to the report's"


def check_streamed_windows_run(context):
    """Step windows back to back (PROFAGENT_WAIT=0, ACTIVE steps each, REPEAT of them), each long
    enough to be streamed: a window's segments start only once the streamed window before it is
    exported (its traces, folds and stacks are the agent's one window at a time), and the events
    the cut between two windows carries to the next are joined by its first segment. Every window
    is written whole: its trace holds its ACTIVE steps, numbered on from the previous window's;
    at least two of them were streamed; the summaries of each streamed window, per-step ones
    included (never given up), equal `profagent report`'s of its trace."""
    run = context.run
    C.expect(run.returncode == 0, f"the program exited with {run.returncode}")
    env = dict(a.split("=", 1) for a in run.command if a.startswith("PROFAGENT_"))
    active, repeat = int(env["PROFAGENT_ACTIVE"]), int(env["PROFAGENT_REPEAT"])
    said = C.profagent_lines(run.stderr)
    wrong = [line for line in said if "missing" in line or "given up" in line or "wrote nothing" in line]
    C.expect(not wrong, f"a window was not written whole: {wrong[:2]}")
    traces = sorted(glob.glob(os.path.join(context.out_dir, "*.trace.json")),
                    key=lambda p: int(os.path.basename(p).split(".w")[1].split(".")[0]))
    C.expect(len(traces) == repeat, f"{len(traces)} traces for {repeat} windows")
    streamed, lines = 0, 0
    for number, path in enumerate(traces):
        trace = C.Trace(path)
        steps = sorted(int(e["name"].split("#")[1]) for e in trace.complete if e["name"].startswith("ProfilerStep#"))
        C.expect(steps == list(range(number * active, (number + 1) * active)),
                 f"{os.path.basename(path)}: steps {steps[:2]}..{steps[-2:]} ({len(steps)}), expected {active} "
                 f"from {number * active}")
        if trace.document.get("profagent_streamed"):
            streamed += 1
            stem = os.path.basename(path).split(".steps")[0] + "."
            lines += check_folded_summaries(context, rows_in=("Kernel Summary", "Model Summary"), with_steps=True,
                                            stem=stem)
    C.expect(streamed >= 2, f"{streamed} of {repeat} windows were streamed")
    leftovers = [n for n in os.listdir(context.out_dir) if n.endswith((".partial", ".swap"))]
    C.expect(not leftovers, f"partial files left: {leftovers}")
    remove_trace_of_passed_check(context)
    context.summary = f"{streamed} of {repeat} windows streamed; {lines} summary lines equal to the report's"
