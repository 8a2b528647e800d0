#!/usr/bin/python3
"""A 4-rank data-parallel job on devsim and the simulated NCCL, launched the way torchrun
launches one (a launcher process that starts the ranks with RANK/LOCAL_RANK/WORLD_SIZE set),
under `profagent run`; rank 2 reaches every collective late by DEVSIM_NCCL_SLOW_US.

    ranks_checks.py PROFAGENT RANKS_TRAIN LAUNCH_RANKS_SH DEVSIM_DIR WORK_DIR

Checks, from the files as a consumer reads them: one trace per rank and none from the
launcher; every all-reduce an operator with Kineto's communication args and the communicator's
hash and sequence number, its kernel linked by External id and carrying the same args; on the
shared clock every collective's kernels end together on all ranks, the slow rank arrives last
by the knob's delay and the others' kernels last that much longer; `profagent report DIR`
names rank 2 with the others' waiting time within 10 % of the knob's, and its per-rank
communication, computation and overlap equal a recomputation from the traces;
`profagent merge DIR` gives one trace with a process per rank; a rank that dies mid-job
leaves the others' files whole and the report says which rank is missing."""
import glob
import json
import os
import shutil
import subprocess
import sys

profagent, program, launcher, devsim_dir, work = sys.argv[1:6]
STEPS = 6
SLOW_RANK = 2
SLOW_US = 50000
RANKS = 4
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run_job(out_dir, *extra, timeout_ms=20000, launcher_options=()):
    shutil.rmtree(out_dir, ignore_errors=True)
    env = dict(os.environ, LD_LIBRARY_PATH=devsim_dir, PROFAGENT_OUTPUT_DIR=out_dir,
               DEVSIM_NCCL_SLOW_RANK=str(SLOW_RANK), DEVSIM_NCCL_SLOW_US=str(SLOW_US),
               DEVSIM_NCCL_TIMEOUT_MS=str(timeout_ms),
               DEVSIM_KERNEL_NS="forward_kernel=1000000,backward_kernel=1000000,optimizer_kernel=500000",
               NCCL_COMM_ID=f"ranks_checks_{os.getpid()}_{os.path.basename(out_dir)}")
    return subprocess.run([profagent, "run", "--", launcher, *launcher_options, str(RANKS), program, str(STEPS), *extra],
                          env=env, capture_output=True, text=True, timeout=240)


def load_traces(out_dir):
    traces = {}
    for path in sorted(glob.glob(os.path.join(out_dir, "*.trace.json"))):
        with open(path) as f:
            trace = json.load(f)
        traces[trace["distributedInfo"]["rank"]] = (path, trace)
    return traces


def abs_ns(trace, event):
    return trace["baseTimeNanoseconds"] + round(event["ts"] * 1000)


def end_ns(trace, event):
    return abs_ns(trace, event) + round(event["dur"] * 1000)


def collectives(trace):
    """(comm hash, seq) -> (operator, kernel) of every all-reduce."""
    ops = {e["args"]["External id"]: e for e in trace["traceEvents"]
           if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e["name"] == "ncclAllReduce"}
    found = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel" and e["name"].startswith("ncclDevKernel_AllReduce"):
            op = ops.get(e["args"].get("External id"))
            if expect(op is not None, f"kernel at {e['ts']} has no ncclAllReduce operator by External id"):
                found[(e["args"]["Comm hash"], e["args"]["Seq"])] = (op, e)
    return found


def check_args(rank, op, kernel):
    want = {"Collective name": "allreduce", "In msg nelems": 1 << 20, "Out msg nelems": 1 << 20,
            "Group size": RANKS, "dtype": "Float", "Rank": rank, "Process Group Ranks": "[0, 1, 2, 3]"}
    for key, value in want.items():
        expect(op["args"].get(key) == value, f"rank {rank}: operator {key} = {op['args'].get(key)!r}, not {value!r}")
        expect(kernel["args"].get(key) == value, f"rank {rank}: kernel {key} = {kernel['args'].get(key)!r}")
    expect(op["args"]["Seq"] == kernel["args"]["Seq"], f"rank {rank}: kernel and operator disagree on Seq")


def check_job(out_dir, result):
    expect(result.returncode == 0, f"job exited {result.returncode}: {result.stderr[-2000:]}")
    traces = load_traces(out_dir)
    files = glob.glob(os.path.join(out_dir, "*.trace.json"))
    expect(len(files) == RANKS, f"{len(files)} trace files, expected one per rank: {files}")
    expect(sorted(traces) == list(range(RANKS)), f"ranks {sorted(traces)}")
    for rank, (path, trace) in traces.items():
        info = trace["distributedInfo"]
        expect(f".r{rank}." in os.path.basename(path), f"{path}: the file name does not carry rank {rank}")
        expect(info == {"backend": "nccl", "rank": rank, "local_rank": rank, "world_size": RANKS},
               f"rank {rank}: distributedInfo {info}")
        expect(f'"rank": {rank}' in open(path).read(4096), f"rank {rank}: HTA's rank pattern does not match")
    per_rank = {rank: collectives(trace) for rank, (_, trace) in traces.items()}
    keys = set(per_rank[0])
    expect(len(keys) == 2 * STEPS_RECORDED, f"rank 0 has {len(keys)} all-reduces, expected {2 * STEPS_RECORDED}")
    for rank, found in per_rank.items():
        expect(set(found) == keys, f"rank {rank} has other collectives than rank 0")
        for op, kernel in found.values():
            check_args(rank, op, kernel)
    waits = {rank: 0 for rank in traces}
    for key in keys:
        ends = {r: end_ns(traces[r][1], per_rank[r][key][1]) for r in traces}
        starts = {r: abs_ns(traces[r][1], per_rank[r][key][1]) for r in traces}
        expect(max(ends.values()) - min(ends.values()) < 50_000, f"collective {key}: ends spread {ends}")
        last = max(starts, key=starts.get)
        expect(last == SLOW_RANK, f"collective {key}: rank {last} arrived last, not {SLOW_RANK}")
        for r in traces:
            waits[r] += starts[last] - starts[r]
    return traces, per_rank, waits


def recompute_overlap(trace):
    """Communication, computation and their overlap (ns) from the kernels, independently."""
    def union(intervals):
        merged = []
        for s, e in sorted(intervals):
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        return merged
    comm, comp = [], []
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            (comm if e["name"].startswith("nccl") else comp).append((abs_ns(trace, e), end_ns(trace, e)))
    comm, comp = union(comm), union(comp)
    overlap = sum(max(0, min(a[1], b[1]) - max(a[0], b[0])) for a in comm for b in comp)
    return sum(e - s for s, e in comm), sum(e - s for s, e in comp), overlap


def report(out_dir, *extra):
    r = subprocess.run([profagent, "report", "--ranks", out_dir, "--format", "json", *extra],
                       capture_output=True, text=True, timeout=240)
    expect(r.returncode == 0, f"report --ranks exited {r.returncode}: {r.stderr[-2000:]}")
    return json.loads(r.stdout) if r.returncode == 0 else None


def check_report(traces, waits, r):
    if r is None:
        return
    expect(r["straggler"] == SLOW_RANK, f"report names rank {r['straggler']} as the straggler")
    expect(r["missing_ranks"] == [], f"report says ranks {r['missing_ranks']} are missing")
    knob_wait_ms = SLOW_US / 1000 * 2 * STEPS_RECORDED
    for rank, v in r["ranks"].items():
        rank = int(rank)
        comm, comp, overlap = recompute_overlap(traces[rank][1])
        for key, ns in (("comm_ms", comm), ("comp_ms", comp), ("overlap_ms", overlap)):
            expect(abs(v[key] - ns / 1e6) < 1e-6, f"rank {rank}: {key} {v[key]} != recomputed {ns / 1e6}")
        expect(abs(v["wait_ms"] - waits[rank] / 1e6) < 1e-6, f"rank {rank}: wait {v['wait_ms']} != {waits[rank] / 1e6}")
        if rank != SLOW_RANK:
            expect(abs(v["wait_ms"] - knob_wait_ms) <= 0.1 * knob_wait_ms,
                   f"rank {rank} waited {v['wait_ms']:.3f} ms, the knob caused {knob_wait_ms:.3f} ms")
        expect(v["step_ranges"] == [[1, STEPS - 1]], f"rank {rank}: steps {v['step_ranges']}")
    means = {}
    for rank, (_, trace) in traces.items():
        steps = [e["dur"] / 1000 for e in trace["traceEvents"]
                 if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")]
        means[rank] = sum(steps) / len(steps)
    spread = r["step_time_spread"]
    expect(abs(spread["spread_ms"] - (max(means.values()) - min(means.values()))) < 1e-3
           and spread["slowest_rank"] == max(means, key=means.get), f"step time spread {spread}, step means {means}")


def check_merge(out_dir, traces, per_rank):
    merged_path = os.path.join(work, "merged.trace.json")
    r = subprocess.run([profagent, "merge", out_dir, "-o", merged_path], capture_output=True, text=True, timeout=240)
    if not expect(r.returncode == 0, f"merge exited {r.returncode}: {r.stderr[-2000:]}"):
        return
    with open(merged_path) as f:
        merged = json.load(f)
    names = [e["args"]["name"] for e in merged["traceEvents"] if e.get("ph") == "M" and e["name"] == "process_name"]
    for rank in range(RANKS):
        expect(any(n.startswith(f"rank {rank}: ") for n in names), f"merged: no process named for rank {rank}")
    ends = {}
    for e in merged["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel" and "Comm hash" in e.get("args", {}):
            ends.setdefault((e["args"]["Comm hash"], e["args"]["Seq"]), []).append(end_ns(merged, e))
    expect(len(ends) == 2 * STEPS_RECORDED, f"merged: {len(ends)} collectives")
    for key, values in ends.items():
        expect(len(values) == RANKS and max(values) - min(values) < 50_000, f"merged: {key} ends {values}")


STEPS_RECORDED = STEPS - 1  # PROFAGENT_SKIP_FIRST=1: the start-up step is left out on every rank
os.environ["PROFAGENT_SKIP_FIRST"] = "1"
os.environ["PROFAGENT_ACTIVE"] = str(STEPS_RECORDED)
os.environ["PROFAGENT_REPEAT"] = "1"
out = os.path.join(work, "job")
result = run_job(out)
traces, per_rank, waits = check_job(out, result)
for rank in range(RANKS):
    expect(len(glob.glob(os.path.join(out, f"*.r{rank}.*.rank.ndjson"))) == 1, f"rank {rank}: no rank table")
# HTA loads every *.json of a folder as a trace: only the traces may end so.
others = [n for n in os.listdir(out) if n.endswith(".json") and not n.endswith(".trace.json")]
expect(not others, f"files HTA would take for traces: {others}")
from_tables = report(out)
check_report(traces, waits, from_tables)
from_traces = report(out, "--traces")
check_report(traces, waits, from_traces)
if from_tables and from_traces:
    for rank, v in from_tables["ranks"].items():
        for key in ("comm_ms", "comp_ms", "overlap_ms", "wait_ms", "step_ranges", "step_mean_ms"):
            expect(v[key] == from_traces["ranks"][rank][key] or abs(v[key] - from_traces["ranks"][rank][key]) < 1e-6,
                   f"rank {rank}: {key} from the rank table {v[key]} != from the trace {from_traces['ranks'][rank][key]}")
check_merge(out, traces, per_rank)

# Grouped all-reduces on a split communicator: each step's group is one operator ("ncclGroup",
# "coalesced", 2 calls) holding the two all-reduce operators, and its one kernel carries the
# group's External id and the split communicator's hash and sequence number, equal on all ranks.
grouped = os.path.join(work, "grouped")
result = run_job(grouped, "--group")
expect(result.returncode == 0, f"grouped job exited {result.returncode}: {result.stderr[-2000:]}")
group_keys = {}
for rank, (path, trace) in load_traces(grouped).items():
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    groups = {e["args"]["External id"]: e for e in events if e.get("cat") == "cpu_op" and e["name"] == "ncclGroup"}
    inner = [e for e in events if e.get("cat") == "cpu_op" and e["name"] == "ncclAllReduce"]
    kernels = [e for e in events if e.get("cat") == "kernel" and e["name"].startswith("nccl")]
    expect(len(groups) == STEPS_RECORDED and len(inner) == 2 * STEPS_RECORDED and len(kernels) == STEPS_RECORDED,
           f"grouped rank {rank}: {len(groups)} groups, {len(inner)} all-reduces, {len(kernels)} kernels")
    for g in groups.values():
        expect(g["args"]["Collective name"] == "coalesced" and g["args"].get("Calls") == 2
               and g["args"]["In msg nelems"] == 2 << 20, f"grouped rank {rank}: group args {g['args']}")
        held = [e for e in inner if g["ts"] <= e["ts"] and e["ts"] + e["dur"] <= g["ts"] + g["dur"]]
        expect(len(held) == 2 and all(e["args"]["Seq"] == g["args"]["Seq"] for e in held),
               f"grouped rank {rank}: the group at {g['ts']} holds {len(held)} all-reduces of its Seq")
    for k in kernels:
        g = groups.get(k["args"].get("External id"))
        if expect(g is not None, f"grouped rank {rank}: kernel at {k['ts']} is not linked to a group"):
            group_keys.setdefault((k["args"]["Comm hash"], k["args"]["Seq"]), []).append(rank)
world_hash = next(iter(per_rank[0]))[0]
expect(len(group_keys) == STEPS_RECORDED and all(sorted(v) == list(range(RANKS)) for v in group_keys.values()),
       f"grouped: collectives by (hash, seq) across ranks: {group_keys}")
expect(all(h != world_hash for h, _ in group_keys), "the split communicator has the world's hash")

# A launcher whose rank variable profagent does not know: each rank's rank and world size come
# from its ncclCommInitRank (into distributedInfo and the file name).
unknown = os.path.join(work, "unknown_variable")
result = run_job(unknown, launcher_options=("--rank-variable", "RANKS_TRAIN_RANK"))
expect(result.returncode == 0, f"job with an unknown rank variable exited {result.returncode}")
for rank, (path, trace) in load_traces(unknown).items():
    expect(trace["distributedInfo"]["world_size"] == RANKS and f".r{rank}." in os.path.basename(path),
           f"rank from the communicator: {os.path.basename(path)} {trace['distributedInfo']}")
expect(sorted(load_traces(unknown)) == list(range(RANKS)), f"ranks from the communicator: {sorted(load_traces(unknown))}")

# Ranks of another host: rank 1's trace as if written on a host whose clock is 5 s ahead;
# merge shifts it back by its collectives' ends, and says so.
shifted = os.path.join(work, "two_hosts")
shutil.rmtree(shifted, ignore_errors=True)
os.makedirs(shifted)
for rank, (path, trace) in traces.items():
    name = os.path.basename(path)
    if rank == 1:
        trace = dict(trace, baseTimeNanoseconds=trace["baseTimeNanoseconds"] + 5_000_000_000)
        name = "otherhost" + name[name.index("."):]
    with open(os.path.join(shifted, name), "w") as f:
        json.dump(trace, f)
merged_path = os.path.join(work, "two_hosts.trace.json")
subprocess.run([profagent, "merge", shifted, "-o", merged_path], capture_output=True, timeout=240)
with open(merged_path) as f:
    merged = json.load(f)
offset = merged.get("rankClockOffsetsNs", {}).get("1", 0)
expect(abs(offset + 5_000_000_000) < 100_000, f"rank 1 of another host shifted by {offset} ns, not -5 s")

# Rank 3 dies at the start of step 3: the others' collectives wait for it until the simulated
# NCCL's timeout, then fail; every surviving rank still writes its files.
died = os.path.join(work, "died")
for name in ("PROFAGENT_SKIP_FIRST", "PROFAGENT_ACTIVE", "PROFAGENT_REPEAT"):  # the whole run: one window
    os.environ.pop(name)
result = run_job(died, "--die", "3", "3", timeout_ms=1500)
expect(result.returncode != 0, "the job with a dead rank exited 0")
survivors = load_traces(died)
expect(sorted(survivors) == [0, 1, 2], f"ranks with a trace after rank 3 died: {sorted(survivors)}")
r = report(died)
if r is not None:
    expect(r["missing_ranks"] == [3], f"report: missing ranks {r['missing_ranks']}, expected [3]")
    text = subprocess.run([profagent, "report", "--ranks", died], capture_output=True, text=True, timeout=240).stdout
    expect("missing ranks (no trace): 3" in text, f"the text report does not say rank 3 is missing:\n{text}")

for failure in failures:
    print("FAILED:", failure)
print("passed" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
