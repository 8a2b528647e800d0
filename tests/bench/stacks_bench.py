#!/usr/bin/env python3
"""Call stack costs (PROFAGENT_WITH_STACK). Runs stacks_bench_calls (N recorded calls made 32
frames deep) in each mode and prints:

  1. ns added per recorded call: agent absent / recording without stacks / recording with
     stacks at PROFAGENT_STACK_DEPTH=32 (median wall and CPU ns per call over runs);
     target: stacks add <= 1 us per call;
  2. stacks off adds nothing: callgrind instructions per call of the loop, recording without
     stacks, for this agent and (--baseline-agent) an agent built without stack support;
  3. trace bytes per event without and with stacks;
  4. (--python-ext) the same as 1 for a Python program: cudaStreamSynchronize through a ctypes
     extension, 30 Python frames deep (their frames read and merged into the native stack).

Never pass/fail on time: the exit status is non-zero only when a run fails or prints nothing.
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys

MODES = {
    "absent": None,
    "recording, stacks off": {},
    "recording, stacks depth 32": {"PROFAGENT_WITH_STACK": "1", "PROFAGENT_STACK_DEPTH": "32"},
}
BASE_ENV = {"PROFAGENT_CUPTI": "off", "PROFAGENT_LOG_LEVEL": "warn"}


def environment(args, agent, extra, out_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFAGENT_", "DEVSIM_", "LD_PRELOAD"))}
    env["LD_LIBRARY_PATH"] = args.devsim
    env["PROFAGENT_OUTPUT_DIR"] = out_dir
    if agent is not None and extra is not None:
        env["LD_PRELOAD"] = agent
        env.update(BASE_ENV)
        env.update(extra)
    return env


PYTHON_PROGRAM = """
import ctypes, sys, time
ext = ctypes.CDLL(sys.argv[1])
calls = int(sys.argv[3])
ext.ext_cudaStreamSynchronize(None)
def descend(levels):
    if levels > 1:
        return descend(levels - 1)
    wall, cpu = time.monotonic_ns(), time.process_time_ns()
    for _ in range(calls):
        ext.ext_cudaStreamSynchronize(None)
    return time.monotonic_ns() - wall, time.process_time_ns() - cpu
wall, cpu = descend(int(sys.argv[2]))
print(f"calls={calls} depth={sys.argv[2]} wall_ns={wall} cpu_ns={cpu}")
"""


def run(args, name, agent, extra, calls, wrapper=(), python=False):
    out_dir = os.path.join(args.work, re.sub(r"\W+", "_", name))
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    command = list(wrapper) + [args.program, str(args.depth), str(calls)]
    if python:
        command = ["/usr/bin/python3", "-c", PYTHON_PROGRAM, args.python_ext, "30", str(calls)]
    done = subprocess.run(command, env=environment(args, agent, extra, out_dir), capture_output=True,
                          text=True, cwd=out_dir, timeout=600)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-1500:]}")
    match = re.search(r"calls=(\d+) depth=\d+ wall_ns=(\d+) cpu_ns=(\d+)", done.stdout)
    if not match:
        sys.exit(f"{name}: no figures in {done.stdout!r}")
    return {"wall": int(match.group(2)) / calls, "cpu": int(match.group(3)) / calls, "out": out_dir}


def trace_figures(out_dir):
    paths = glob.glob(os.path.join(out_dir, "*.trace.json"))
    if not paths:
        return None
    data = open(paths[0], "rb").read()
    return len(data), data.count(b'"ph":')


def callgrind_ir_per_call(args, agent, extra, calls):
    if shutil.which("valgrind") is None:
        return None
    out_file = os.path.join(args.work, "callgrind.out")
    wrapper = ["valgrind", "--tool=callgrind", "--toggle-collect=*bench_loop*", f"--callgrind-out-file={out_file}"]
    run(args, "callgrind", agent, extra, calls, wrapper)
    text = open(out_file).read()
    total = re.search(r"^summary:\s+(\d+)", text, re.M) or re.search(r"^totals:\s+(\d+)", text, re.M)
    return int(total.group(1)) / calls if total else None


def table(title, header, rows, notes=()):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    print(f"\n{title}")
    print("  ".join(str(h).ljust(w) if i == 0 else str(h).rjust(w) for i, (h, w) in enumerate(zip(header, widths))))
    for row in rows:
        print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    for note in notes:
        print("  " + note)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--program", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--baseline-agent", help="an agent without stack support, for section 2")
    parser.add_argument("--devsim", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--depth", type=int, default=32)
    parser.add_argument("--calls", type=int, default=200000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="few calls and runs (CTest)")
    parser.add_argument("--python-ext", help="libpy_cuda_ext.so (tests/reliability): section 4")
    args = parser.parse_args()
    if args.smoke:
        args.calls, args.runs = 20000, 3
    os.makedirs(args.work, exist_ok=True)

    per_mode = {}
    for name, extra in MODES.items():
        runs = [run(args, name, args.agent, extra, args.calls) for _ in range(args.runs)]
        per_mode[name] = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu")}
        per_mode[name]["out"] = runs[-1]["out"]
    absent = per_mode["absent"]
    off = per_mode["recording, stacks off"]
    rows = [[name, f"{m['wall']:.1f}", f"{m['cpu']:.1f}", f"{m['wall'] - absent['wall']:.1f}",
             f"{m['wall'] - off['wall']:.1f}" if name.endswith("32") else ""] for name, m in per_mode.items()]
    table(f"1. ns per recorded call (cudaProfilerStart) made {args.depth} frames deep, median of {args.runs} runs "
          f"of {args.calls} calls", ["mode", "wall ns/call", "cpu ns/call", "added vs absent", "added by stacks"], rows,
          ["target: stacks add <= 1000 ns per call (a repeated stack: one unwind, one hash lookup)"])

    rows = []
    small = min(args.calls, 20000)
    for label, agent in (("this agent", args.agent), ("baseline agent", args.baseline_agent)):
        if agent is None:
            continue
        ir = callgrind_ir_per_call(args, agent, {}, small)
        rows.append([label, "n/a (no valgrind)" if ir is None else f"{ir:.1f}"])
    table("2. callgrind instructions per recorded call, stacks off (PROFAGENT_WITH_STACK unset)",
          ["agent", "Ir/call"], rows,
          ["stacks off: the recording hook runs its path without stacks, chosen by the byte it reads anyway",
           "(collector/api.h kHookStacks); the not-recording path is untouched"])

    rows = []
    for name in ("recording, stacks off", "recording, stacks depth 32"):
        figures = trace_figures(per_mode[name]["out"])
        if figures is None:
            sys.exit(f"{name}: no trace written")
        size, events = figures
        rows.append([name, str(events), str(size), f"{size / events:.1f}"])
    table("3. trace bytes per event", ["mode", "events", "bytes", "bytes/event"], rows,
          ["with stacks each event adds its \"sf\" id and its Call site arg; each distinct stack is written once"])

    if args.python_ext:
        python = {}
        for name, extra in MODES.items():
            runs = [run(args, "py " + name, args.agent, extra, args.calls // 4, python=True) for _ in range(args.runs)]
            python[name] = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu")}
        absent, off = python["absent"], python["recording, stacks off"]
        rows = [[name, f"{m['wall']:.1f}", f"{m['cpu']:.1f}", f"{m['wall'] - absent['wall']:.1f}",
                 f"{m['wall'] - off['wall']:.1f}" if name.endswith("32") else ""] for name, m in python.items()]
        table(f"4. Python: ns per cudaStreamSynchronize through ctypes, 30 Python frames deep, median of {args.runs} runs",
              ["mode", "wall ns/call", "cpu ns/call", "added vs absent", "added by stacks"], rows,
              ["target: stacks add <= 1000 ns per call, Python frames included"])


if __name__ == "__main__":
    main()
