#!/usr/bin/env python3
"""What writing a window costs in memory, and what is written under a memory limit.

1. Peak resident memory (the child's ru_maxrss) of window_oom_app recording N host events
   (user ranges, one window written at exit) with the agent, less the same run without it, per
   event: the event buffer holds 48 bytes per event; the rest is the window's end (drained copy,
   join, writers). Printed per event and as a multiple of the event buffer.
2. The same program under `ulimit -v LIMIT` holding HOLD MiB of its own to the end: events
   recorded, written and left out, the peak, and whether a trace was written.
Figures only, never pass/fail on size; exits non-zero only when a run fails.
"""
import argparse
import glob
import os
import resource
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from trace_reader import complete_events, load_trace  # noqa: E402

EVENT_BYTES = 48


def run(args, events, hold_mb=0, limit=None):
    """One run with the agent; returns its output folder."""
    out = os.path.join(args.work, "out")
    shutil.rmtree(out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFAGENT_", "DEVSIM_", "LD_PRELOAD"))}
    env.update({"LD_LIBRARY_PATH": args.devsim, "PROFAGENT_OUTPUT_DIR": out, "LD_PRELOAD": args.agent})

    def limited():
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run([args.program, str(hold_mb), str(events)], env=env, capture_output=True, timeout=600,
                          preexec_fn=limited)
    if done.returncode != 0:
        sys.exit(f"window_oom_app {hold_mb} {events} failed ({done.returncode}): {done.stderr[-1000:]!r}")
    return out


def peak_kib(args, events, hold_mb=0, limit=None, agent=True):
    """ru_maxrss of one run (KiB), measured in a fresh interpreter so earlier children do not count."""
    code = ("import resource,subprocess,sys;subprocess.run(sys.argv[1:],check=True,stdout=subprocess.DEVNULL,"
            "stderr=subprocess.DEVNULL);print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFAGENT_", "DEVSIM_", "LD_PRELOAD"))}
    peak = os.path.join(args.work, "peak")
    shutil.rmtree(peak, ignore_errors=True)  # only the run's peak counts, not its files
    env.update({"LD_LIBRARY_PATH": args.devsim, "PROFAGENT_OUTPUT_DIR": peak})
    if not limit:
        env["PROFAGENT_BUFFER_MB"] = "1024"  # every event recorded (a limit sizes the buffer itself)
    if agent:
        env["LD_PRELOAD"] = args.agent
    command = [sys.executable, "-c", code, args.program, str(hold_mb), str(events)]

    def limited():
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, preexec_fn=limited)
    if done.returncode != 0:
        sys.exit(f"peak run failed: {done.stderr[-1000:]}")
    return int(done.stdout.strip())


def main():
    parser = argparse.ArgumentParser()
    for option in ("--program", "--agent", "--devsim", "--work"):
        parser.add_argument(option, required=True)
    parser.add_argument("--events", type=int, nargs="+", default=[1_000_000, 2_000_000])
    parser.add_argument("--limit-mb", type=int, default=1024)
    parser.add_argument("--hold-mb", type=int, default=500)
    parser.add_argument("--limited-events", type=int, default=4_000_000)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print("window end memory (peak RSS with the agent less without, one window of N user ranges)")
    base = peak_kib(args, 0, agent=True) - peak_kib(args, 0, agent=False)
    for events in args.events:
        added = (peak_kib(args, events) - peak_kib(args, events, agent=False) - base) * 1024
        print(f"  {events} events: {added / 2**20:.1f} MiB, {added / events:.0f} bytes per event "
              f"= {added / events / EVENT_BYTES:.1f} x the 48-byte event")
    limit = args.limit_mb << 20
    peak = peak_kib(args, args.limited_events, args.hold_mb, limit)
    out = run(args, args.limited_events, args.hold_mb, limit)
    traces = glob.glob(os.path.join(out, "*.trace.json"))
    if not traces:
        print(f"  ulimit -v {args.limit_mb} MiB, {args.hold_mb} MiB held: NO TRACE (peak {peak / 1024:.0f} MiB)")
        return
    document = load_trace(traces[0])
    drops = document["profagent_drops"]
    written = sum(1 for e in complete_events(document) if e.get("cat") in ("user_annotation", "cuda_runtime"))
    print(f"  ulimit -v {args.limit_mb} MiB, {args.hold_mb} MiB held, {args.limited_events} ranges: "
          f"{drops['host_events']} dropped by the buffers, {written} written, {drops['left_out_host_events']} left out "
          f"(room {drops['memory_room_bytes'] / 2**20:.0f} MiB, all needed {drops['memory_needed_bytes'] / 2**20:.0f} MiB), "
          f"trace {os.path.getsize(traces[0]) / 2**20:.1f} MiB, peak RSS {peak / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
