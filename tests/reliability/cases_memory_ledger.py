"""The allocation ledger's edges (PROFAGENT_PROFILE_MEMORY), each a program run with and without
the agent (programs/memory_edges_app.cpp): what the trace and the summary say must follow from
the program's own sequence.

- memory_address_reuse: one address taken in turn by cudaMalloc/cudaFree and by a library's
  cuMemAlloc/cuMemFree, each side also freeing the other's memory: every allocation is counted
  once, in its own call's row, and the peak is the largest single allocation;
- memory_graph_nodes: a graph's allocation node is in the totals from the launch, under the
  launch's range, and its free outside the graph is an ordinary free (not an unknown one);
- memory_zero_bytes: cudaMalloc(&p, 0) leaves no 0-byte allocation live;
- memory_refused_registration: cudaHostRegister of memory already registered is a failed call
  with its error (712), never an out-of-memory.
"""
import glob
import json
import os

import reliability as R
from reliability import trace_reader

MIB = 1 << 20
GPU = 0


def program(env):
    return os.path.join(os.path.dirname(env.app), "memory_edges_app")


def run_edges(env, name, args):
    out = env.out(name)
    agent, plain = R.both(env, [program(env)] + args, {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_PROFILE_MEMORY": "1"})
    R.expect_unchanged(agent, plain)
    R.expect(agent.returncode == 0 and "done" in agent.stdout, f"status {agent.returncode}: {agent.stderr[-600:]!r}")
    return out, agent, R.one_valid_trace(out)


def memory_events(document, name="[memory]"):
    found = trace_reader.events(document, ph="i", name=name)
    return sorted(found, key=lambda e: e["ts"])


def summary_of(out):
    files = glob.glob(os.path.join(out, "*.summary.ndjson"))
    R.expect(len(files) == 1, f"expected one summary, found {os.listdir(out)}")
    with open(files[0]) as f:
        return json.loads(f.read())


def result(stdout, what):
    for line in stdout.splitlines():
        if line.startswith(f"result {what} "):
            return int(line.split()[2])
    raise R.Failed(f"the program printed no 'result {what}': {stdout!r}")


def case_address_reuse(env):
    """Before, a peak of 2.00 Mb where the program never held more than 1.00 Mb: the driver's
    records were taken for the runtime's and the runtime's counted twice."""
    out, agent, document = run_edges(env, "memory_address_reuse", ["reuse", str(MIB)])
    events = memory_events(document)
    made = [e["args"]["Addr"] for e in events if e["args"]["Bytes"] > 0][1:]  # the sequence's four
    shared = sum(1 for a, b in zip(made, made[1:]) if a == b)
    R.expect(shared >= 2, f"the allocator gave the address back {shared} of 3 times: the case shares none ({made})")
    got = [(e["args"]["Bytes"], e["args"]["Total Allocated"]) for e in events]
    sizes = [8, 4, 3, 2, 1]  # the warm-up cudaMalloc, then the sequence: one allocation live at a time
    want = [pair for n in sizes for pair in ((n * MIB, n * MIB), (-n * MIB, 0))]
    R.expect(got == want, f"[memory] (Bytes, Total Allocated)\n{got}\nexpected\n{want}")
    memory = document["profagent_memory"]
    R.expect(memory["unknown_frees"] == 0 and memory["live_allocations"] == 0, f"bad frees or leaks: {memory}")
    summary = summary_of(out)
    rows = {r["name"]: r["cuda_memory_usage"] for r in summary["rows"]}
    # Each allocation and free in the row of the call that made it, whichever API it was.
    want_rows = {"cuMemAlloc_v2": 5 * MIB, "cuMemFree_v2": -6 * MIB, "cudaMalloc": 13 * MIB, "cudaFree": -12 * MIB}
    R.expect({k: rows.get(k) for k in want_rows} == want_rows, f"CUDA Mem rows {rows}, expected {want_rows}")
    reuse_peak = max(a for b, a in got[2:])
    gpu = {d["device"]: d for d in summary["memory"]["devices"]}[GPU]
    R.expect(reuse_peak == 4 * MIB and gpu["peak_allocated"] == 8 * MIB and gpu["end_allocated"] == 0, f"peaks {gpu}")
    table = open(glob.glob(os.path.join(out, "*.table.txt"))[0]).read()
    R.expect("peak allocated 8.00 Mb" in table, f"the table's memory summary:\n{table[-1500:]}")
    return "one address shared by runtime and driver: each allocation once, in its call's row; peak exact"


def case_graph_nodes(env):
    out, agent, document = run_edges(env, "memory_graph_nodes", ["graph", str(MIB)])
    R.expect(result(agent.stdout, "free_outside") == 0, f"cudaFree of graph memory failed: {agent.stdout!r}")
    events = memory_events(document)
    got = [(e["args"]["Bytes"], e["args"]["Total Allocated"], e["args"]["Kind"]) for e in events]
    half = MIB // 2
    want = [(MIB, MIB, "pool"), (-MIB, 0, "pool"), (half, half, "pool"), (-half, 0, "pool"), (half, half, "pool"),
            (-half, 0, "pool")]
    R.expect(got == want, f"[memory] (Bytes, Total Allocated, Kind)\n{got}\nexpected\n{want}")
    memory = document["profagent_memory"]
    R.expect(memory["unknown_frees"] == 0 and memory["live_allocations"] == 0, f"the free outside the graph: {memory}")
    rows = {r["name"]: r for r in summary_of(out)["rows"]}
    # The allocation node's bytes are the launch's, and inside the program's range.
    # A row per graph ("cudaGraphLaunch (graph N)") when its launches have device records.
    launch_rows = [r for name, r in rows.items() if name.startswith("cudaGraphLaunch")]
    R.expect(sum(r["cuda_memory_usage"] for r in launch_rows) == MIB, f"cudaGraphLaunch rows {launch_rows}")
    R.expect(rows["cudaFree"]["cuda_memory_usage"] == -MIB, f"cudaFree row {rows['cudaFree']}")
    launches = [e for e in R.events(document, "cudaGraphLaunch")]
    first = min(launches, key=lambda e: e["ts"])
    R.expect(first["ts"] <= events[0]["ts"], "the graph's allocation is placed before its launch")
    return "graph allocation nodes counted from their launch; a free outside the graph is an ordinary free"


def case_zero_bytes(env):
    out, agent, document = run_edges(env, "memory_zero_bytes", ["zero", "3"])
    R.expect(result(agent.stdout, "null_pointers") == 4, f"zero-byte allocations returned memory: {agent.stdout!r}")
    got = [(e["args"]["Bytes"], e["args"]["Total Allocated"]) for e in memory_events(document)]
    R.expect(got == [(512, 512), (-512, 0)], f"[memory] events {got}: only the one real allocation and its free")
    memory = summary_of(out)["memory"]
    R.expect(memory["live_count"] == 0 and not memory["live"], f"a 0-byte allocation stays live: {memory['live']}")
    R.expect(memory["null_frees"] == 3 and memory["unknown_frees"] == 0, f"frees {memory}")
    return "cudaMalloc(&p, 0) books nothing; its cudaFree is a null free"


def case_refused_registration(env):
    out, agent, document = run_edges(env, "memory_refused_registration", ["register", "65536"])
    R.expect(result(agent.stdout, "register_again") == 712, f"the second registration did not fail: {agent.stdout!r}")
    R.expect(not memory_events(document, "[OutOfMemory]"), "a refused registration is reported as out of memory")
    refused = memory_events(document, "[FailedMemoryCall]")
    R.expect(len(refused) == 1 and refused[0]["args"]["Error"] == 712 and refused[0]["args"]["Bytes"] == 65536,
             f"[FailedMemoryCall] events {refused}")
    got = [(e["args"]["Bytes"], e["args"]["Total Allocated"]) for e in memory_events(document)]
    R.expect(got == [(65536, 65536), (-65536, 0)], f"[memory] events {got}")
    memory = summary_of(out)["memory"]
    failed = [(f["out_of_memory"], f["error"], f["call"], f["at"]["scope"]) for f in memory["failed"]]
    R.expect(failed == [(False, 712, "cudaHostRegister", "pin")], f"summary failed calls {failed}")
    table = open(glob.glob(os.path.join(out, "*.table.txt"))[0]).read()
    R.expect("failed call: cudaHostRegister of 64.00 Kb CPU pinned returned error 712, not out of memory" in table
             and "failed allocation" not in table, f"the table's memory summary:\n{table[-1200:]}")
    R.expect(document["profagent_memory"]["failed_allocations"] == 0 and document["profagent_memory"]["failed_calls"] == 1,
             f"profagent_memory {document['profagent_memory']}")
    return "a second cudaHostRegister is a failed call with error 712, not an out-of-memory"


CASES = {
    "memory_address_reuse": case_address_reuse,
    "memory_graph_nodes": case_graph_nodes,
    "memory_zero_bytes": case_zero_bytes,
    "memory_refused_registration": case_refused_registration,
}
