#!/usr/bin/env python3
"""What PROFAGENT_PROFILE_MEMORY costs: ns added to an allocation call, and to other calls.

Runs tests/bench/bench_calls on devsim (no modelled host cost) with the agent in four modes —
idle (a step schedule that never starts: the hooks' not-recording path, where the allocation
bookkeeping still runs), recording host-only (PROFAGENT_CUPTI=off) and recording with the
device's records (CUPTI on), each with memory profiling off and on — plus without the agent, and prints CPU ns per call (median of runs):
  - `alloc`: one cudaMalloc(256) + cudaFree pair (two allocation calls, two records);
  - `profiler`: cudaProfilerStart, a hooked call that is not an allocation (must cost the same
    with memory profiling on and off).
Figures only, never pass/fail on time; exits non-zero only when a run fails.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

MODES = [
    ("absent", {}),
    ("idle, memory off", {"PROFAGENT_SKIP_FIRST": "1000000000"}),
    ("idle, memory on", {"PROFAGENT_SKIP_FIRST": "1000000000", "PROFAGENT_PROFILE_MEMORY": "1"}),
    ("host, memory off", {}),
    ("host, memory on", {"PROFAGENT_PROFILE_MEMORY": "1"}),
    # CUPTI on: while recording, a hooked allocation waits for the device's record of it
    # (memory_ledger.h), which books it when CUPTI's buffers are read.
    ("device, memory off", {"PROFAGENT_CUPTI": "on"}),
    ("device, memory on", {"PROFAGENT_CUPTI": "on", "PROFAGENT_PROFILE_MEMORY": "1"}),
]


def run(args, call, calls, extra, agent):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFAGENT_", "DEVSIM_", "LD_PRELOAD"))}
    env.update({"LD_LIBRARY_PATH": args.devsim, "DEVSIM_HOST_COST_SCALE": "0", "PROFAGENT_CUPTI": "off",
                "PROFAGENT_OUTPUT_DIR": os.path.join(args.work, "out"), "PROFAGENT_LOG_LEVEL": "error"})
    env.update(extra)
    if agent:
        env["LD_PRELOAD"] = args.agent
    done = subprocess.run([args.program, call, str(calls)], env=env, capture_output=True, text=True, timeout=600)
    match = re.search(r"cpu_ns=(\d+)", done.stdout)
    if done.returncode != 0 or match is None:
        sys.exit(f"bench_calls {call} failed ({done.returncode}): {done.stderr[-1000:]}")
    return int(match.group(1)) / calls


def main():
    parser = argparse.ArgumentParser()
    for option in ("--program", "--agent", "--devsim", "--work"):
        parser.add_argument(option, required=True)
    parser.add_argument("--calls", type=int, default=200000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    os.makedirs(os.path.join(args.work, "out"), exist_ok=True)
    table = {}
    for call in ("alloc", "profiler"):
        for name, extra in MODES:
            samples = [run(args, call, args.calls, extra, name != "absent") for _ in range(args.runs)]
            table[(call, name)] = statistics.median(samples)
    print(f"PROFAGENT_PROFILE_MEMORY cost (devsim, {args.calls} calls x {args.runs} runs, CPU ns per call, median)")
    print(f"{'mode':<20}{'alloc pair':>14}{'profiler call':>16}")
    for name, _ in MODES:
        print(f"{name:<20}{table[('alloc', name)]:>14.1f}{table[('profiler', name)]:>16.1f}")
    for state in ("idle", "host", "device"):
        on, off = f"{state}, memory on", f"{state}, memory off"
        print(f"added by memory profiling, {state}: alloc pair {table[('alloc', on)] - table[('alloc', off)]:+.1f} ns "
              f"(per allocation call {(table[('alloc', on)] - table[('alloc', off)]) / 2:+.1f} ns), "
              f"other call {table[('profiler', on)] - table[('profiler', off)]:+.1f} ns")


if __name__ == "__main__":
    main()
