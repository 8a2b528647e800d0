"""Trace checks for programs annotated with NVTX only (tests/preload/programs/nvtx_app.cu):
every range and mark of every NVTX copy in the trace, kernels attributed to the innermost
range, domains, categories, colours, payloads, names of threads, start/end ranges across
threads; and the agent stepping aside for another tool's NVTX_INJECTION64_PATH."""
from checkers import (Trace, clean_devsim_run, check_links, check_table, expect, ns,
                      only_file, profagent_lines, summary_rows)


def events_of(trace, ph):
    return [e for e in trace.document["traceEvents"] if e.get("ph") == ph]


def thread_names(trace):
    return {e["tid"]: e["args"]["name"] for e in events_of(trace, "M") if e.get("name") == "thread_name"}


def innermost_range(trace, host):
    """The innermost user_annotation slice around a host call on its thread: the one opened last
    (ranges of two domains may overlap without nesting)."""
    around = [r for r in trace.ranges if r["tid"] == host["tid"] and r["pid"] == host["pid"]
              and r["start_ns"] <= host["start_ns"] and host["end_ns"] <= r["end_ns"]]
    return max(around, key=lambda r: (r["start_ns"], r["start_ns"] - r["end_ns"])) if around else None


def check_counts(trace, n):
    wanted = {"iteration": n, "registered_step": n, "library_a_work": n, "library_b_work": n, "wide_range": 1,
              "interleaved_outer": 1, "interleaved_inner": 1}
    for name, count in wanted.items():
        found = [r for r in trace.ranges if r["name"] == name]
        expect(len(found) == count, f"{count} {name} ranges pushed, {len(found)} in the trace")
    marks = [e for e in events_of(trace, "i") if e.get("name") == "iteration_mark"]
    expect(len(marks) == n, f"{n} marks, {len(marks)} instant events")
    expect(all(m.get("cat") == "user_annotation" and m.get("s") == "t" for m in marks),
           f"marks are not thread-scoped user_annotation instants: {marks[:1]}")


def check_domain_args(trace, n):
    """The domain range: its domain, category and its name, colour and payload in args; nested
    in its iteration."""
    steps = sorted((r for r in trace.ranges if r["name"] == "registered_step"), key=lambda r: r["ts"])
    payloads = []
    for r in steps:
        args = r.get("args", {})
        expect(args.get("domain") == "app", f"registered_step has domain {args.get('domain')!r}")
        expect(args.get("category") == 7 and args.get("category name") == "compute",
               f"registered_step category args: {args}")
        expect(args.get("color") == "#00ff00", f"registered_step colour {args.get('color')!r}")
        payloads.append(args.get("payload"))
        outer = [o for o in trace.ranges if o["name"] == "iteration" and o["tid"] == r["tid"]
                 and o["start_ns"] <= r["start_ns"] and r["end_ns"] <= o["end_ns"]]
        expect(len(outer) == 1, f"registered_step at {r['ts']} is not inside one iteration range")
    expect(payloads == [100 + i for i in range(n)], f"payloads {payloads}, wanted 100..{99 + n}")


def check_schema_payload(trace):
    """A payload described by a registered schema is decoded field by field, the enum by name."""
    found = [r for r in trace.ranges if r["name"] == "collective"]
    expect(len(found) == 1, f"one collective range pushed, {len(found)} in the trace")
    payload = found[0].get("args", {}).get("payload")
    wanted = {"comm": 0xC0FFEE, "bytes": 4096, "op": "Max", "tag": "ring"}
    expect(payload == wanted, f"collective payload {payload}, wanted {wanted}")


def check_attribution(trace):
    """Each kernel and copy carries the External id of the innermost range around its launch;
    the one kernel launched outside every push range (by the thread that ends the start/end
    range, which attributes nothing) carries its own launch's."""
    names = thread_names(trace)
    for d in trace.device:
        host = trace.launcher(d)
        scope = innermost_range(trace, host)
        if scope is None:
            expect("nvtx-worker" in names.get(host["tid"], "") and "app_kernel" in d["name"],
                   f"{d['name']} at {d['ts']}: its launch is inside no range")
            expect(d["args"].get("External id") == host["args"]["External id"],
                   f"{d['name']} launched outside ranges carries External id {d['args'].get('External id')}")
            continue
        expect(d["args"].get("External id") == scope["args"]["External id"],
               f"{d['name']} at {d['ts']}: External id {d['args'].get('External id')}, "
               f"innermost range {scope['name']} has {scope['args']['External id']}")
    expected = {"app_kernel": ("iteration", "registered_step", "collective", "interleaved_inner"),
                "library_kernel": ("library_a_work", "library_b_work")}
    for d in trace.device:
        scope = innermost_range(trace, trace.launcher(d))
        for kernel, ranges in expected.items():
            if kernel in d["name"] and scope is not None:
                expect(scope["name"] in ranges, f"{d['name']} attributed to {scope['name']}")
    outer = next(r for r in trace.ranges if r["name"] == "interleaved_outer")
    inner = next(r for r in trace.ranges if r["name"] == "interleaved_inner")
    expect(outer["start_ns"] < inner["start_ns"] < outer["end_ns"] < inner["end_ns"],
           "interleaved ranges: the default-domain pop did not close the default-domain range")
    gpu = [e for e in trace.complete if e.get("cat") == "gpu_user_annotation"]
    for name in ("iteration", "registered_step", "library_a_work", "library_b_work"):
        expect(any(e["name"] == name for e in gpu), f"no gpu_user_annotation for {name} on the device rows")


def check_stream_name(trace):
    """The stream named with nvtxNameCudaStreamA: its device row says so, and it is the row of
    the program's kernels."""
    rows = {(e["pid"], e["tid"]): e["args"]["name"] for e in events_of(trace, "M") if e.get("name") == "thread_name"}
    named = [key for key, name in rows.items() if name.endswith(" app stream")]
    expect(len(named) == 1, f"no single device row named 'app stream': {sorted(set(rows.values()))}")
    kernels = [(d["pid"], d["tid"]) for d in trace.device if "app_kernel" in d["name"]]
    expect(kernels and all(k == named[0] for k in kernels), f"app_kernel rows {set(kernels)}, named row {named[0]}")


def check_cross_thread(trace):
    """The start/end range: one async slice begun on the main thread, ended on the worker, both
    threads named by nvtxNameOsThread."""
    names = thread_names(trace)
    begins = [e for e in events_of(trace, "b") if e.get("name") == "cross_thread"]
    ends = [e for e in events_of(trace, "e") if e.get("name") == "cross_thread"]
    expect(len(begins) == 1 and len(ends) == 1, f"cross_thread: {len(begins)} begin, {len(ends)} end events")
    b, e = begins[0], ends[0]
    expect(b["id"] == e["id"] and b["cat"] == e["cat"], "cross_thread begin and end differ in id or cat")
    expect(e["ts"] >= b["ts"], "cross_thread ends before it begins")
    expect(b["tid"] != e["tid"], "cross_thread begins and ends on one thread")
    expect("nvtx-main" in names.get(b["tid"], ""), f"the starting thread is named {names.get(b['tid'])!r}")
    expect("nvtx-worker" in names.get(e["tid"], ""), f"the ending thread is named {names.get(e['tid'])!r}")


def check_nvtx_ranges(context):
    wanted, trace = clean_devsim_run(context)
    n = wanted["iterations"]
    check_counts(trace, n)
    check_domain_args(trace, n)
    check_schema_payload(trace)
    check_links(trace)
    check_attribution(trace)
    check_cross_thread(trace)
    check_stream_name(trace)
    config = trace.document.get("profagent_config", {})
    expect(config.get("NVTX_INJECTION64_PATH") == "profagent",
           f"the trace's configuration gives NVTX to {config.get('NVTX_INJECTION64_PATH')!r}")
    # The start/end range is a table row too: its slice is the async pair's begin to end.
    b = next(e for e in events_of(trace, "b") if e.get("name") == "cross_thread")
    e = next(e for e in events_of(trace, "e") if e.get("name") == "cross_thread")
    trace.ranges.append({"name": "cross_thread", "start_ns": ns(b["ts"]), "end_ns": ns(e["ts"])})
    rows = check_table(trace, summary_rows(context.out_dir))
    context.summary = (f"{len(trace.ranges)} ranges, {len(trace.device)} device records attributed, "
                       f"{rows} table rows recomputed")


def check_nvtx_other_tool_kept(context):
    """Another tool's NVTX_INJECTION64_PATH: kept, no NVTX range recorded, said once, and the
    trace's configuration says who has NVTX."""
    run = context.run
    expect(run.returncode == 0, f"the program exited with {run.returncode}")
    baseline = context.run_without_agent()
    expect(baseline.stdout == run.stdout, "the program's output changed under the agent")
    trace = Trace(only_file(context.out_dir, "*.trace.json"))
    instants = [e for e in events_of(trace, "i") if e.get("cat") == "user_annotation"]
    expect(not trace.ranges and not instants and not events_of(trace, "b"),
           f"NVTX events recorded although another tool owns NVTX: {[r['name'] for r in trace.ranges][:5]}")
    expect(trace.device, "no device work recorded")
    said = [line for line in profagent_lines(run.stderr) if "NVTX_INJECTION64_PATH" in line]
    expect(len(said) == 1 and "/nonexistent/libother_nvtx_tool.so" in said[0],
           f"expected one line naming the other tool, got {said}")
    config = trace.document.get("profagent_config", {})
    expect(config.get("NVTX_INJECTION64_PATH") == "another tool: /nonexistent/libother_nvtx_tool.so",
           f"the trace's configuration says {config.get('NVTX_INJECTION64_PATH')!r} about NVTX")
    context.summary = "other tool kept, said once, no NVTX range recorded"


# ---- torch operators from torch's NVTX names (programs/torch_nvtx_app.cu) --------------------

def shapes_text(sizes):
    """torch's str() of a list of int lists, as the table's Input Shapes column writes it."""
    return "[" + ", ".join("[" + ", ".join(str(d) for d in s) + "]" for s in sizes) + "]"


def check_emitted_ops(trace, emitted):
    """Each operator emitted is one cpu_op: its name, thread, Record function id, Sequence number
    and Input Dims exactly as the program named them; nothing else became an operator."""
    ops = [e for e in trace.complete if e.get("cat") == "cpu_op"]
    expect(len(ops) == len(emitted), f"{len(emitted)} operators emitted, {len(ops)} cpu_op events")
    by_id = {e["args"].get("Record function id"): e for e in ops if "Record function id" in e["args"]}
    unnamed = sorted((e for e in ops if "Record function id" not in e["args"]), key=lambda e: e["ts"])
    for op in emitted:
        if op["op_id"]:
            found = by_id.get(op["op_id"])
            expect(found is not None, f"operator {op['name']} op_id {op['op_id']} is not in the trace")
        else:
            found = next((e for e in unnamed if e["name"] == op["name"]), None)
            expect(found is not None, f"operator {op['name']} without op_id is not in the trace")
            unnamed.remove(found)
        args = found["args"]
        expect(found["name"] == op["name"], f"op_id {op['op_id']}: name {found['name']!r}, emitted {op['name']!r}")
        expect(found["tid"] == op["tid"], f"{op['name']} on thread {found['tid']}, emitted on {op['tid']}")
        expect(args.get("Sequence number", -1) == op["seq"], f"{op['name']}: Sequence number {args.get('Sequence number')} != {op['seq']}")
        if op["sizes"] is not None:
            expect(args.get("Input Dims") == op["sizes"], f"{op['name']}: Input Dims {args.get('Input Dims')} != {op['sizes']}")
        else:
            expect("Input Dims" not in args, f"{op['name']}: Input Dims although none were recorded")
    return ops


def check_fwdbwd(trace, ops, emitted):
    """Each backward function is linked to the forward op with its sequence number that started
    last before it (Kineto's rule): one fwdbwd flow, Fwd thread id = the forward op's thread."""
    flows = [e for e in trace.document["traceEvents"] if e.get("cat") == "fwdbwd"]
    starts = {(e["tid"], ns(e["ts"])): e for e in flows if e["ph"] == "s"}
    ends = {(e["tid"], ns(e["ts"])): e for e in flows if e["ph"] == "f"}
    backward = [e for e in ops if e["name"].endswith(("Backward0",)) and e["args"].get("Sequence number", -1) >= 0]
    expect(backward, "no backward function among the operators")
    for b in backward:
        seq = b["args"]["Sequence number"]
        forwards = [e for e in ops if e["args"].get("Sequence number") == seq and e not in backward
                    and e["start_ns"] <= b["start_ns"]]
        expect(forwards, f"{b['name']} seq {seq}: no forward op emitted before it")
        f = max(forwards, key=lambda e: e["start_ns"])
        end = ends.get((b["tid"], b["start_ns"]))
        start = starts.get((f["tid"], f["start_ns"]))
        expect(end is not None and start is not None and end["id"] == start["id"] and end.get("bp") == "e",
               f"{b['name']} seq {seq}: no fwdbwd flow from {f['name']} at {f['ts']}")
        expect(b["args"].get("Fwd thread id") == f["tid"],
               f"{b['name']}: Fwd thread id {b['args'].get('Fwd thread id')} != {f['tid']}")
    expect(len(ends) == len(backward), f"{len(backward)} backward functions, {len(ends)} fwdbwd flow ends")
    return len(backward)


def expected_operator_rows(trace, ops, emitted):
    """The operator rows recomputed from the emitted list (names, calls, shapes) and the trace's
    slices: total CPU = the op's slice, self CPU = minus its direct children on its thread
    (operators and runtime calls), CUDA = the kernels whose External id is the op's (self) or
    one of its descendants' (total)."""
    host = sorted([e for e in ops] + trace.runtime, key=lambda e: (e["tid"], e["start_ns"], -e["end_ns"]))
    parent = {}
    stack = []
    for e in host:
        while stack and not (stack[-1]["tid"] == e["tid"] and e["end_ns"] <= stack[-1]["end_ns"]):
            stack.pop()
        parent[id(e)] = stack[-1] if stack else None
        if e.get("cat") == "cpu_op":
            stack.append(e)
    by_external = {}
    for d in trace.device:
        by_external[d["args"].get("External id")] = by_external.get(d["args"].get("External id"), 0) + d["end_ns"] - d["start_ns"]
    rows = {}
    for e in ops:
        key = (e["name"], shapes_text(e["args"].get("Input Dims", [])))
        row = rows.setdefault(key, {"count": 0, "cpu_total_ns": 0, "self_cpu_ns": 0, "self_cuda_ns": 0, "cuda_total_ns": 0})
        row["count"] += 1
        row["cpu_total_ns"] += e["end_ns"] - e["start_ns"]
        children = sum(c["end_ns"] - c["start_ns"] for c in host if parent[id(c)] is e)
        row["self_cpu_ns"] += e["end_ns"] - e["start_ns"] - children
        own = by_external.get(e["args"]["External id"], 0)
        row["self_cuda_ns"] += own
        row["cuda_total_ns"] += own
        up = parent[id(e)]
        while up is not None:
            rows_key = (up["name"], shapes_text(up["args"].get("Input Dims", [])))
            rows.setdefault(rows_key, {"count": 0, "cpu_total_ns": 0, "self_cpu_ns": 0, "self_cuda_ns": 0, "cuda_total_ns": 0})
            rows[rows_key]["cuda_total_ns"] += own
            up = parent[id(up)]
    calls = {}
    for op in emitted:
        key = (op["name"], shapes_text(op["sizes"] or []))
        calls[key] = calls.get(key, 0) + 1
    expect({k: r["count"] for k, r in rows.items()} == calls, "operator calls per (name, shapes) differ from those emitted")
    return rows


def check_operator_table(trace, ops, emitted, summary):
    wanted = expected_operator_rows(trace, ops, emitted)
    got = {(r["name"], r["input_shapes"]): r for r in summary["rows"] if r["kind"] == "operator"}
    expect(set(got) == set(wanted), f"operator rows {sorted(set(got) ^ set(wanted))[:6]} differ")
    for key, row in wanted.items():
        found = {k: got[key][k] for k in row}
        expect(found == row, f"operator row {key}: table {found}, recomputed {row}")
    return len(wanted)


def check_torch_ops(context):
    wanted, trace = clean_devsim_run(context)
    ops = check_emitted_ops(trace, wanted["ops"])
    links = check_fwdbwd(trace, ops, wanted["ops"])
    for d in trace.device:  # each kernel belongs to the innermost operator around its launch
        launch = trace.launcher(d)
        around = [o for o in ops if o["tid"] == launch["tid"] and o["start_ns"] <= launch["start_ns"]
                  and launch["end_ns"] <= o["end_ns"]]
        expect(around, f"kernel at {d['ts']} launched outside every operator")
        inner = min(around, key=lambda o: o["end_ns"] - o["start_ns"])
        expect(d["args"].get("External id") == inner["args"]["External id"],
               f"kernel at {d['ts']} attributed to {d['args'].get('External id')}, innermost op {inner['name']}")
    user = [r for r in trace.ranges if r["name"] == "Optimizer.step#SGD.step"]
    expect(len(user) == wanted["steps"], f"{wanted['steps']} record_function ranges, {len(user)} user_annotation")
    rows = check_operator_table(trace, ops, wanted["ops"], summary_rows(context.out_dir))
    context.summary = f"{len(ops)} operators, {links} backward links, {rows} operator rows recomputed"


def check_nvtx_range_marker(context):
    """PROFAGENT_STEP_ON=range:^app::registered_step$ (a domain range, as `domain::message`) with
    skip_first=1, active=1: one window, step 1, from the first registered_step to the second:
    iteration 0's mark and library ranges, none of the other iterations'."""
    run = context.run
    expect(run.returncode == 0, f"the program exited with {run.returncode}")
    trace = Trace(only_file(context.out_dir, "*.trace.json"))
    steps = sorted(r["name"] for r in trace.ranges if r["name"].startswith("ProfilerStep#"))
    expect(steps == ["ProfilerStep#1"], f"the window holds steps {steps}, wanted ProfilerStep#1")
    marks = [e for e in events_of(trace, "i") if e.get("name") == "iteration_mark"]
    expect(len(marks) == 1, f"{len(marks)} iteration marks in the window, wanted iteration 0's only")
    for name in ("library_a_work", "library_b_work"):
        found = [r for r in trace.ranges if r["name"] == name]
        expect(len(found) == 1, f"{len(found)} {name} ranges in the window, wanted iteration 0's only")
    context.summary = "range: marker on a domain range cut the window at its steps"
