#!/usr/bin/python3
"""Runs bench_calls under the agent on devsim (launches: a call, a kernel and their flow per launch;
profiler: host calls only) and trace_formats_bench on the trace it wrote: bytes/event and flush
events/s of json, json.gz and perfetto, and the compressor table (tests/bench/trace_formats_bench.cpp).
Figures only (label bench); it fails only when a step cannot run.

    trace_formats_bench.py --program BENCH_CALLS --agent LIBPROFAGENT --devsim DIR --bench BIN --work DIR
                           [--calls N] [--files]
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--program", "--agent", "--devsim", "--bench", "--work"):
        ap.add_argument(opt, required=True)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--files", action="store_true", help="also time writing each format to files")
    a = ap.parse_args()
    for call in ("launch", "profiler"):
        out = os.path.join(a.work, call)
        shutil.rmtree(out, ignore_errors=True)
        env = dict(os.environ, LD_LIBRARY_PATH=a.devsim, LD_PRELOAD=a.agent, PROFAGENT_OUTPUT_DIR=out,
                   PROFAGENT_BUFFER_MB="4096")
        run = subprocess.run([a.program, call, str(a.calls), "1000"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, universal_newlines=True)
        traces = glob.glob(os.path.join(out, "*.trace.json"))
        if run.returncode != 0 or len(traces) != 1:
            sys.exit("trace_formats_bench: bench_calls %s exited %d with %s\n%s" % (call, run.returncode, traces,
                                                                                 run.stderr[-2000:]))
        print("== bench_calls %s %d (%s)" % (call, a.calls, "a kernel per call" if call == "launch" else "host calls only"),
              flush=True)
        cmd = [a.bench, traces[0]] + (["--files", os.path.join(out, "files")] if a.files else [])
        ran = subprocess.run(cmd).returncode
        shutil.rmtree(out, ignore_errors=True)  # the trace alone is ~200 MB per million events
        if ran != 0:
            sys.exit("trace_formats_bench: %s failed" % " ".join(cmd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
