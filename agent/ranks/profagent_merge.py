#!/usr/bin/python3
"""`profagent merge DIR [-o OUT]`: the per-rank traces of DIR as one Chrome/Perfetto trace, a
process group per rank (process names prefixed "rank N"), on one time base.

Clocks: ranks of one host share the clock their traces are written on (baseTimeNanoseconds +
ts), so they are placed as written. Ranks of other hosts are shifted so that their collective
kernels end when rank 0's do (the median difference over the collectives both ran, matched by
communicator hash and sequence number): the last rank to arrive releases every rank at once,
so ends coincide however the clocks differ. The offsets applied are written into the trace
(`rankClockOffsetsNs`). One rank's trace is held in memory at a time; the output is streamed.
"""
import json
import os
import re
import socket
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profagent_ranks  # noqa: E402


def host_of(path):
    return os.path.basename(path).split(".")[0]


def rank_of_name(path):
    """The rank in the file name (<host>.<pid>.r<rank>.…), 0 without one."""
    match = re.search(r"\.r(\d+)\.", os.path.basename(path))
    return int(match.group(1)) if match else 0


def collective_ends(trace):
    base = int(trace.get("baseTimeNanoseconds", 0))
    ends = {}
    for e in trace.get("traceEvents", []):
        args = e.get("args", {})
        if e.get("ph") == "X" and e.get("cat") == "kernel" and "Comm hash" in args:
            ends[(args["Comm hash"], args["Seq"])] = base + round((e["ts"] + e.get("dur", 0)) * 1000)
    return ends


def offsets(paths):
    """Per path, ns to add to its times; 0 for every rank on the first path's host."""
    reference, ref_host, result = None, None, {}
    for path in paths:
        trace = profagent_ranks.load(path)
        if reference is None:
            reference, ref_host = collective_ends(trace), host_of(path)
        if host_of(path) == ref_host:
            result[path] = 0
            continue
        ends = collective_ends(trace)
        diffs = [reference[k] - ends[k] for k in ends.keys() & reference.keys()]
        result[path] = int(statistics.median(diffs)) if diffs else 0
    return result


def merge(paths, out):
    shifts = offsets(paths)
    bases = {}
    for path in paths:  # base times only: a light second look would need a streaming parser
        bases[path] = int(profagent_ranks.load(path).get("baseTimeNanoseconds", 0)) + shifts[path]
    base = min(bases.values()) if bases else 0
    ranks = {}
    out.write('{\n  "schemaVersion": 1,\n  "displayTimeUnit": "ms",\n')
    out.write(f'  "baseTimeNanoseconds": {base},\n  "traceEvents": [\n')
    first = True
    for index, path in enumerate(paths):
        trace = profagent_ranks.load(path)
        rank = int(trace.get("distributedInfo", {}).get("rank", index))
        ranks[rank] = {"file": os.path.basename(path), "clock_offset_ns": shifts[path]}
        shift_us = (bases[path] - base) / 1000.0
        pids = {}
        for e in trace.get("traceEvents", []):
            pid = e.get("pid")
            if pid not in pids:  # each rank's processes and devices get their own pids
                pids[pid] = (rank + 1) * 1_000_000 + len(pids)
            e = dict(e)
            e["pid"] = pids[pid]
            if e.get("ph") in ("s", "f", "t") and "id" in e:
                e["id"] = f"r{rank}.{e['id']}"  # flow ids are per file: keep ranks' arrows apart
            if "ts" in e:
                e["ts"] = round(float(e["ts"]) + shift_us, 3)
            if e.get("ph") == "M" and e.get("name") == "process_name":
                e["args"] = {"name": f"rank {rank}: {e.get('args', {}).get('name', '')}"}
            if e.get("ph") == "M" and e.get("name") == "process_sort_index":
                e["args"] = {"sort_index": pids[pid]}
            out.write(("" if first else ",\n") + json.dumps(e, separators=(",", ":")))
            first = False
        for pid, new in pids.items():
            meta = {"ph": "M", "name": "process_labels", "pid": new, "tid": 0, "args": {"labels": f"rank {rank}"}}
            out.write(",\n" + json.dumps(meta, separators=(",", ":")))
    out.write("\n  ],\n")
    out.write(f'  "rankClockOffsetsNs": {json.dumps({str(k): v["clock_offset_ns"] for k, v in sorted(ranks.items())})},\n')
    out.write(f'  "mergedRanks": {json.dumps({str(k): v["file"] for k, v in sorted(ranks.items())})},\n')
    out.write(f'  "traceName": {json.dumps("merged ranks on " + socket.gethostname())}\n}}\n')
    return ranks


def main(argv):
    import argparse
    p = argparse.ArgumentParser(prog="profagent merge", description=__doc__.split("\n\n")[0])
    p.add_argument("folder")
    p.add_argument("-o", "--output", help="the merged trace (default: DIR/merged.trace.json)")
    a = p.parse_args(argv)
    # Rank order: the lowest rank's host is the reference clock.
    paths = sorted(profagent_ranks.trace_paths(a.folder), key=lambda q: (rank_of_name(q), q))
    if not paths:
        print(f"profagent: no *.trace.json in {a.folder}", file=sys.stderr)
        return 2
    target = a.output or os.path.join(a.folder, "merged.trace.json")
    temporary = target + ".tmp"
    with open(temporary, "w") as out:
        ranks = merge(paths, out)
    os.replace(temporary, target)  # readers never see a half-written file
    print(f"profagent: merged {len(ranks)} ranks into {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
