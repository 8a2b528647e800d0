"""Trace checks for programs that launch CUDA graphs (tests/workloads/graph_branches.cu)."""
import collections
import json
import os
import subprocess

from checkers import Trace, check_workload_unchanged, expect, ns, only_file


def check_graph_launches_linked(context):
    """As workload_unchanged, and every kernel of a graph launch is linked (ac2g flow and
    correlation) to its cudaGraphLaunch call, carries its graph and node ids, and each launch
    ran the same nodes."""
    check_workload_unchanged(context)
    trace = Trace(only_file(context.out_dir, "*.trace.json"))
    launches = {e["args"]["correlation"]: e for e in trace.runtime if e["name"].startswith("cudaGraphLaunch")}
    expect(launches, "no cudaGraphLaunch in the trace")
    kernels = [e for e in trace.device if e.get("cat") == "kernel"]
    nodes_per_launch = collections.defaultdict(set)
    for k in kernels:
        args = k.get("args", {})
        corr = args.get("correlation")
        expect(corr in launches, f"kernel {k['name']} has correlation {corr}, no cudaGraphLaunch's")
        launcher = trace.launcher(k)
        expect(launcher is not None and launcher["name"].startswith("cudaGraphLaunch"),
               f"kernel {k['name']} is not linked by a flow to its cudaGraphLaunch")
        expect(args.get("graph id", 0) > 0 and args.get("graph node id", 0) > 0,
               f"kernel {k['name']} lacks its graph or node id: {args}")
        nodes_per_launch[corr].add(args["graph node id"])
    node_sets = {frozenset(v) for v in nodes_per_launch.values()}
    expect(len(nodes_per_launch) == len(launches) and len(node_sets) == 1,
           f"the {len(launches)} launches ran different kernel nodes: {sorted(map(sorted, node_sets))}")
    context.summary += (f"; {len(kernels)} graph kernels linked to {len(launches)} cudaGraphLaunch calls, "
                        f"{len(next(iter(node_sets)))} nodes each")


def flow_ids_unique(trace):
    """Chromium's trace viewer keeps one ac2g arrow per id: each id must have exactly one `s` and
    one `f`. Returns the number of arrows."""
    events = trace.document["traceEvents"]
    starts = collections.Counter(e["id"] for e in events if e.get("ph") == "s" and e.get("cat") == "ac2g")
    ends = collections.Counter(e["id"] for e in events if e.get("ph") == "f" and e.get("cat") == "ac2g")
    shared = sorted(i for i, n in (starts + ends).items() if n != 2 or starts[i] != 1)
    expect(not shared, f"{len(shared)} flow ids without exactly one start and one end, e.g. {shared[:5]}")
    return len(starts)


def profagent_cli(command):
    """The `profagent` command next to the preloaded library (the build tree is laid out like the
    install tree: lib/libprofagent.so, bin/profagent)."""
    preload = next(a for a in command if a.startswith("LD_PRELOAD=")).split("=", 1)[1]
    return os.path.join(os.path.dirname(os.path.dirname(preload)), "bin", "profagent")


def check_report_rows(context, rows):
    """`profagent report` of the trace prints the same per-graph rows as the agent's table."""
    trace_path = only_file(context.out_dir, "*.trace.json")
    # The GPU acceptance script names its bundle's CLI; a preload test's is next to the library.
    cli = getattr(context, "profagent_cli", None) or profagent_cli(context.run.command)
    report = subprocess.run([cli, "report", "--summary", "key_averages",
                             "--format", "json", trace_path], capture_output=True, text=True, check=False)
    expect(report.returncode == 0, f"profagent report failed: {report.stderr[-500:]}")
    table = json.loads(report.stdout)["traces"][0]["summaries"]["key_averages"]
    graph_rows = {r["name"]: r for r in table["rows"] if r["name"].startswith("cudaGraphLaunch (graph ")}
    wanted = {name: r for name, r in rows.items() if name.startswith("cudaGraphLaunch (graph ")}
    keys = ("count", "cuda_total_ns", "cpu_total_ns")
    expect({n: [r[k] for k in keys] for n, r in graph_rows.items()} == {n: [r[k] for k in keys] for n, r in wanted.items()},
           f"profagent report's graph rows {graph_rows} differ from the agent's {wanted}")


def check_graph_capture_attributed(context):
    """graph_capture_app: N x nodes replayed records per graph, each linked by its own arrow to
    the cudaGraphLaunch that replayed it, with its graph and node ids, and the External id of the
    range open when its node was made (a captured launch, copy or set, or cudaGraphAdd*Node) —
    never the "replay" range around the launch. The table has a row per graph, recomputed."""
    from checkers import check_last_line, check_table, expected_counts, summary_rows
    run = context.run
    expect(run.returncode == 0, f"the program exited with {run.returncode}: {run.stdout[-500:]}")
    wanted = expected_counts(run.stdout)
    check_last_line(context)
    trace = Trace(only_file(context.out_dir, "*.trace.json"))
    ranges = {}
    for r in trace.ranges:
        if r["name"] != "replay":
            expect(r["name"] not in ranges, f"range {r['name']!r} recorded twice")
        ranges[r["name"]] = r["args"]["External id"]
    expect({"capture", "layer_kernel", "layer_copy", "explicit_build", "replay"} <= set(ranges),
           f"ranges missing: {sorted(ranges)}")
    replay_ranges = sorted(r["args"]["External id"] for r in trace.ranges if r["name"] == "replay")
    launches = sorted((e for e in trace.runtime if e["name"].startswith("cudaGraphLaunch")), key=lambda e: e["start_ns"])
    n, m = wanted["captured_replays"], wanted["built_replays"]
    expect(len(launches) == n + m, f"{len(launches)} cudaGraphLaunch calls, the program made {n + m}")
    graphs = [("captured", launches[:n], wanted["captured_nodes"],
               {"kernel": ranges["layer_kernel"], "gpu_memcpy": ranges["layer_copy"], "gpu_memset": ranges["layer_copy"]}),
              ("built", launches[n:], wanted["built_nodes"],
               {"kernel": ranges["explicit_build"], "gpu_memset": ranges["explicit_build"]})]
    by_launch = collections.defaultdict(list)
    for d in trace.device:
        launcher = trace.launcher(d)
        expect(launcher is not None, f"{d['cat']} {d['name']} at {d['ts']} is linked to no call by an ac2g flow")
        by_launch[id(launcher)].append(d)
    graph_ids = set()
    for what, calls, nodes, owner in graphs:
        node_sets, ids = set(), set()
        for call in calls:
            records = by_launch[id(call)]
            expect(len(records) == nodes, f"a {what} graph launch has {len(records)} device records, the graph {nodes} nodes")
            for d in records:
                args = d["args"]
                expect(args.get("correlation") == call["args"]["correlation"],
                       f"{d['name']}: correlation {args.get('correlation')}, its launch's {call['args']['correlation']}")
                expect(args.get("External id") == owner[d["cat"]],
                       f"{what} graph's {d['cat']} {d['name']}: External id {args.get('External id')}, the range open "
                       f"at its capture has {owner[d['cat']]} (the replay ranges': {replay_ranges})")
                ids.add(args.get("graph id", 0))
            node_sets.add(frozenset(d["args"].get("graph node id", 0) for d in records))
        expect(len(ids) == 1 and 0 not in ids, f"the {what} graph's records carry graph ids {sorted(ids)}")
        expect(len(node_sets) == 1 and 0 not in next(iter(node_sets)) and len(next(iter(node_sets))) == nodes,
               f"the {what} graph's launches ran node ids {sorted(map(sorted, node_sets))}")
        graph_ids |= ids
    expect(len(graph_ids) == 2, f"the two graphs share a graph id: {graph_ids}")
    arrows = flow_ids_unique(trace)
    at_launches = {(c["pid"], c["tid"], c["start_ns"]) for c in launches}
    from_launches = sum(1 for e in trace.document["traceEvents"] if e.get("ph") == "s" and e.get("cat") == "ac2g"
                        and (e["pid"], e["tid"], ns(e["ts"])) in at_launches)
    replayed = n * wanted["captured_nodes"] + m * wanted["built_nodes"]
    expect(from_launches == len(trace.device) == replayed,
           f"{from_launches} arrows start at the launches for {len(trace.device)} device records, {replayed} replayed")
    summary = summary_rows(context.out_dir)
    rows = {r["name"]: r for r in summary["rows"]}
    for what, calls, _, _ in graphs:
        graph = by_launch[id(calls[0])][0]["args"]["graph id"]
        row = rows.get(f"{calls[0]['name']} (graph {graph})")
        expect(row is not None and row["count"] == len(calls), f"no row of {len(calls)} launches for the {what} graph {graph}")
        device = sum(d["end_ns"] - d["start_ns"] for c in calls for d in by_launch[id(c)])
        expect(row["cuda_total_ns"] == device, f"the {what} graph's row: CUDA total {row['cuda_total_ns']}, replays {device} ns")
    check_report_rows(context, rows)
    checked = check_table(trace, summary)
    drops = trace.document.get("profagent_drops", {})
    expect(drops.get("graph_replays_without_capture") == 0, f"profagent_drops: {drops}")
    context.summary = (f"{replayed} replayed records of {n + m} launches attributed to their capture ranges, "
                       f"{from_launches} of {arrows} arrows from graph launches, ids of their own, {checked} table rows recomputed")


def window_traces(out_dir):
    """The run's traces by window number."""
    import glob
    import re
    traces = {}
    for path in glob.glob(os.path.join(out_dir, "**", "*.trace.json"), recursive=True):
        traces[int(re.search(r"\.w(\d+)\.", os.path.basename(path)).group(1))] = Trace(path)
    return [traces[w] for w in sorted(traces)]


def replayed(trace):
    return [d for d in trace.device if d["args"].get("graph node id", 0)]


def check_graph_capture_windows(context):
    """graph_capture_app with a window per step (steps at the "capture" and "replay" ranges):
    the graphs are made in window 1, replayed in windows 2 and 3, whose replayed records carry
    the External ids of window 1's ranges: the capture-time map outlives its window."""
    from checkers import check_last_line, expected_counts
    run = context.run
    expect(run.returncode == 0, f"the program exited with {run.returncode}")
    wanted = expected_counts(run.stdout)
    check_last_line(context)
    windows = window_traces(context.out_dir)
    expect(len(windows) == 3, f"{len(windows)} windows written, 3 expected (capture, two replays)")
    made = {r["name"]: r["args"].get("External id") for r in windows[0].ranges}
    expect({"layer_kernel", "layer_copy", "explicit_build"} <= set(made), f"window 1's ranges: {sorted(made)}")
    expect(not replayed(windows[0]), "window 1 has replayed records")
    owners = [({"kernel": made["layer_kernel"], "gpu_memcpy": made["layer_copy"], "gpu_memset": made["layer_copy"]},
               wanted["captured_replays"] * wanted["captured_nodes"]),
              ({"kernel": made["explicit_build"], "gpu_memset": made["explicit_build"]},
               wanted["built_replays"] * wanted["built_nodes"])]
    for number, (trace, (owner, count)) in enumerate(zip(windows[1:], owners), start=2):
        records = replayed(trace)
        expect(len(records) == count, f"window {number}: {len(records)} replayed records, {count} expected")
        wrong = [(d["name"], d["args"].get("External id")) for d in records if d["args"].get("External id") != owner[d["cat"]]]
        expect(not wrong, f"window {number}: records not attributed to window 1's ranges {owner}: {wrong[:3]}")
        drops = trace.document["profagent_drops"]
        expect(drops["graph_replays_without_capture"] == 0, f"window {number}: {drops}")
    context.summary = f"{sum(c for _, c in owners)} records replayed in windows 2-3 attributed to window 1's ranges"


def check_graph_capture_not_recorded(context):
    """The graphs made in a step nothing recorded: their replays keep their cudaGraphLaunch's
    External id, counted per window and said once."""
    from checkers import check_last_line, expected_counts, profagent_lines
    run = context.run
    expect(run.returncode == 0, f"the program exited with {run.returncode}")
    wanted = expected_counts(run.stdout)
    check_last_line(context)
    windows = window_traces(context.out_dir)
    expect(len(windows) == 2, f"{len(windows)} windows written, 2 expected (the two replays)")
    counts = [wanted["captured_replays"] * wanted["captured_nodes"], wanted["built_replays"] * wanted["built_nodes"]]
    for number, (trace, count) in enumerate(zip(windows, counts), start=1):
        records = replayed(trace)
        expect(len(records) == count, f"window {number}: {len(records)} replayed records, {count} expected")
        for d in records:
            launch = trace.launcher(d)
            expect(launch is not None and launch["name"].startswith("cudaGraphLaunch"), f"{d['name']} is not linked to its launch")
            expect(d["args"].get("External id") == launch["args"]["External id"],
                   f"window {number}: {d['name']} has External id {d['args'].get('External id')}, its launch "
                   f"{launch['args']['External id']}")
        drops = trace.document["profagent_drops"]
        expect(drops["graph_replays_without_capture"] == count, f"window {number}: {count} unattributed, drops {drops}")
    said = [line for line in profagent_lines(run.stderr) if "graph_replays_without_capture" in line]
    expect(len(said) == 1, f"the unattributed replays said {len(said)} times: {said}")
    context.summary = f"{sum(counts)} replays of graphs made while nothing was recorded counted, said once"
