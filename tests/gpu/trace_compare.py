"""profagent's trace of a training loop against torch.profiler's trace of the same steps.

Both are Kineto-shaped Chrome traces: steps are `ProfilerStep#N` CPU-side user annotations,
device work is `kernel` / `gpu_memcpy` / `gpu_memset` complete events carrying `correlation`,
the calls that issued it are `cuda_runtime` / `cuda_driver` events with the same
`correlation`. A device record belongs to the step in which the call that issued it started
(the device may run it after the step ended on the host); a record whose call is not in the
trace is placed by its own start.

compare(ours, reference) returns a Comparison: per step, the kernel names and counts of each
trace, the kernel time of each, and what differs. It passes when
  - both traces recorded the same step numbers,
  - every step has the same kernel names with the same counts,
  - every step's kernel time is within `time_tolerance` (10 %) of the reference's,
  - every kernel of ours is linked to its launch (a call with its correlation id).
Copies and sets are compared and reported too, not required to match (their names are
formed by each profiler). Standard library only: it runs where the traces were made.
"""
import collections
import gzip
import json
import re

DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
CALL_CATEGORIES = ("cuda_runtime", "cuda_driver")
STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")


def load(path):
    """A trace file (.json or .json.gz) as its document: a dict with traceEvents (a bare
    event array, as some exporters write, is wrapped)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        document = json.load(f)
    return {"traceEvents": document} if isinstance(document, list) else document


def ns(value):
    """Trace times are µs with 3 decimals: integer ns are exact."""
    return round(float(value) * 1000)


class StepView:
    """The device work of one trace, per recorded step."""

    def __init__(self, document):
        events = [e for e in document.get("traceEvents", []) if isinstance(e, dict)]
        complete = [e for e in events if e.get("ph") == "X" and "ts" in e and "dur" in e]
        # CPU-side step annotations: user_annotation in Kineto's traces, no category in the
        # legacy export of a torch without Kineto; never Kineto's device-side copies.
        self.steps = sorted(
            (int(STEP_NAME.match(e["name"]).group(1)), ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
            for e in complete
            if e.get("cat") in ("user_annotation", None) and STEP_NAME.match(str(e.get("name", ""))))
        self.calls = {}
        for e in complete:
            if e.get("cat") in CALL_CATEGORIES and "correlation" in e.get("args", {}):
                self.calls.setdefault(e["args"]["correlation"], e)
        self.device = [e for e in complete if e.get("cat") in DEVICE_CATEGORIES]
        self.operators = [e for e in complete if e.get("cat") == "cpu_op"]
        self.unlinked = [e for e in self.device if e["cat"] == "kernel" and self.launch(e) is None]
        self.work = {number: collections.Counter() for number, _, _ in self.steps}
        self.kernel_ns = {number: 0 for number, _, _ in self.steps}
        self.outside = 0  # device records issued outside every recorded step
        for e in self.device:
            step = self.step_of(e)
            if step is None:
                self.outside += 1
                continue
            self.work[step][(e["cat"], e["name"])] += 1
            if e["cat"] == "kernel":
                self.kernel_ns[step] += ns(e["dur"])

    def launch(self, device_event):
        return self.calls.get(device_event.get("args", {}).get("correlation"))

    def step_of(self, device_event):
        call = self.launch(device_event)
        at = ns(call["ts"]) if call is not None else ns(device_event["ts"])
        for number, start, end in self.steps:
            if start <= at < end:
                return number
        return None

    def kernels(self, step):
        return collections.Counter({name: n for (cat, name), n in self.work[step].items() if cat == "kernel"})

    def transfers(self, step):
        return collections.Counter({(cat, name): n for (cat, name), n in self.work[step].items() if cat != "kernel"})


class Comparison:
    def __init__(self):
        self.problems = []   # each one makes the comparison fail
        self.notes = []      # differences reported, not failed on
        self.rows = []       # per step: number, kernels ours/reference, kernel µs ours/reference, ratio
        self.worst_ratio = None
        self.operators = None  # None: no operator in our trace (not compared); else problems found

    @property
    def passed(self):
        return not self.problems

    def figure(self):
        if not self.rows:
            return "no step compared"
        kernels = sum(row["kernels"] for row in self.rows)
        return (f"{len(self.rows)} steps, {kernels} kernels matched by name and count, "
                f"kernel time ratio worst {self.worst_ratio:.3f}")


def counter_difference(ours, reference):
    """'name: ours N, reference M' for every name whose counts differ, sorted by name."""
    names = sorted(set(ours) | set(reference), key=str)
    return [f"{name}: ours {ours.get(name, 0)}, reference {reference.get(name, 0)}"
            for name in names if ours.get(name, 0) != reference.get(name, 0)]


def compare(ours_document, reference_document, time_tolerance=0.10):
    ours, reference = StepView(ours_document), StepView(reference_document)
    result = Comparison()
    ours_steps = [number for number, _, _ in ours.steps]
    reference_steps = [number for number, _, _ in reference.steps]
    if not ours_steps:
        result.problems.append("profagent's trace has no ProfilerStep#N annotation")
    if not reference_steps:
        result.problems.append("the reference trace has no ProfilerStep#N annotation")
    if ours_steps != reference_steps:
        result.problems.append(f"recorded steps differ: ours {ours_steps}, reference {reference_steps}")
    if len(ours_steps) != len(reference_steps):
        result.problems.append(f"{len(ours_steps)} steps recorded, the reference recorded {len(reference_steps)}")
    for e in ours.unlinked[:5]:
        result.problems.append(f"kernel {e['name']!r} at {e['ts']} (correlation "
                               f"{e.get('args', {}).get('correlation')}) is not linked to a launch")
    if len(ours.unlinked) > 5:
        result.problems.append(f"... {len(ours.unlinked)} unlinked kernels in all")
    if reference.unlinked:
        result.notes.append(f"the reference has {len(reference.unlinked)} kernels without their launch")
    # Steps are compared in order, so that their contents are compared (and reported) even
    # when the two traces number them differently.
    for number, reference_number in zip(ours_steps, reference_steps):
        compare_step(result, number, reference_number, ours, reference, time_tolerance)
    compare_operators(result, ours, reference, list(zip(ours_steps, reference_steps)))
    return result


def compare_step(result, number, reference_number, ours, reference, time_tolerance):
    kernel_diff = counter_difference(ours.kernels(number), reference.kernels(reference_number))
    for line in kernel_diff[:10]:
        result.problems.append(f"step {number}: kernel {line}")
    if len(kernel_diff) > 10:
        result.problems.append(f"step {number}: ... {len(kernel_diff)} kernel names differ in all")
    for line in counter_difference(ours.transfers(number), reference.transfers(reference_number))[:5]:
        result.notes.append(f"step {number}: {line}")
    ours_ns, reference_ns = ours.kernel_ns[number], reference.kernel_ns[reference_number]
    ratio = ours_ns / reference_ns if reference_ns else (1.0 if ours_ns == 0 else float("inf"))
    if abs(ratio - 1.0) > time_tolerance:
        result.problems.append(f"step {number}: kernel time {ours_ns / 1000:.1f} us, reference "
                               f"{reference_ns / 1000:.1f} us (ratio {ratio:.3f}, allowed 1 +- {time_tolerance})")
    if result.worst_ratio is None or abs(ratio - 1.0) > abs(result.worst_ratio - 1.0):
        result.worst_ratio = ratio
    result.rows.append({"step": number, "kernels": sum(ours.kernels(number).values()),
                        "reference_kernels": sum(reference.kernels(reference_number).values()),
                        "kernel_us": ours_ns / 1000, "reference_kernel_us": reference_ns / 1000,
                        "ratio": ratio})


def operators_of(view, number):
    """The names of the operators (cpu_op) that started in step `number`, on any thread."""
    spans = [(start, end) for n, start, end in view.steps if n == number]
    return collections.Counter(e["name"] for e in view.operators
                               if any(start <= ns(e["ts"]) < end for start, end in spans))


def compare_operators(result, ours, reference, step_pairs=()):
    """Once profagent records the framework's operators: every kernel in a step is attributed
    to one (its External id is an operator's), and each step has the operators of the
    reference's step, name by name with the same counts (both come from torch's RecordFunction:
    emit_nvtx's ranges for profagent, Kineto's callbacks for torch.profiler). Without operators
    nothing is compared."""
    if not ours.operators:
        return
    operator_ids = {e.get("args", {}).get("External id") for e in ours.operators}
    unattributed = [e for e in ours.device if e["cat"] == "kernel" and ours.step_of(e) is not None
                    and e.get("args", {}).get("External id") not in operator_ids]
    result.operators = [f"kernel {e['name']!r} at {e['ts']} is attributed to no operator"
                        for e in unattributed[:5]]
    if unattributed:
        result.operators.append(f"{len(unattributed)} of the steps' kernels are attributed to no operator")
    for number, reference_number in step_pairs:
        difference = counter_difference(operators_of(ours, number), operators_of(reference, reference_number))
        result.operators += [f"step {number}: operator {line}" for line in difference[:8]]
        if len(difference) > 8:
            result.operators.append(f"step {number}: ... {len(difference)} operator names differ in all")


def format_rows(result):
    lines = [f"{'step':>6} {'kernels':>8} {'ref':>6} {'kernel us':>12} {'ref us':>12} {'ratio':>7}"]
    for row in result.rows:
        lines.append(f"{row['step']:>6} {row['kernels']:>8} {row['reference_kernels']:>6} "
                     f"{row['kernel_us']:>12.1f} {row['reference_kernel_us']:>12.1f} {row['ratio']:>7.3f}")
    return lines


def main(argv):
    """trace_compare.py OURS REFERENCE: prints the comparison; exit status 0 when it passes."""
    if len(argv) != 3:
        print("usage: trace_compare.py PROFAGENT_TRACE TORCH_PROFILER_TRACE")
        return 2
    result = compare(load(argv[1]), load(argv[2]))
    print("\n".join(format_rows(result) + [f"problem: {p}" for p in result.problems]
                    + [f"note: {n}" for n in result.notes]))
    print(("PASS " if result.passed else "FAIL ") + result.figure())
    return 0 if result.passed else 1


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv))
