"""Reads a saved trace (profagent's *.trace.json or a Kineto trace, plain or .gz) into plain
records, independently of the C++ reader, for recompute.py. Standard library only.

What a record is follows docs/report.md: cpu_op = operator, user_annotation = range
(ProfilerStep#N = step N), cuda_runtime/cuda_driver = call, kernel/gpu_memcpy/gpu_memset =
device record linked to its call by args.correlation, "[memory]" instants = memory records.
Times are integer ns: round(ts * 1000).
"""
import gzip
import json
import re
from collections import Counter

HOST_CATS = {"cpu_op": "operator", "user_annotation": "range", "cuda_runtime": "call", "cuda_driver": "call"}
DEVICE_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset"}
STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")
# READING: the legacy array torch writes without Kineto has no categories; its ranges are
# torch's own record_function scopes, known by name, and every other event is an operator.
LEGACY_RANGE = re.compile(r"^(ProfilerStep#\d+$|enumerate\(DataLoader\)#|Optimizer\.(step|zero_grad)#)")


def ns(us):
    return int(round(float(us) * 1000))


class Record:
    """One X event: host (operator/range/call/step) or device (kernel/memcpy/memset)."""
    __slots__ = ("kind", "name", "thread", "start", "end", "correlation", "device", "index",
                 "parent", "children", "call", "issued", "step", "number", "depth")

    def __init__(self, kind, name, thread, start, end, index):
        self.kind, self.name, self.thread = kind, name, thread
        self.start, self.end, self.index = start, end, index
        self.correlation = self.device = self.parent = self.call = self.step = self.number = None
        self.children, self.issued, self.depth = [], [], 0

    @property
    def dur(self):
        return self.end - self.start


class Trace:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        doc = json.loads(raw.decode("utf-8"))
        self.meta = doc if isinstance(doc, dict) else {}
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        self.source = "profagent" if "profagent_window" in self.meta else "kineto"
        self.host, self.device, self.memory, self.steps = [], [], [], []
        self.skipped = Counter()
        for i, e in enumerate(events):
            self._add(e, i)
        self._link_calls()
        self._nest()

    def _add(self, e, index):
        ph, cat = e.get("ph"), e.get("cat")
        if ph == "i" and e.get("name") == "[memory]":
            self.memory.append((ns(e["ts"]), e.get("args", {})))
            return
        if ph != "X":
            return
        if cat is None and not self.meta:
            cat = "user_annotation" if LEGACY_RANGE.match(e.get("name", "")) else "cpu_op"
        if cat == "cuda_sync":  # read into the trace model (sync records), just not summarised
            return
        if cat == "profagent":  # the agent's own work: read as its cost, not summarised
            return
        if cat not in HOST_CATS and cat not in DEVICE_CATS:
            self.skipped[cat] += 1
            return
        start = ns(e["ts"])
        end = start + ns(e.get("dur", 0))
        args = e.get("args") or {}
        if cat in DEVICE_CATS:
            r = Record(DEVICE_CATS[cat], e["name"], (e.get("pid"), e.get("tid")), start, end, index)
            r.correlation = args.get("correlation")
            r.device = args.get("device", e.get("pid"))
            self.device.append(r)
            return
        kind = HOST_CATS[cat]
        m = STEP_NAME.match(e["name"]) if kind == "range" else None
        r = Record("step" if m else kind, e["name"], (e.get("pid"), e.get("tid")), start, end, index)
        r.correlation = args.get("correlation") if kind == "call" else None
        if m:
            r.number = int(m.group(1))
            self.steps.append(r)
        self.host.append(r)

    def _link_calls(self):
        by_corr = {}
        for r in self.host:
            if r.kind == "call" and r.correlation is not None:
                by_corr[r.correlation] = r
        for d in self.device:
            call = by_corr.get(d.correlation) if d.correlation is not None else None
            d.call = call
            if call is not None:
                call.issued.append(d)

    def _nest(self):
        """Per thread: parent = innermost host record enclosing it (operators, ranges, calls)."""
        by_thread = {}
        for r in self.host:
            by_thread.setdefault(r.thread, []).append(r)
        for records in by_thread.values():
            records.sort(key=lambda r: (r.start, -r.end, r.index))
            stack = []
            for r in records:
                while stack and not (r.start >= stack[-1].start and r.end <= stack[-1].end):
                    stack.pop()
                if stack:
                    r.parent = stack[-1]
                    stack[-1].children.append(r)
                    r.depth = stack[-1].depth + 1
                stack.append(r)

    # Helpers shared by the summaries ------------------------------------------------------

    def operator_parent(self, r):
        p = r.parent
        while p is not None and p.kind != "operator":
            p = p.parent
        return p

    def device_issued_within(self, r):
        """Device records issued by calls nested (at any depth) in host record r."""
        out = []
        stack = list(r.children)
        if r.kind == "call":
            out.extend(r.issued)
        while stack:
            c = stack.pop()
            if c.kind == "call":
                out.extend(c.issued)
            stack.extend(c.children)
        return out

    def device_issued_self(self, r):
        """Device records issued by calls in r that are not inside one of r's inner operators."""
        out = list(r.issued) if r.kind == "call" else []
        stack = list(r.children)
        while stack:
            c = stack.pop()
            if c.kind == "operator":
                continue
            if c.kind == "call":
                out.extend(c.issued)
            stack.extend(c.children)
        return out
