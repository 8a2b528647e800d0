#!/usr/bin/python3
"""The Python hook's phase ranges under `profagent run` (every run puts the hook on PYTHONPATH):

    report_agent_checks.py --launcher BIN/profagent --hook-dir LIB/profagent_python --out DIR
                           --program programs/train_phases.py [--iterations N]

Runs the torch loop of train_phases.py with `--step-on python` and reads its trace back: every
ProfilerStep#k holds exactly one DataLoader iteration, one zero_grad, one outermost module call
(nested modules open no range), one backward under the name of the call the program made
(Tensor.backward's inner torch.autograd.backward opens none) and one optimizer step, in that
order, none overlapping; the forward that raised left a closed range and nothing open. The
program prints the same with and without the agent. Then: the hook patches nothing without
the agent, imports no torch itself, and --no-python-hook keeps it out.
Only the Python standard library is used.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import trace_reader  # noqa: E402

PYTHON = "/usr/bin/python3"
DATALOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
ZERO_GRAD = "Optimizer.zero_grad#SGD.zero_grad"
FORWARD = "nn.Module: Net"
TENSOR_BACKWARD = "autograd.backward#Tensor.backward"
AUTOGRAD_BACKWARD = "autograd.backward#torch.autograd.backward"
STEP = "Optimizer.step#SGD.step"
REFUSED = "nn.Module: Refuses"
PHASE_PREFIXES = ("enumerate(DataLoader)#", "Optimizer.", "nn.Module: ", "autograd.backward#")

failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(command, env_extra=None, env_drop=()):
    env = {k: v for k, v in os.environ.items() if k not in env_drop}
    env.update(env_extra or {})
    return subprocess.run(command, capture_output=True, text=True, timeout=240, env=env)


def load_trace(out):
    traces = glob.glob(os.path.join(out, "*.trace.json"))
    if not expect(len(traces) == 1, f"expected one trace in {out}, found {traces}"):
        return None
    return trace_reader.load_trace(traces[0])


def annotations(trace):
    """(name, start, end) of every user_annotation, in µs, sorted by start."""
    spans = [(e["name"], float(e["ts"]), float(e["ts"]) + float(e["dur"]))
             for e in trace_reader.complete_events(trace, "user_annotation")]
    return sorted(spans, key=lambda s: s[1])


def step_spans(spans):
    steps = {}
    for name, start, end in spans:
        if name.startswith("ProfilerStep#"):
            steps[int(name.split("#")[1])] = (start, end)
    return steps


def check_step(k, step, phases):
    """phases: the phase ranges starting inside step k, in start order."""
    backward = TENSOR_BACKWARD if k % 2 == 0 else AUTOGRAD_BACKWARD
    names = [name for name, _, _ in phases if name != REFUSED]
    expected = [DATALOADER, ZERO_GRAD, FORWARD, backward, STEP]
    expect(names == expected, f"step {k}: ranges {names}, expected {expected}")
    step_ranges = [end for name, _, end in phases if name == STEP]
    if step_ranges:
        expect(step_ranges[0] <= step[1], f"step {k}: the optimizer step range ends after its step")


def check_phases(spans, iterations):
    steps = step_spans(spans)
    expect(sorted(steps) == list(range(iterations)), f"steps {sorted(steps)}, expected 0..{iterations - 1}")
    phases = [s for s in spans if s[0].startswith(PHASE_PREFIXES)]
    for k, step in sorted(steps.items()):
        check_step(k, step, [p for p in phases if step[0] <= p[1] < step[1]])
    # No range is left open or nested in another: each ends before the next starts.
    for before, after in zip(phases, phases[1:]):
        expect(before[2] <= after[1], f"ranges overlap: {before} and {after}")
    refused = [p for p in phases if p[0] == REFUSED]
    expect(len(refused) == 1, f"the raising forward left {len(refused)} ranges, expected 1")
    nested = [p[0] for p in phases if p[0] in ("nn.Module: Block", "nn.Module: Linear", "nn.Module: ReLU")]
    expect(not nested, f"nested module calls opened ranges: {sorted(set(nested))}")
    # The loop's last DataLoader call (StopIteration) is a range too, after the last step.
    expect(sum(p[0] == DATALOADER for p in phases) == iterations + 1, "DataLoader ranges: not one per batch + 1")


def check_training(args):
    out = os.path.join(args.out, "phases")
    shutil.rmtree(out, ignore_errors=True)
    plain = run([PYTHON, args.program, str(args.iterations)], env_drop=("LD_PRELOAD", "PYTHONPATH"))
    profiled = run([args.launcher, "run", "--step-on", "python", "--output-dir", out, "--",
                    PYTHON, args.program, str(args.iterations)])
    expect(plain.returncode == 0 and profiled.returncode == 0,
           f"exit codes {plain.returncode}/{profiled.returncode}: {profiled.stderr[-2000:]}")
    expect(plain.stdout == profiled.stdout, f"output changed:\n{plain.stdout}\n---\n{profiled.stdout}")
    trace = load_trace(out)
    if trace is not None:
        check_phases(annotations(trace), args.iterations)


# The wrappers answer for the original to introspection; only type() tells them apart.
PROBE = ("import sys; print('torch' in sys.modules); import torch; "
         "print(type(torch.nn.Module.__call__).__name__, type(torch.autograd.backward).__name__)")


def check_hook_alone(args):
    out = os.path.join(args.out, "probe")
    with_agent = run([args.launcher, "run", "--output-dir", out, "--", PYTHON, "-c", PROBE])
    expect(with_agent.stdout.split() == ["False", "Ranged", "Ranged"],
           f"under profagent run: {with_agent.stdout!r} (torch imported early, or not patched)")
    without = run([PYTHON, "-c", PROBE], env_extra={"PYTHONPATH": args.hook_dir}, env_drop=("LD_PRELOAD",))
    expect(without.stdout.split() == ["False", "function", "function"], f"without the agent: {without.stdout!r}")
    off = run([args.launcher, "run", "--no-python-hook", "--output-dir", out, "--", PYTHON, "-c", PROBE])
    expect(off.stdout.split() == ["False", "function", "function"], f"--no-python-hook patched: {off.stdout!r}")
    both = run([args.launcher, "run", "--no-python-hook", "--step-on", "python", "--", "true"])
    expect(both.returncode == 2 and len(both.stderr.strip().splitlines()) == 1,
           f"--no-python-hook with --step-on python: exit {both.returncode}, {both.stderr!r}")
    helped = run([args.launcher, "--help"])
    expect("--no-python-hook" in helped.stdout and "nn.Module: <Class>" in helped.stdout,
           "--help does not explain the Python hook")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--hook-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--program", required=True)
    parser.add_argument("--iterations", type=int, default=6)
    args = parser.parse_args()
    check_training(args)
    check_hook_alone(args)
    for failure in failures:
        print("FAILED:", failure)
    print("passed" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
