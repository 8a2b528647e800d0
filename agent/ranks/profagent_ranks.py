#!/usr/bin/python3
"""Cross-rank analysis of a folder of per-rank traces: `profagent report --ranks DIR`,
`profagent report --dask tcp://SCHEDULER DIR` and `profagent merge DIR`.

The input of each rank is the per-rank table the agent writes next to its summaries
(<stem>.rank.ndjson: its Distributed Summary, steps and one row per collective kernel; see
exporters/rank_table.h), kilobytes per rank. Traces without one (torch.profiler's) are read
whole and the same figures taken from their kernels.

One definition, two ways to run it: rank_partial() reads one rank's input and returns a small
partial (that rank's figures and one row per collective); combine() merges two partials and is
associative, so the partials reduce in any order and grouping — one by one here (memory does
not grow with the number of ranks: one trace is held at a time, the combined partial grows only
with the number of collectives), or as a tree on a Dask cluster (dask_report()). report_text()
prints the result.

Python entry point:  import profagent_ranks; r = profagent_ranks.analyse(paths, scheduler=None)
"""
import glob
import json
import os
import sys

COMM_PREFIXES = ("nccl", "ncclDevKernel", "ncclKernel")


def is_comm_kernel(name):
    return name.startswith("nccl")  # HTA's communication pattern starts the same way


def union_length(intervals):
    """Total length of the union of [start, end) intervals, and the merged intervals."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return sum(e - s for s, e in merged), merged


def intersection_length(a, b):
    """Length of the intersection of two sorted lists of disjoint intervals."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def trace_paths(folder):
    paths = sorted(glob.glob(os.path.join(folder, "*.trace.json")) + glob.glob(os.path.join(folder, "*.trace.json.gz")))
    return [p for p in paths if not os.path.basename(p).startswith("merged.")]  # profagent merge's output


def rank_inputs(folder):
    """Each window's rank table where the agent wrote one, else its trace."""
    inputs = []
    for trace in trace_paths(folder):
        stem = trace[:trace.rindex(".trace.json")]
        inputs.append(stem + ".rank.ndjson" if os.path.exists(stem + ".rank.ndjson") else trace)
    return inputs


def trace_of_table(path):
    """The trace beside a rank table (the window's <stem>.trace.json or .trace.json.gz)."""
    stem = path[:-len(".rank.ndjson")]
    return next((stem + s for s in (".trace.json", ".trace.json.gz") if os.path.exists(stem + s)), None)


def table_partial(path):
    """One rank's figures from its rank table (exporters/rank_table.h). A streamed window
    without steps has no Distributed Summary in it ("distributed": null): that rank's figures
    come from its trace then, said in one line."""
    with open(path) as f:
        t = json.load(f)
    if t.get("distributed") is None:
        trace = trace_of_table(path)
        why = t.get("distributed_not_computed", "not computed")
        if trace is None:
            raise SystemExit(f"profagent: {os.path.basename(path)} has no Distributed Summary ({why}) and no trace beside it")
        print(f"[profagent] {os.path.basename(path)}: no Distributed Summary in it ({why}): its trace is read instead",
              file=sys.stderr)
        return rank_partial(trace)
    rank = int(t["rank"])
    rows, arrivals = {}, {}
    for hash_, seq, name, size, _enqueue, start, end in t["collectives"]:
        rows[f"{hash_}:{seq}"] = {"name": name, "bytes": size, "first": start, "first_rank": rank, "last": start,
                                  "last_rank": rank, "transfer": end - start, "end_min": end, "end_max": end, "ranks": 1}
        total, count = arrivals.get(str(hash_), (0, 0))
        arrivals[str(hash_)] = (total + start, count + 1)
    d = t["distributed"]
    return {"world_size": int(t["world_size"]),
            "ranks": {str(rank): {"file": os.path.basename(path), "comm_ns": d["communication_ns"],
                                  "comp_ns": d["computation_ns"], "overlap_ns": d["overlap_ns"],
                                  "steps": step_figures({n: e - s for n, s, e in t["steps"]}),
                                  "arrivals": {h: list(v) for h, v in arrivals.items()}}},
            "collectives": rows}


def load(path):
    if path.endswith(".gz"):
        import gzip
        with gzip.open(path, "rt") as f:
            return json.load(f)
    with open(path) as f:
        return json.load(f)


def rank_partial(path):
    """One rank's figures from its rank table or, without one, its trace (ns on the shared
    clock: base time + ts)."""
    if path.endswith(".rank.ndjson"):
        return table_partial(path)
    trace = load(path)
    info = trace.get("distributedInfo", {})
    base = int(trace.get("baseTimeNanoseconds", 0))
    comm, comp, steps, rows = [], [], {}, {}
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X":
            continue
        start = base + round(float(e["ts"]) * 1000)
        end = start + round(float(e.get("dur", 0)) * 1000)
        cat, name = e.get("cat", ""), e.get("name", "")
        if cat == "kernel":
            (comm if is_comm_kernel(name) else comp).append((start, end))
            args = e.get("args", {})
            if is_comm_kernel(name) and "Comm hash" in args:
                key = f'{args["Comm hash"]}:{args["Seq"]}'
                rows[key] = {"name": args.get("Collective name", name), "bytes": args.get("bytes", 0),
                             "first": start, "first_rank": info.get("rank", 0), "last": start,
                             "last_rank": info.get("rank", 0), "transfer": end - start, "end_min": end,
                             "end_max": end, "ranks": 1}
        elif name.startswith("ProfilerStep#"):
            steps[int(name[len("ProfilerStep#"):])] = end - start
    comm_ns, comm_merged = union_length(comm)
    comp_ns, comp_merged = union_length(comp)
    rank = int(info.get("rank", 0))
    arrivals = {}
    for key, row in rows.items():
        hash_ = key.split(":")[0]
        total, count = arrivals.get(hash_, (0, 0))
        arrivals[hash_] = (total + row["first"], count + 1)
    return {"world_size": int(info.get("world_size", 1)),
            "ranks": {str(rank): {"file": os.path.basename(path), "comm_ns": comm_ns, "comp_ns": comp_ns,
                                  "overlap_ns": intersection_length(comm_merged, comp_merged),
                                  "steps": step_figures(steps),
                                  "arrivals": {h: list(v) for h, v in arrivals.items()}}},
            "collectives": rows}


def step_figures(durations):
    """A rank's steps in constant room: numbers as ranges [first, last], and the sum, maximum and
    count of their times (a partial must not grow with the steps times the ranks)."""
    return {"ranges": to_ranges(durations), "sum": sum(durations.values()),
            "max": max(durations.values(), default=0), "count": len(durations)}


def to_ranges(numbers):
    ranges = []
    for n in sorted(numbers):
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    return ranges


def range_numbers(ranges):
    for first, last in ranges:
        yield from range(first, last + 1)


def combine_steps(a, b):
    return {"ranges": to_ranges(set(range_numbers(a["ranges"])) | set(range_numbers(b["ranges"]))),
            "sum": a["sum"] + b["sum"], "max": max(a["max"], b["max"]), "count": a["count"] + b["count"]}


def combine_row(a, b):
    out = dict(a)
    if b["first"] < a["first"]:
        out["first"], out["first_rank"] = b["first"], b["first_rank"]
    if b["last"] > a["last"]:
        out["last"], out["last_rank"] = b["last"], b["last_rank"]
    out["transfer"] = min(a["transfer"], b["transfer"])  # the last rank's kernel does not wait
    out["end_min"], out["end_max"] = min(a["end_min"], b["end_min"]), max(a["end_max"], b["end_max"])
    out["ranks"] = a["ranks"] + b["ranks"]
    return out


def combine_rank(a, b):
    arrivals = {h: list(v) for h, v in a["arrivals"].items()}
    for h, (total, count) in b["arrivals"].items():
        old = arrivals.get(h, [0, 0])
        arrivals[h] = [old[0] + total, old[1] + count]
    return {"file": a["file"] + "," + b["file"], "comm_ns": a["comm_ns"] + b["comm_ns"],
            "comp_ns": a["comp_ns"] + b["comp_ns"], "overlap_ns": a["overlap_ns"] + b["overlap_ns"],
            "steps": combine_steps(a["steps"], b["steps"]), "arrivals": arrivals}


def combine(a, b):
    """Associative merge of two partials (either may be None)."""
    if a is None:
        return b
    if b is None:
        return a
    rows = dict(a["collectives"])
    for key, row in b["collectives"].items():
        rows[key] = combine_row(rows[key], row) if key in rows else row
    ranks = dict(a["ranks"])
    for rank, entry in b["ranks"].items():  # two windows of one rank add up
        ranks[rank] = combine_rank(ranks[rank], entry) if rank in ranks else entry
    return {"world_size": max(a["world_size"], b["world_size"]), "ranks": ranks, "collectives": rows}


def finish(partial):
    """The cross-rank report from the fully combined partial."""
    rows = partial["collectives"]
    last_sum = {}
    for key, row in rows.items():
        hash_ = key.split(":")[0]
        total, count = last_sum.get(hash_, (0, 0))
        last_sum[hash_] = (total + row["last"], count + 1)
    per_rank = {}
    for rank, r in sorted(partial["ranks"].items(), key=lambda kv: int(kv[0])):
        wait, complete = 0, True
        for hash_, (arrived, count) in r["arrivals"].items():
            lasts, n = last_sum[hash_]
            complete &= n == count
            wait += lasts - arrived
        steps = r["steps"]
        per_rank[int(rank)] = {
            "file": r["file"], "comm_ms": r["comm_ns"] / 1e6, "comp_ms": r["comp_ns"] / 1e6,
            "overlap_ms": r["overlap_ns"] / 1e6,
            "overlap_pct_of_comm": 100.0 * r["overlap_ns"] / r["comm_ns"] if r["comm_ns"] else 0.0,
            "wait_ms": wait / 1e6, "wait_complete": complete, "step_ranges": steps["ranges"],
            "step_count": steps["count"], "step_mean_ms": steps["sum"] / steps["count"] / 1e6 if steps["count"] else 0.0,
            "step_max_ms": steps["max"] / 1e6}
    world = partial["world_size"]
    all_steps = None  # the union of the ranks' step ranges
    for v in per_rank.values():
        all_steps = v["step_ranges"] if all_steps is None else combine_steps(
            {"ranges": all_steps, "sum": 0, "max": 0, "count": 0}, {"ranges": v["step_ranges"], "sum": 0, "max": 0, "count": 0})["ranges"]
    all_steps = all_steps or []
    last_counts = {}
    for row in rows.values():
        last_counts[row["last_rank"]] = last_counts.get(row["last_rank"], 0) + 1
    stragglers = sorted(({"collective": k, "name": r["name"], "bytes": r["bytes"], "last_rank": r["last_rank"],
                          "skew_ms": (r["last"] - r["first"]) / 1e6, "transfer_ms": r["transfer"] / 1e6,
                          "ranks": r["ranks"]} for k, r in rows.items()), key=lambda s: -s["skew_ms"])
    straggler = max(last_counts, key=last_counts.get) if last_counts else None
    means = {r: v["step_mean_ms"] for r, v in per_rank.items() if v["step_count"]}
    spread = {"fastest_rank": min(means, key=means.get), "slowest_rank": max(means, key=means.get),
              "spread_ms": max(means.values()) - min(means.values())} if means else None
    return {"world_size": world, "ranks": per_rank,
            "missing_ranks": [r for r in range(world) if r not in per_rank],
            "ranks_missing_steps": {r: to_ranges(set(range_numbers(all_steps)) - set(range_numbers(v["step_ranges"])))
                                    for r, v in per_rank.items() if v["step_ranges"] != all_steps},
            "collectives": len(rows), "straggler": straggler, "step_time_spread": spread,
            "straggler_last_in": last_counts.get(straggler, 0),
            "others_wait_ms": sum(v["wait_ms"] for r, v in per_rank.items() if r != straggler),
            "stragglers": stragglers}


def analyse(paths, scheduler=None):
    if scheduler:
        return dask_report(paths, scheduler)
    return finish(chunk_partial(paths) or {"world_size": 0, "ranks": {}, "collectives": {}})  # one rank at a time


def chunk_partial(paths):
    """The combined partial of several ranks, one after the other (one task of the cluster)."""
    combined = None
    for path in paths:
        combined = combine(combined, rank_partial(path))
    return combined


def dask_report(paths, scheduler):
    """Maps chunk_partial over chunks of the paths on the cluster and reduces the partials
    there as a tree; only the final partial comes back to the client. Chunks of about 16 ranks
    keep the per-task overhead of the scheduler (milliseconds) below the work of a task."""
    from distributed import Client
    with Client(scheduler) as client:
        workers = max(1, len(client.scheduler_info()["workers"]))
        size = max(1, min(16, len(paths) // (4 * workers)))
        futures = client.map(chunk_partial, [paths[i:i + size] for i in range(0, len(paths), size)])
        while len(futures) > 1:
            pairs = [client.submit(combine, futures[i], futures[i + 1]) for i in range(0, len(futures) - 1, 2)]
            futures = pairs + ([futures[-1]] if len(futures) % 2 else [])
        combined = futures[0].result() if futures else None
    return finish(combined or {"world_size": 0, "ranks": {}, "collectives": {}})


def report_text(r, top=10):
    out = [f"Cross-rank summary: {len(r['ranks'])} of {r['world_size']} ranks, {r['collectives']} collectives"]
    if r["missing_ranks"]:
        out.append(f"missing ranks (no trace): {', '.join(map(str, r['missing_ranks']))}")
    for rank, steps in sorted(r["ranks_missing_steps"].items()):
        out.append(f"rank {rank} is missing steps: {', '.join(f'{a}' if a == b else f'{a}-{b}' for a, b in steps)}")
    out.append("")
    out.append(f"{'rank':>5} {'comm ms':>10} {'comp ms':>10} {'overlap ms':>11} {'overlap %comm':>14} "
               f"{'wait ms':>10} {'steps':>6} {'step mean ms':>13} {'step max ms':>12}")
    for rank, v in sorted(r["ranks"].items()):
        out.append(f"{rank:>5} {v['comm_ms']:>10.3f} {v['comp_ms']:>10.3f} {v['overlap_ms']:>11.3f} "
                   f"{v['overlap_pct_of_comm']:>13.1f}% {v['wait_ms']:>10.3f} {v['step_count']:>6} "
                   f"{v['step_mean_ms']:>13.3f} {v['step_max_ms']:>12.3f}")
    spread = r["step_time_spread"]
    if spread:
        out.append(f"step time spread across ranks: {spread['spread_ms']:.3f} ms between the mean steps of rank "
                   f"{spread['fastest_rank']} (fastest) and rank {spread['slowest_rank']} (slowest)")
    if r["straggler"] is not None:
        out.append("")
        out.append(f"straggler: rank {r['straggler']} arrived last in {r['straggler_last_in']} of "
                   f"{r['collectives']} collectives; the other ranks waited {r['others_wait_ms']:.3f} ms for it in all")
        out.append(f"{'collective':>24} {'name':>12} {'bytes':>10} {'last rank':>9} {'skew ms':>9} {'transfer ms':>12}")
        for s in r["stragglers"][:top]:
            out.append(f"{s['collective']:>24} {s['name']:>12} {s['bytes']:>10} {s['last_rank']:>9} "
                       f"{s['skew_ms']:>9.3f} {s['transfer_ms']:>12.3f}")
    return "\n".join(out) + "\n"


def main(argv):
    import argparse
    p = argparse.ArgumentParser(prog="profagent report --ranks", description=__doc__.split("\n\n")[0])
    p.add_argument("folder")
    p.add_argument("--dask", metavar="tcp://SCHEDULER")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--traces", action="store_true", help="read the traces even where rank tables exist")
    a = p.parse_args(argv)
    paths = trace_paths(a.folder) if a.traces else rank_inputs(a.folder)
    if not paths:
        print(f"profagent: no *.trace.json in {a.folder}", file=sys.stderr)
        return 2
    r = analyse(paths, a.dask)
    sys.stdout.write(json.dumps(r, indent=1, sort_keys=True) + "\n" if a.format == "json" else report_text(r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
