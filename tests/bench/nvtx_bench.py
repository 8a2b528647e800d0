#!/usr/bin/python3
"""The cost of an NVTX push+pop pair on the program's thread: nvtx_bench without the agent
(NVTX's own no-op), with the agent idle (every step skipped: nothing recorded) and recording
(host events only, no device backend). Modes interleaved, medians of --runs runs. Figures only,
never pass/fail.

    nvtx_bench.py --program build/bin/nvtx_bench --agent build/lib/libprofagent.so [--pairs N] [--runs R]
"""
import argparse
import os
import statistics
import subprocess
import tempfile

KINDS = {"plain": "nvtxRangePushA + nvtxRangePop", "domain": "nvtxDomainRangePushEx (registered string) + pop",
         "torch": "a torch operator name (emit_nvtx, with shapes) + pop"}
MODES = {"absent": None, "idle": {"PROFAGENT_SKIP_FIRST": "1000000"}, "recording": {}}


def run_once(args, mode):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFAGENT_", "LD_PRELOAD", "NVTX_"))}
    with tempfile.TemporaryDirectory(prefix="nvtx_bench_") as out_dir:  # the recorded trace is large
        if MODES[mode] is not None:
            env.update(MODES[mode], LD_PRELOAD=args.agent, PROFAGENT_ACTIVITIES="cpu", PROFAGENT_LOG_LEVEL="error",
                       PROFAGENT_OUTPUT_DIR=out_dir)
        out = subprocess.run([args.program, str(args.pairs)], env=env, capture_output=True, text=True,
                             check=True).stdout
    return {line.split()[0]: float(line.split()[1]) for line in out.splitlines() if line.strip()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--program", required=True)
    p.add_argument("--agent", required=True)
    p.add_argument("--pairs", type=int, default=20000)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    results = {mode: [] for mode in MODES}
    for _ in range(args.runs):
        for mode in MODES:
            results[mode].append(run_once(args, mode))
    print(f"NVTX push+pop pairs, ns per pair (median of {args.runs} runs, best of 9 batches of {args.pairs})")
    print("| pair | without agent | agent idle | agent recording |")
    print("|---|---|---|---|")
    for kind, label in KINDS.items():
        cells = [statistics.median(r[kind] for r in results[mode]) for mode in MODES]
        print(f"| {label} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")


if __name__ == "__main__":
    main()
