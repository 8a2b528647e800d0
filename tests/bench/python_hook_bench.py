#!/usr/bin/python3
"""What the Python hook costs the program's thread, per training step and per window:
python_hook_train.py (Debian's CPU torch: an MLP, AdamW) under the agent with the hook off
(PROFAGENT_PYTHON_HOOK=off) and on, idle (every step skipped) and recording (steps marked by the
hook's optimizer wrapper, PROFAGENT_STEP_ON=python; windows of ACTIVE steps; host events only).
The hook's cost is "on" minus "off" at the same schedule; its per-window cost that figure times
the steps of a window. Modes interleaved, medians of --runs runs. Figures only, never pass/fail.

    python_hook_bench.py --agent build/lib/libprofagent.so [--steps N] [--runs R] [--active A]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python_hook_train.py")


def modes(active):
    idle = {"PROFAGENT_SKIP_FIRST": "100000000"}
    recording = {"PROFAGENT_SCHEDULE": f"wait=0,warmup=0,active={active},repeat=0"}
    return {"absent": None,
            "idle, hook off": dict(idle, PROFAGENT_PYTHON_HOOK="off"),
            "idle, hook on": dict(idle, PROFAGENT_STEP_ON="python"),
            "recording, hook off": dict(recording, PROFAGENT_PYTHON_HOOK="off"),
            "recording, hook on": dict(recording, PROFAGENT_STEP_ON="python")}


def run_once(args, settings):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFAGENT_", "LD_PRELOAD", "NVTX_", "CUDA_INJ"))}
    with tempfile.TemporaryDirectory(prefix="python_hook_bench_") as out_dir:
        if settings is not None:
            env.update(settings, LD_PRELOAD=args.agent, PROFAGENT_ACTIVITIES="cpu", PROFAGENT_LOG_LEVEL="error",
                       PROFAGENT_OUTPUT_DIR=out_dir)
        out = subprocess.run(["/usr/bin/python3", PROGRAM, str(args.steps)], env=env, capture_output=True,
                             text=True, check=True).stdout
    return float(out.split("ns_per_step")[1].split()[0])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--agent", required=True)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--active", type=int, default=10)
    args = p.parse_args()
    try:
        import torch  # noqa: F401  (Debian's python3-torch)
    except ImportError:
        print("SKIP: needs Debian's python3-torch")
        return 0
    table = modes(args.active)
    results = {mode: [] for mode in table}
    for _ in range(args.runs):
        for mode, settings in table.items():
            results[mode].append(run_once(args, settings))
    median = {mode: statistics.median(values) for mode, values in results.items()}
    print(f"Python hook, thread CPU ns per training step (median of {args.runs} runs of {args.steps} steps)")
    for mode, value in median.items():
        print(f"  {mode:22s} {value:10.0f}")
    for state in ("idle", "recording"):
        per_step = median[f"{state}, hook on"] - median[f"{state}, hook off"]
        print(f"hook cost while {state}: {per_step:+.0f} ns per step, {per_step * args.active / 1000:+.1f} us per "
              f"window of {args.active} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
