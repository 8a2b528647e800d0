"""Every summary of docs/report.md recomputed from trace_model.Trace, in the shape of the
`profagent report --format json` schema, written from the document alone (it shares no code
with exporters/summaries). Readings of the document where it leaves a choice are marked READING.
"""
import re
from collections import OrderedDict

PHASES = ("Dataloader", "Forward", "Backward", "Optimization")
DIOPI_OPTIMIZERS = {"diopiSgd", "diopiAdam", "diopiAdamW", "diopiAdamax", "diopiAdadelta", "diopiAdagrad",
                    "diopiRmsprop", "diopiLamb", "diopiMomentum"}
BACKWARD_OP = re.compile(r"(Backward\d*|_backward)$")
COMM = re.compile(r"nccl|rccl|hccl", re.I)


def merged(intervals):
    """Sum of the lengths of the union of [start, end) intervals."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def intersection_length(a, b):
    a, b, total, i, j = union(a), union(b), 0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def pct(part, base):
    return 100.0 * part / base if base else 0.0


def stat(values, base):
    if not values:
        return None
    total = sum(values)
    return {"total_ns": total, "avg_ns": total // len(values), "max_ns": max(values), "min_ns": min(values),
            "ratio": pct(total, base)}


def inside(t, intervals):
    return any(s <= t < e for s, e in intervals)


class Span:
    """Which records are summarised: those of steps A-B, or the whole trace as one "Window"."""

    def __init__(self, trace, steps_range=None):
        lo, hi = steps_range or (None, None)
        self.steps = sorted((s for s in trace.steps if (lo is None or s.number >= lo) and (hi is None or s.number <= hi)),
                            key=lambda s: s.start)
        self.has_steps = bool(trace.steps)
        self.outside_host = self.outside_device = 0
        if self.has_steps:
            self._assign(trace)
        else:
            records = trace.host + trace.device
            start, end = min(r.start for r in records), max(r.end for r in records)
            self.window = _Window(start, end)
            self.steps = [self.window]
            for r in records:
                r.step = self.window
        self.host = [r for r in trace.host if r.kind != "step" and r.step is not None]
        # --steps: what the table sees is the chosen steps' records (the steps themselves too).
        self.selected_host = [r for r in trace.host if r.step is not None] if steps_range else None
        self.device = [d for d in trace.device if d.step is not None]
        self.cpu_ns = merged([(s.start, s.end) for s in self.steps])
        self.gpu_ns = merged([(d.start, d.end) for d in self.device])

    def _assign(self, trace):
        # READING: a step is [start, end); a record starting where one step ends and the next
        # begins belongs to the later step.
        def step_of(t):
            for s in self.steps:
                if s.start <= t < s.end:
                    return s
            return None
        for r in trace.host:
            if r.kind == "step":
                r.step = r if r in self.steps else None
                continue
            r.step = step_of(r.start)
            self.outside_host += r.step is None
        for d in trace.device:
            d.step = d.call.step if d.call is not None else step_of(d.start)
            self.outside_device += d.step is None


class _Window:
    def __init__(self, start, end):
        self.start, self.end, self.step, self.number, self.name = start, end, None, None, "Window"


def phase_rules(span):
    """Per phase, (how found, predicate over records, kind of source). READING: the rule is
    chosen once per trace (the first with a match among the summarised records)."""
    def rng(*prefixes):
        return lambda r: r.kind == "range" and r.name.startswith(prefixes)
    rules = {
        "Dataloader": [("ranges enumerate(DataLoader)#", rng("enumerate(DataLoader)#"))],
        "Forward": [("ranges nn.Module:", rng("nn.Module: "))],
        "Backward": [("ranges autograd.backward#", rng("autograd.backward#")),
                     ("operators autograd::engine::evaluate_function:",
                      lambda r: r.kind == "operator" and r.name.startswith("autograd::engine::evaluate_function: ")),
                     ("operators named *Backward", lambda r: r.kind == "operator" and BACKWARD_OP.search(r.name))],
        "Optimization": [("ranges Optimizer.step#/zero_grad#", rng("Optimizer.step#", "Optimizer.zero_grad#")),
                         ("DIOPI optimizer operators", lambda r: r.kind == "operator" and r.name in DIOPI_OPTIMIZERS)],
    }
    # Every rule of a phase that matches anything contributes: their intervals are merged.
    chosen = {}
    for phase, candidates in rules.items():
        used = [(how, pred) for how, pred in candidates if any(pred(r) for r in span.host)]
        if used:
            preds = [pred for _, pred in used]
            chosen[phase] = ("; ".join(how for how, _ in used), lambda r, preds=preds: any(p(r) for p in preds))
    return chosen


def is_phase_range(r):
    return r.kind == "range" and r.name.startswith(("enumerate(DataLoader)#", "nn.Module: ", "autograd.backward#",
                                                    "Optimizer.step#", "Optimizer.zero_grad#"))


class Phases:
    """Per step and phase: the intervals (records) forming it."""

    def __init__(self, trace, span):
        self.sources = {}
        self.records = {id(s): {p: [] for p in PHASES} for s in span.steps}
        rules = phase_rules(span)
        for phase, (how, pred) in rules.items():
            self.sources[phase] = how
            for r in span.host:
                if pred(r):
                    self.records[id(r.step)][phase].append(r)
        # A phase's intervals are clipped to their step.
        bounds = {id(s): (s.start, s.end) for s in span.steps}
        self.intervals = {k: {p: [(max(r.start, bounds[k][0]), min(r.end, bounds[k][1])) for r in v[p]] for p in PHASES}
                          for k, v in self.records.items()}
        if "Forward" not in rules:
            self._infer_forward(trace, span)

    def _infer_forward(self, trace, span):
        found = False
        for s in span.steps:
            iv = self.intervals[id(s)]
            limit_from = iv["Backward"] or iv["Optimization"]
            limit = min(a for a, _ in limit_from) if limit_from else None
            others = iv["Dataloader"] + iv["Backward"] + iv["Optimization"]
            ops = sorted((r for r in span.host if r.step is s and r.kind == "operator"
                          and trace.operator_parent(r) is None and (limit is None or r.start < limit)
                          and not inside(r.start, others)), key=lambda r: (r.start, r.index))
            if ops:
                found = True
                self.records[id(s)]["Forward"] = ops
                iv["Forward"] = [(max(ops[0].start, s.start), min(max(r.end for r in ops), s.end))]
        if found:
            self.sources["Forward"] = "inferred"


def device_in(span, intervals_by_step):
    """Device records of the span whose issuing call starts inside the step's intervals."""
    out = []
    for d in span.device:
        t = d.call.start if d.call is not None else d.start
        if inside(t, intervals_by_step.get(id(d.step), [])):
            out.append(d)
    return out


def overview(trace, span, phases):
    base = span.cpu_ns
    host = span.host
    ops = [r for r in host if r.kind == "operator"]
    top = [r for r in ops if trace.operator_parent(r) is None]
    inner = [r for r in ops if trace.operator_parent(r) is not None]
    calls = [r for r in host if r.kind == "call"]
    user = [r for r in host if r.kind == "range" and not is_phase_range(r)]
    rows = [("ProfileStep" if span.has_steps else "Window", len(span.steps), span.cpu_ns), ("CudaRuntime", len(calls), _m(calls)),
            ("Operator", len(top), _m(top)), ("OperatorInner", len(inner), _m(inner)),
            ("UserDefined", len(user), _m(user))]
    for p in PHASES:
        n = sum(1 for s in span.steps if phases.intervals[id(s)][p])
        t = sum(merged(phases.intervals[id(s)][p]) for s in span.steps)
        rows.append((p, n, t))
    cpu = [{"type": n, "calls": c, "time_ns": t, "ratio": pct(t, base)} for n, c, t in rows]
    dev = span.device
    kinds = [("Kernel", [d for d in dev if d.kind == "kernel"]), ("Memcpy", [d for d in dev if d.kind == "memcpy"]),
             ("Memset", [d for d in dev if d.kind == "memset"]),
             ("Communication", [d for d in dev if d.kind == "kernel" and COMM.search(d.name)])]
    gpu = [{"type": n, "calls": len(rs), "time_ns": _m(rs), "ratio": pct(_m(rs), base)} for n, rs in kinds]
    return {"cpu": cpu, "gpu": gpu}


def _m(records):
    return merged([(r.start, r.end) for r in records])


def model(trace, span, phases):
    cpu_base = [s.end - s.start for s in span.steps]
    gpu_step = {id(s): [] for s in span.steps}
    for d in span.device:
        gpu_step[id(d.step)].append(d)
    gpu_base = [_m(gpu_step[id(s)]) for s in span.steps]
    rows = [{"name": "ProfileStep" if span.has_steps else "Window", "calls": len(span.steps), "cpu": stat(cpu_base, sum(cpu_base)),
             "gpu": stat(gpu_base, sum(gpu_base))}]
    in_phase = set()
    for p in PHASES:
        ivs = {id(s): phases.intervals[id(s)][p] for s in span.steps}
        devs = device_in(span, ivs)
        in_phase.update(id(d) for d in devs)
        having = [s for s in span.steps if ivs[id(s)]]
        cpu = [merged(ivs[id(s)]) for s in having]
        gpu = [_m([d for d in devs if d.step is s]) for s in having]
        rows.append({"name": p, "calls": len(having), "cpu": stat(cpu, sum(cpu_base)), "gpu": stat(gpu, sum(gpu_base))})
    other_cpu = sum(max(0, (s.end - s.start) - merged(sum((phases.intervals[id(s)][p] for p in PHASES), [])))
                    for s in span.steps)
    other_gpu = sum(_m([d for d in gpu_step[id(s)] if id(d) not in in_phase]) for s in span.steps)
    rows.append({"name": "Others", "calls": None,
                 "cpu": {"total_ns": other_cpu, "ratio": pct(other_cpu, sum(cpu_base))},
                 "gpu": {"total_ns": other_gpu, "ratio": pct(other_gpu, sum(gpu_base))}})
    return {"rows": rows}


def distributed(span):
    base = "ProfileStep" if span.has_steps else "Window"
    kernels = [d for d in span.device if d.kind == "kernel"]
    comm = [(d.start, d.end) for d in kernels if COMM.search(d.name)]
    comp = [(d.start, d.end) for d in kernels if not COMM.search(d.name)]
    rows = [(base, span.cpu_ns), ("Communication", merged(comm)), ("Computation", merged(comp)),
            ("Overlap", intersection_length(comm, comp))]
    return {"rows": [{"name": n, "time_ns": t, "ratio": pct(t, span.cpu_ns)} for n, t in rows]}


def _dev_ns(records):
    return sum(d.dur for d in records)


def _group(records, key=lambda r: r.name):
    groups = OrderedDict()
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return groups


def _host_rows(trace, records, cpu_base, gpu_base, kind, detail, depth=0):
    rows = []
    groups = _group(records)
    for name, calls in groups.items():
        cpu = [r.dur for r in calls]
        gpu = [_dev_ns(trace.device_issued_within(r)) for r in calls]
        row = {"name": name, "calls": len(calls), "cpu": stat(cpu, cpu_base), "gpu": stat(gpu, gpu_base),
               "depth": depth, "kind": kind}
        rows.append(row)
        if detail:
            row["children"] = _detail_children(trace, calls, row, depth + 1)
    return rows


def _detail_children(trace, calls, parent, depth):
    p_cpu = parent["cpu"]["total_ns"] if parent["cpu"] else 0
    p_gpu = parent["gpu"]["total_ns"] if parent["gpu"] else 0
    inner = [c for r in calls for c in _inner_operators(r)]
    rows = _host_rows(trace, inner, p_cpu, p_gpu, "operator", True, depth)
    own = [d for r in calls for d in trace.device_issued_self(r)]
    for name, recs in _group(own).items():
        rows.append({"name": name, "calls": len(recs), "cpu": None, "gpu": stat([d.dur for d in recs], p_gpu),
                     "depth": depth, "kind": recs[0].kind})
    return rows


def _inner_operators(r):
    out, stack = [], list(r.children)
    while stack:
        c = stack.pop()
        if c.kind == "operator":
            out.append(c)
        else:
            stack.extend(c.children)
    return out


def _per_thread(records, thread_sep, build):
    if not thread_sep:
        return {"threads": [{"thread": "All threads merged", "rows": build(records)}]}
    groups = _group(records, key=lambda r: r.thread[1])
    return {"threads": [{"thread": t, "rows": build(rs)} for t, rs in groups.items()]}


def operator(trace, span, thread_sep=False, detail=False):
    top = [r for r in span.host if r.kind == "operator" and trace.operator_parent(r) is None]

    def build(records):
        cpu_base = sum(r.dur for r in records)
        gpu_base = sum(_dev_ns(trace.device_issued_within(r)) for r in records)
        return _host_rows(trace, records, cpu_base, gpu_base, "operator", detail)
    return _per_thread(top, thread_sep, build)


def user_defined(trace, span, thread_sep=False):
    # READING: phase ranges (enumerate(DataLoader)#, Optimizer.step#, ...) are not user ranges,
    # as in the Overview's UserDefined row.
    ranges = [r for r in span.host if r.kind == "range" and not is_phase_range(r)]
    return _per_thread(ranges, thread_sep,
                       lambda rs: _host_rows(trace, rs, span.cpu_ns, span.gpu_ns, "range", False))


def kernel(span):
    kernels = [d for d in span.device if d.kind == "kernel"]
    base = sum(d.dur for d in kernels)
    return {"rows": [{"name": n, "calls": len(rs), "cpu": None, "gpu": stat([d.dur for d in rs], base)}
                     for n, rs in _group(kernels).items()]}


DIRECTION = re.compile(r"^Memcpy (\S+)")


def memory_manipulation(trace, span):
    calls = [r for r in span.host if r.kind == "call" and re.search(r"memcpy|memset", r.name, re.I)]

    def key(call):
        copies = sorted((d for d in call.issued if d.kind == "memcpy"), key=lambda d: (d.start, d.index))
        m = DIRECTION.match(copies[0].name) if copies else None
        return "%s (%s)" % (call.name, m.group(1)) if m else call.name
    rows = []
    for name, cs in _group(calls, key).items():
        gpu = [sum(d.dur for d in c.issued if d.kind in ("memcpy", "memset")) for c in cs]
        rows.append({"name": name, "calls": len(cs), "cpu": stat([c.dur for c in cs], span.cpu_ns),
                     "gpu": stat(gpu, span.gpu_ns), "kind": "call"})
    orphans = [d for d in span.device if d.kind in ("memcpy", "memset") and d.call is None]
    for name, ds in _group(orphans).items():
        rows.append({"name": name, "calls": len(ds), "cpu": None, "gpu": stat([d.dur for d in ds], span.gpu_ns),
                     "kind": ds[0].kind})
    return {"rows": rows}


def perf(span, phases):
    if not span.has_steps:  # no ProfilerStep: no per-step figures
        nothing = {"avg_s": None, "max_s": None, "min_s": None}
        return {"steps": [], "reader_ratio": None, "batch_cost": nothing, "reader_cost": nothing,
                "ips": {"avg": None, "max": None, "min": None}}
    steps = []
    for s in span.steps:
        steps.append({"step": s.number, "batch_cost_ns": s.end - s.start,
                      "reader_cost_ns": merged(phases.intervals[id(s)]["Dataloader"])})
    batch = [x["batch_cost_ns"] for x in steps]
    reader = [x["reader_cost_ns"] for x in steps]
    ips = [1e9 / b for b in batch if b]
    out = {"steps": steps, "reader_ratio": pct(sum(reader), sum(batch)),
           "batch_cost": _seconds(batch), "reader_cost": _seconds(reader),
           "ips": {"avg": len(batch) * 1e9 / sum(batch) if sum(batch) else 0,
                   "max": max(ips) if ips else 0, "min": min(ips) if ips else 0}}
    return out


def _seconds(values):
    if not values:
        return {"avg_s": 0, "max_s": 0, "min_s": 0}
    return {"avg_s": sum(values) / len(values) / 1e9, "max_s": max(values) / 1e9, "min_s": min(values) / 1e9}


def step_trace(trace, span, phases):
    if not span.has_steps:  # no ProfilerStep: no step trace
        return {"steps": [], "average": None}
    steps = []
    for s in span.steps:
        recs = phases.records[id(s)]
        fwd_iv, bwd_iv = phases.intervals[id(s)]["Forward"], phases.intervals[id(s)]["Backward"]
        ops = [r for r in span.host if r.step is s and r.kind == "operator" and trace.operator_parent(r) is None]
        fwd = sorted((r for r in ops if inside(r.start, fwd_iv)), key=lambda r: (r.start, r.index))
        bwd = sorted((r for r in ops if inside(r.start, bwd_iv)), key=lambda r: (r.start, r.end, r.index))
        if phases.sources.get("Forward") == "inferred" and recs["Forward"]:
            fwd = recs["Forward"]
        fp, bp = (fwd[0] if fwd else None), (bwd[-1] if bwd else None)
        row = {"step": s.number, "fp": fp.name if fp else None, "bp": bp.name if bp else None}
        if fp and bp:
            row.update(iteration_gap_ns=fp.start - s.start, fp_bp_ns=bp.end - fp.start, tail_ns=s.end - bp.end)
        steps.append(row)
    full = [r for r in steps if "tail_ns" in r]
    average = {k: sum(r[k] for r in full) // len(full) for k in ("iteration_gap_ns", "fp_bp_ns", "tail_ns")} if full else {}
    return {"steps": steps, "average": average}


def op_family(name):
    base = name.rsplit(": ", 1)[-1] if ": " in name else name
    base = base.rsplit("::", 1)[-1]
    if re.match(r"^diopi[A-Z]", base):
        base = base[len("diopi"):]
        while True:
            m = re.search(r"(Backward|Inp|Scalar|Tensor|1d|2d|3d)$", base)
            if not m or m.start() == 0:
                break
            base = base[:m.start()]
    else:
        while True:
            m = re.search(r"(Backward\d+|_backward|_)$", base)
            if not m or m.start() == 0:
                break
            base = base[:m.start()]
        base = base.lstrip("_")
    return base or name


def op_type(trace, span, limit=20):
    ops = [r for r in span.host if r.kind == "operator"]
    has_device = bool(span.device)
    rows = OrderedDict()
    for r in ops:
        fam = op_family(r.name)
        row = rows.setdefault(fam, {"type": fam, "calls": 0, "device_ns": 0, "cpu_ns": 0})
        row["calls"] += 1
        row["device_ns"] += _dev_ns(trace.device_issued_self(r))
        row["cpu_ns"] += max(0, r.dur - sum(c.dur for c in r.children))  # never below 0 (µs rounding)
    metric = "device_ns" if has_device else "cpu_ns"
    base = sum(r[metric] for r in rows.values())
    for r in rows.values():
        r["ratio"] = pct(r[metric], base)
    ordered = sorted(rows.values(), key=lambda r: -r[metric])
    return {"metric": "device" if has_device else "cpu", "rows": ordered, "limit": limit}


def key_averages(trace, span):
    rows = OrderedDict()
    # The exit table: every host record of the trace (or of --steps), not only those in steps.
    for r in (span.selected_host if span.selected_host is not None else trace.host):
        row = rows.setdefault(r.name, {"name": r.name, "calls": 0, "cpu_total_ns": 0, "self_cpu_ns": 0,
                                       "cuda_total_ns": 0})
        row["calls"] += 1
        row["cpu_total_ns"] += r.dur
        row["self_cpu_ns"] += max(0, r.dur - sum(c.dur for c in r.children))
        row["cuda_total_ns"] += _dev_ns(trace.device_issued_within(r))
    return {"rows": list(rows.values())}


def memory(trace):
    devices = OrderedDict()
    for _, args in trace.memory:
        d = devices.setdefault(args.get("Device Id"), {"device": args.get("Device Id"), "peak_allocated": 0,
                                                        "peak_reserved": 0})
        d["peak_allocated"] = max(d["peak_allocated"], args.get("Total Allocated", 0))
        d["peak_reserved"] = max(d["peak_reserved"], args.get("Total Reserved", 0))
    return {"devices": list(devices.values())}


def device(trace, span):
    """GPU<n>: merged kernel time of device n over the steps' time, each step widened to cover
    its own kernels on that device (docs/report.md): never above 100%."""
    rows = []
    kernels = [d for d in span.device if d.kind == "kernel"]
    for dev in sorted({d.device for d in kernels}, key=str):
        mine = [d for d in kernels if d.device == dev]
        widened = []
        for s in span.steps:
            own = [d for d in mine if d.step is s]
            widened.append((min([s.start] + [d.start for d in own]), max([s.end] + [d.end for d in own])))
        rows.append({"name": "GPU%s" % dev, "utilization": pct(_m(mine), merged(widened))})
    return {"rows": rows}


def compute(trace, steps_range=None, thread_sep=False, op_detail=False):
    span = Span(trace, steps_range)
    phases = Phases(trace, span)
    return span, phases, {
        "device": device(trace, span),
        "overview": overview(trace, span, phases),
        "model": model(trace, span, phases),
        "distributed": distributed(span),
        "operator": operator(trace, span, thread_sep, op_detail),
        "kernel": kernel(span),
        "memory_manipulation": memory_manipulation(trace, span),
        "user_defined": user_defined(trace, span, thread_sep),
        "perf": perf(span, phases),
        "step_trace": step_trace(trace, span, phases),
        "op_type": op_type(trace, span),
        "key_averages": key_averages(trace, span),
        "memory": memory(trace),
    }
