"""PROFAGENT_PROFILE_MEMORY: every allocation, with totals that follow from the program's own sequence.

Program: programs/memory_app.cpp (memory.cmake). `sequence` makes a known list of allocations
and frees (several sizes, frees in another order, an async allocation on a stream, pinned memory,
a leak, a free of memory allocated before the window, a double free, cudaFree(nullptr), an
allocation larger than the device: DEVSIM_MEMORY_MB). The cases compute what every `[memory]`
event's Bytes / Total Allocated / Total Reserved must be from that list and the allocations made
before the window (step 0, skipped by the schedule), and compare: events, counters, peaks,
leaks, failed allocations and the per-range CUDA Mem of the table rows, which must also equal the
sums of the trace's own events inside each range.
"""
import glob
import json
import os

import reliability as R
from reliability import trace_reader

MIB = 1 << 20
DEVICE_MB = 64
OOM_BYTES = 128 * MIB
GPU, CPU = 0, -1
# Allocated before the window (step 0): cudaMalloc 1 MiB, cudaMallocHost 64 KiB.
BEFORE = {GPU: MIB, CPU: 64 * 1024}
# (step, range, device, bytes) of every allocation (> 0) and free (< 0) the window holds, in order.
SEQUENCE = [
    (1, "layer1", GPU, 4096), (1, "layer1", GPU, 10000), (1, "layer1", GPU, 3000),
    (1, "layer1", GPU, -4096), (1, "layer1", GPU, -3000), (1, "layer1", GPU, -MIB),
    (2, "layer2", CPU, 8192), (2, "layer2", GPU, -10000), (2, "layer2", CPU, -8192),
    (2, "layer2", GPU, 777),
]
SCHEDULE = "skip_first=1,active=2,repeat=1"


def program(env):
    return os.path.join(os.path.dirname(env.app), "memory_app")


def expected_events():
    """(device, bytes, total allocated, total reserved) of each [memory] event; nothing here is
    allocated from a pool the device reported, so reserved equals allocated."""
    totals = dict(BEFORE)
    found = []
    for _, _, device, nbytes in SEQUENCE:
        totals[device] += nbytes
        found.append((device, nbytes, totals[device], totals[device]))
    return found


def instants(document, name):
    return trace_reader.events(document, ph="i", name=name)


def summary_of(out):
    files = glob.glob(os.path.join(out, "*.summary.ndjson"))
    R.expect(len(files) == 1, f"expected one summary, found {os.listdir(out)}")
    with open(files[0]) as f:
        return json.loads(f.read())


def run_sequence(env, name, extra=None):
    out = env.out(name)
    env_extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_PROFILE_MEMORY": "1", "PROFAGENT_SCHEDULE": SCHEDULE,
                 "DEVSIM_MEMORY_MB": str(DEVICE_MB), **(extra or {})}
    agent, plain = R.both(env, [program(env), "sequence", str(OOM_BYTES)], env_extra)
    R.expect_unchanged(agent, plain)
    R.expect(agent.returncode == 0 and "done" in agent.stdout, f"status {agent.returncode}: {agent.stderr[-400:]!r}")
    R.expect("result oom 2" in agent.stdout, f"the oversized allocation did not fail: {agent.stdout!r}")
    return out, R.one_valid_trace(out)


def check_events(document):
    events = sorted(instants(document, "[memory]"), key=lambda e: e["args"]["Ev Idx"])
    got = [(e["args"]["Device Id"], e["args"]["Bytes"], e["args"]["Total Allocated"], e["args"]["Total Reserved"])
           for e in events]
    R.expect(got == expected_events(), f"[memory] events\n{got}\nexpected\n{expected_events()}")
    for e in events:
        R.expect(e["cat"] == "cpu_instant_event" and e["s"] == "t", f"not Kineto's memory event shape: {e}")
        want_type = 0 if e["args"]["Device Id"] == CPU else 1
        R.expect(e["args"]["Device Type"] == want_type, f"Device Type of {e['args']}")
    made = {}
    for e in events:
        addr, nbytes = e["args"]["Addr"], e["args"]["Bytes"]
        if nbytes > 0:
            made[addr] = nbytes
        elif nbytes != -MIB:  # the 1 MiB buffer was made before the window
            R.expect(made.pop(addr, None) == -nbytes, f"free of {addr} ({nbytes}) matches no allocation in the trace")
    return events


def check_out_of_memory(document):
    oom = instants(document, "[OutOfMemory]")
    R.expect(len(oom) == 1, f"{len(oom)} [OutOfMemory] events, expected 1")
    args = oom[0]["args"]
    R.expect(args["Bytes"] == OOM_BYTES and args["Total Allocated"] == 777 and args["Device Id"] == GPU,
             f"[OutOfMemory] {args}")


def check_counters(document):
    tracks = {}
    for e in document["traceEvents"]:
        if e.get("ph") == "C" and e["name"].startswith("Memory ("):
            tracks.setdefault(e["name"], []).append(e)
    R.expect(sorted(tracks) == ["Memory (CPU pinned)", "Memory (GPU 0)"], f"counter tracks {sorted(tracks)}")
    gpu = sorted(tracks["Memory (GPU 0)"], key=lambda e: e["ts"])
    R.expect(gpu[0]["args"]["Allocated"] == MIB, f"GPU 0 track starts at {gpu[0]['args']}, expected {MIB}")
    R.expect(max(e["args"]["Allocated"] for e in gpu) == MIB + 4096 + 10000 + 3000, "GPU 0 track's peak")
    R.expect(gpu[-1]["args"]["Allocated"] == 777, f"GPU 0 track ends at {gpu[-1]['args']}")


def range_sums(document, events):
    """Bytes of the [memory] events inside each range slice (same thread), per (range, device)."""
    sums = {}
    for r in R.events(document):
        if r["name"] not in ("layer1", "layer2"):
            continue
        for e in events:
            if e["tid"] == r["tid"] and r["ts"] <= e["ts"] <= r["ts"] + r["dur"]:
                key = (r["name"], "cpu" if e["args"]["Device Id"] == CPU else "cuda")
                sums[key] = sums.get(key, 0) + e["args"]["Bytes"]
    return sums


def check_rows(summary, document, events):
    rows = {r["name"]: r for r in summary["rows"]}
    traced = range_sums(document, events)
    for name in ("layer1", "layer2"):
        built = sum(b for _, r, d, b in SEQUENCE if r == name and d == GPU)
        host = sum(b for _, r, d, b in SEQUENCE if r == name and d == CPU)
        row = rows[name]
        R.expect(row["cuda_memory_usage"] == built == traced.get((name, "cuda"), 0) == row["self_cuda_memory_usage"],
                 f"{name}: CUDA Mem {row['cuda_memory_usage']}, sequence {built}, trace {traced.get((name, 'cuda'))}")
        R.expect(row["cpu_memory_usage"] == host == traced.get((name, "cpu"), 0), f"{name}: CPU Mem {row}")
    R.expect(rows["cudaMalloc"]["cuda_memory_usage"] == 4096 + 10000 + 777, f"cudaMalloc row {rows['cudaMalloc']}")
    R.expect(rows["cudaMallocHost"]["cpu_memory_usage"] == 8192, f"cudaMallocHost row {rows['cudaMallocHost']}")


def check_summary(summary):
    memory = summary["memory"]
    devices = {d["device"]: d for d in memory["devices"]}
    gpu, cpu = devices[GPU], devices[CPU]
    R.expect(gpu["peak_allocated"] == MIB + 17096 and gpu["peak_allocated_at"]["step"] == 1
             and gpu["peak_allocated_at"]["scope"] == "layer1", f"GPU 0 peak {gpu}")
    R.expect(cpu["peak_allocated"] == 65536 + 8192 and cpu["peak_allocated_at"]["scope"] == "layer2", f"CPU peak {cpu}")
    R.expect(gpu["end_allocated"] == 777 and cpu["end_allocated"] == 65536, f"window end totals {devices}")
    live = sorted((l["bytes"], l["device"], l["api"], l["made"]["scope"]) for l in memory["live"])
    R.expect(live == [(777, GPU, "cudaMalloc", "layer2"), (65536, CPU, "cudaMallocHost", "")],
             f"live allocations (leaks) {live}")
    R.expect(memory["unknown_frees"] == 1 and memory["null_frees"] == 1, f"bad frees {memory}")
    R.expect([(f["bytes"], f["at"]["scope"]) for f in memory["failed"]] == [(OOM_BYTES, "layer2")],
             f"failed allocations {memory['failed']}")
    steps = [(s["step"], s["allocations"], s["frees"], s["failed"]) for s in memory["steps"]]
    R.expect(steps == [(1, 3, 3, 0), (2, 2, 2, 1)], f"per-step counts {steps}")
    R.expect(not memory["churn_every_step"] and memory["dropped_records"] == 0, f"churn/drops {memory}")


def case_sequence(env):
    out, document = run_sequence(env, "memory_sequence")
    events = check_events(document)
    check_out_of_memory(document)
    check_counters(document)
    summary = summary_of(out)
    check_rows(summary, document, events)
    check_summary(summary)
    table = open(glob.glob(os.path.join(out, "*.table.txt"))[0]).read()
    R.expect("CUDA Mem" in table and "Self CPU Mem" in table and "-1014.23 Kb" in table,
             f"the table lacks torch's memory columns:\n{table[:1500]}")
    return f"{len(events)} [memory] events, totals, peaks, leaks, OOM and range CUDA Mem as constructed"


def case_sort_by_memory(env):
    out, _ = run_sequence(env, "memory_sort", {"PROFAGENT_SORT_BY": "self_cuda_memory_usage"})
    summary = summary_of(out)
    R.expect(summary["sort_by"] == "self_cuda_memory_usage", f"sort_by {summary['sort_by']}")
    values = [r["self_cuda_memory_usage"] for r in summary["rows"]]
    R.expect(values == sorted(values, reverse=True), f"rows not sorted by Self CUDA Mem: {values}")
    return "rows sorted by self_cuda_memory_usage"


def case_off(env):
    out = env.out("memory_off")
    agent, plain = R.both(env, [program(env), "sequence", str(OOM_BYTES)],
                          {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_SCHEDULE": SCHEDULE, "DEVSIM_MEMORY_MB": str(DEVICE_MB)})
    R.expect_unchanged(agent, plain)
    document = R.one_valid_trace(out)
    R.expect(not instants(document, "[memory]") and "profagent_memory" not in document, "memory events without the switch")
    R.expect(len(R.events(document, "cudaMalloc")) == 4, "the allocation calls are still traced as calls")
    R.expect("memory" not in summary_of(out), "a memory summary without the switch")
    return "no memory data without PROFAGENT_PROFILE_MEMORY; calls traced as before"


def case_churn(env):
    out = env.out("memory_churn")
    agent, plain = R.both(env, [program(env), "churn", "6"], {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_PROFILE_MEMORY": "1"})
    R.expect_unchanged(agent, plain)
    memory = summary_of(out)["memory"]
    steps = [(s["allocations"], s["frees"], s["churn_pairs"]) for s in memory["steps"]]
    R.expect(len(steps) >= 5 and all(s == (1, 1, 1) for s in steps[:5]), f"per-step counts {steps}")
    R.expect(memory["churn_every_step"] and "alloc/free pairs" in memory["advice"], f"no churn advice: {memory}")
    table = open(glob.glob(os.path.join(out, "*.table.txt"))[0]).read()
    R.expect(table.count("advice: every step allocates and frees") == 1, "the advice is not said once in the table")
    return "churn found in every step, said once"


def case_many(env):
    """10^6 allocation/free pairs in one window: records bounded by a quarter of
    PROFAGENT_BUFFER_MB, the rest counted and said once, totals still exact."""
    out = env.out("memory_many")
    count = 1_000_000
    # Never streamed (its summary has the memory totals; a streamed window's is not computed).
    agent = R.run([program(env), "many", str(count)],
                  {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_PROFILE_MEMORY": "1", "PROFAGENT_BUFFER_MB": "64",
                   "PROFAGENT_STREAM_AFTER_MB": "65536"},
                  env.agent, env.devsim, timeout=600)
    R.expect(agent.returncode == 0, f"status {agent.returncode}: {agent.stderr[-400:]!r}")
    document = R.one_valid_trace(out)
    memory = document["profagent_memory"]
    capacity = memory["record_capacity"]
    R.expect(capacity > 0 and memory["records"] == capacity, f"records {memory}")
    R.expect(memory["dropped_records"] == 2 * count - capacity, f"dropped {memory['dropped_records']}, capacity {capacity}")
    R.expect(document["profagent_drops"]["memory_records"] == memory["dropped_records"], "drops key")
    R.expect(memory["bookkeeping_bytes"] <= 16 * MIB + 4096, f"bookkeeping {memory['bookkeeping_bytes']} bytes")
    said = [line for line in agent.agent_lines() if "allocation records dropped" in line]
    R.expect(len(said) == 1, f"drop lines on stderr: {said}")
    end = {d["device"]: d for d in summary_of(out)["memory"]["devices"]}
    R.expect(end[GPU]["end_allocated"] == 0 and end[GPU]["peak_allocated"] == 256, f"totals {end}")
    return f"{capacity} records kept, {memory['dropped_records']} counted and said once, totals exact"


def case_library(env):
    """A library's driver-level workspace (simblas: cuMemAlloc/cuMemFree, which no hook sees)
    beside a hooked cudaMalloc: both are in the trace once each (the device's own record of
    cudaMalloc is not a second allocation), with totals in time order, and the workspace's bytes
    are in the row of the driver call and inside the program's range."""
    out = env.out("memory_library")
    workspace = MIB
    agent, plain = R.both(env, [program(env), "library", str(workspace)],
                          {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_PROFILE_MEMORY": "1"})
    R.expect_unchanged(agent, plain)
    R.expect("result workspace 0" in agent.stdout, f"the workspace was not allocated: {agent.stdout!r}")
    document = R.one_valid_trace(out)
    R.expect(document["device_backend"] == "cupti", f"device backend {document['device_backend']}")
    events = sorted(instants(document, "[memory]"), key=lambda e: e["ts"])
    got = [(e["args"]["Bytes"], e["args"]["Total Allocated"]) for e in events]
    want = [(4096, 4096), (workspace, workspace + 4096), (-4096, workspace), (-workspace, 0)]
    R.expect(got == want, f"[memory] (Bytes, Total Allocated) {got}, expected {want}")
    rows = {r["name"]: r for r in summary_of(out)["rows"]}
    R.expect(rows["cuMemAlloc_v2"]["cuda_memory_usage"] == workspace, f"cuMemAlloc row {rows.get('cuMemAlloc_v2')}")
    R.expect(rows["cuMemFree_v2"]["cuda_memory_usage"] == -workspace, f"cuMemFree row {rows.get('cuMemFree_v2')}")
    R.expect(rows["library"]["cuda_memory_usage"] == sum(range_sums_of(document, events, "library")), "library range")
    gpu = {d["device"]: d for d in summary_of(out)["memory"]["devices"]}[GPU]
    R.expect(gpu["peak_allocated"] == workspace + 4096 and gpu["peak_allocated_at"]["scope"] == "library", f"peak {gpu}")
    return "driver-level workspace counted once, in its range and its driver call's row"


def case_pool(env):
    """A pool of the program's own (cudaMemPoolCreate, cudaMallocFromPoolAsync, cudaFreeAsync)
    beside cudaMalloc: each allocation and free once (the device's records of them are not
    counted again), in time order, with totals from the program's sequence, inside its range."""
    out = env.out("memory_pool")
    agent, plain = R.both(env, [program(env), "pool", "100000"], {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_PROFILE_MEMORY": "1"})
    R.expect_unchanged(agent, plain)
    document = R.one_valid_trace(out)
    events = sorted(instants(document, "[memory]"), key=lambda e: e["ts"])
    got = [(e["args"]["Bytes"], e["args"]["Total Allocated"]) for e in events]
    want = [(100000, 100000), (-100000, 0), (512, 512), (-512, 0)]
    R.expect(got == want, f"[memory] (Bytes, Total Allocated) {got}, expected {want}")
    rows = {r["name"]: r for r in summary_of(out)["rows"]}
    R.expect(rows["cudaMallocFromPoolAsync"]["cuda_memory_usage"] == 100000, f"row {rows['cudaMallocFromPoolAsync']}")
    R.expect(rows["pooled"]["cuda_memory_usage"] == 100000 - 100000 + 512, f"range row {rows['pooled']}")
    return "pool allocations counted once, in their range"


def case_threads(env):
    """Four threads allocating and freeing at once: every event's Total Allocated is the
    previous event's plus its own Bytes (the totals are booked atomically, in one order)."""
    out = env.out("memory_threads")
    count = 500
    agent, plain = R.both(env, [program(env), "threads", str(count)], {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_PROFILE_MEMORY": "1"})
    R.expect_unchanged(agent, plain)
    document = R.one_valid_trace(out)
    events = sorted(instants(document, "[memory]"), key=lambda e: e["args"]["Ev Idx"])
    R.expect(len(events) == 4 * count * 2, f"{len(events)} [memory] events, expected {4 * count * 2}")
    R.expect(len({e["tid"] for e in events}) == 4, "events not on the four threads")
    total = 0
    for e in events:
        total += e["args"]["Bytes"]
        R.expect(e["args"]["Total Allocated"] == total, f"event {e['args']['Ev Idx']}: total {e['args']['Total Allocated']}, "
                 f"running sum {total}")
    R.expect(total == 0, f"the window ends with {total} bytes allocated")
    sizes = sorted({e["args"]["Bytes"] for e in events if e["args"]["Bytes"] > 0})
    R.expect(sizes == [64, 128, 192, 256], f"allocation sizes {sizes}")
    return f"{len(events)} events from 4 threads, every total the running sum"


def case_diopi_demo(env):
    """The DIOPI demo (tests/vendorsim/train.py over the framework and vendor libraries) with
    memory profiled: diopi* operators have CUDA Mem rows, each equal to the Bytes of the
    [memory] events inside that operator's slices. Its results are unchanged (its step times,
    measured, differ from run to run)."""
    lib = os.path.dirname(env.agent)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    command = ["/usr/bin/python3", os.path.join(root, "tests", "vendorsim", "train.py"),
               "--framework", os.path.join(lib, "libframeworksim.so"), "--steps", "3"]
    out = env.out("memory_diopi_demo")
    agent, plain = R.both(env, command, {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_PROFILE_MEMORY": "1",
                                         "PROFAGENT_WINDOW_WAIT_MS": "0"})
    untimed = [[line for line in run.stdout.splitlines() if " time " not in line] for run in (agent, plain)]
    R.expect(agent.returncode == plain.returncode == 0 and untimed[0] == untimed[1],
             f"the demo's results changed: {agent.returncode}/{plain.returncode} {untimed}")
    document = R.one_valid_trace(out)
    events = instants(document, "[memory]")
    rows = {r["name"]: r for r in summary_of(out)["rows"] if r["name"].startswith("diopi")}
    with_memory = {name: r["cuda_memory_usage"] for name, r in rows.items() if r["cuda_memory_usage"] != 0}
    R.expect(with_memory, f"no diopi* operator has CUDA Mem: {sorted(rows)}")
    for name, value in with_memory.items():
        traced = sum(range_sums_of(document, events, name))
        R.expect(traced == value, f"{name}: CUDA Mem {value}, [memory] events inside it sum to {traced}")
    return f"CUDA Mem of {len(with_memory)} diopi* operators equals the trace's sums: {with_memory}"


def range_sums_of(document, events, name):
    spans = [r for r in R.events(document) if r["name"] == name]
    return [e["args"]["Bytes"] for e in events for r in spans if r["ts"] <= e["ts"] <= r["ts"] + r["dur"]]


CASES = {
    "memory_library": case_library,
    "memory_pool": case_pool,
    "memory_threads": case_threads,
    "memory_diopi_demo": case_diopi_demo,
    "memory_sequence": case_sequence,
    "memory_sort_by_memory": case_sort_by_memory,
    "memory_off": case_off,
    "memory_churn": case_churn,
    "memory_many": case_many,
}
