#!/usr/bin/python3
"""The cost of the agent's dlopen/dlclose wrappers: loader_bench run without the agent and with
it (idle: no CUDA call, so only the wrappers run), modes interleaved, medians of --runs runs.
Figures only, never pass/fail.

    loader_bench.py --program build/bin/loader_bench --agent build/lib/libprofagent.so
                    --plugin build/bin/loader_fixtures/plain/libloader_plugin.so [--calls N] [--runs R]
"""
import argparse
import os
import statistics
import subprocess
import tempfile

KINDS = ("noload", "load", "dlsym")
LABELS = {"noload": "dlopen(RTLD_NOLOAD) + dlclose of a loaded library",
          "load": "dlopen + dlclose that maps and unmaps a small library",
          "dlsym": "dlsym (not interposed)"}


def run_once(args, preload):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFAGENT_", "LD_PRELOAD"))}
    with tempfile.TemporaryDirectory(prefix="loader_bench_") as out_dir:
        if preload:
            env["LD_PRELOAD"] = preload
            env["PROFAGENT_OUTPUT_DIR"] = out_dir
        out = subprocess.run([args.program, str(args.calls), args.plugin], env=env, capture_output=True,
                             text=True, check=True).stdout
    return {line.split()[0]: float(line.split()[1]) for line in out.splitlines() if line.strip()}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--program", required=True)
    p.add_argument("--agent", required=True)
    p.add_argument("--plugin", required=True)
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    results = {"absent": [], "agent": []}
    for _ in range(args.runs):
        results["absent"].append(run_once(args, None))
        results["agent"].append(run_once(args, args.agent))
    print(f"loader calls, ns per call (median of {args.runs} runs x 9 batches, {args.calls} calls)")
    print(f"| call | without agent | with agent | added |")
    print(f"|---|---|---|---|")
    for kind in KINDS:
        plain = statistics.median(r[kind] for r in results["absent"])
        agent = statistics.median(r[kind] for r in results["agent"])
        print(f"| {LABELS[kind]} | {plain:.0f} | {agent:.0f} | {agent - plain:+.0f} |")


if __name__ == "__main__":
    main()
