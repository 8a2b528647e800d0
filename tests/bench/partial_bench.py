#!/usr/bin/env python3
"""What the crash-safe partial trace costs, and the memory and exit flush of a long window,
which is streamed (collector/segment_stream.h) once its buffered events pass
PROFAGENT_STREAM_AFTER_MB (by default half of PROFAGENT_BUFFER_MB).

window_oom_app records EVENTS host events (user ranges, one window written at exit) under
LD_PRELOAD=libprofagent.so, for each PROFAGENT_BUFFER_MB given and with the partial trace off
(PROFAGENT_PARTIAL_INTERVAL_MS=0) and on (--interval-ms). Per run:
  - host events recorded (the summary's host_records) and dropped (the buffer was full);
  - peak RSS of the process (ru_maxrss), and that less the buffer;
  - the exit flush: from the agent's "flushing at exit" line to its closing "wrote" line, as
    the parent sees them on stderr (unbuffered lines);
  - partial appends (debug lines): how many, the events appended, the total and longest append;
  - a streamed window: its segments, the host events they wrote and the tail (the trace's
    profagent_streamed key), and the rate the agent's thread streamed at (segment events over
    the time from the first segment's line to the last's: every format asked for by --formats,
    PROFAGENT_TRACE_FORMAT, is appended in that time), and each trace file's bytes per event.
--stacks sets PROFAGENT_WITH_STACK=1 (segments carry their stacks, the folded files are folded
as the window streams). --summaries and --step-on set PROFAGENT_SUMMARIES (off unless given: a streamed window folds
them as it streams) and PROFAGENT_STEP_ON (the folded summaries sort each record into its step).
Figures only, never pass/fail on a figure; exits non-zero only when a run fails.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

APPEND = re.compile(r"partial trace: interval (\d+), (\d+) host events and (\d+) device records appended in (\d+) ms")
SEGMENT = re.compile(r"streamed trace: segment (\d+), (\d+) host events and (\d+) device records appended in (\d+) ms")


def streamed_key(out):
    """profagent_streamed of the window's trace (its last bytes) with the head's host drops
    (its first bytes: a streamed trace's head is the whole window's), or None."""
    traces = glob.glob(os.path.join(out, "*.trace.json"))
    if not traces:
        return None
    with open(traces[0], "rb") as f:
        head = f.read(1 << 17).decode("utf-8", "replace")
        f.seek(max(0, os.path.getsize(traces[0]) - 65536))
        tail = f.read().decode("utf-8", "replace")
    match = re.search(r'"profagent_streamed": (\{.*?\}),\s*"traceName"', tail, re.S)
    drops = re.search(r'"profagent_drops": *\{"host_events": *(\d+)', head)
    if not match or not drops:
        return None
    streamed = json.loads(match.group(1))
    streamed["dropped"] = int(drops.group(1))
    return streamed


def one_run(args, buffer_mb, interval_ms):
    out = os.path.join(args.work, f"out_{buffer_mb}_{interval_ms}")
    shutil.rmtree(out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PROFAGENT_", "DEVSIM_", "LD_PRELOAD"))}
    env.update({"LD_LIBRARY_PATH": args.devsim, "PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_BUFFER_MB": str(buffer_mb),
                "PROFAGENT_PARTIAL_INTERVAL_MS": str(interval_ms), "PROFAGENT_LOG_LEVEL": "debug",
                "PROFAGENT_SUMMARIES": args.summaries})
    if args.step_on:
        env["PROFAGENT_STEP_ON"] = args.step_on
    if args.stream_after_mb:
        env["PROFAGENT_STREAM_AFTER_MB"] = str(args.stream_after_mb)
    if args.formats:
        env["PROFAGENT_TRACE_FORMAT"] = args.formats
    if args.stacks:
        env["PROFAGENT_WITH_STACK"] = "1"
    # ru_maxrss of the child alone: measured by a fresh interpreter that runs only it.
    code = ("import resource,subprocess,sys,time\n"
            "p=subprocess.Popen(sys.argv[1:],stderr=subprocess.PIPE,stdout=subprocess.DEVNULL,text=True)\n"
            "for line in p.stderr: print(f'{time.monotonic():.6f} {line}',end='',file=sys.stderr,flush=True)\n"
            "p.wait(); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)")
    env_agent = dict(env, LD_PRELOAD=args.agent)
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code, args.program, "0", str(args.events)], env=env_agent,
                          capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - start
    peak_kib, status = (int(x) for x in done.stdout.split())
    if status != 0:
        sys.exit(f"window_oom_app failed ({status}): {done.stderr[-1500:]}")
    flush_start = flush_end = None
    appends = []
    segments = []  # (monotonic time of the line, host events)
    for line in done.stderr.splitlines():
        stamp, _, text = line.partition(" ")
        if "flushing at exit" in text:
            flush_start = float(stamp)
        if "[profagent] wrote " in text:
            flush_end = float(stamp)
        match = APPEND.search(text)
        if match:
            appends.append((int(match.group(2)), int(match.group(4))))
        match = SEGMENT.search(text)
        if match:
            segments.append((float(stamp), int(match.group(2))))
    summary = glob.glob(os.path.join(out, "*.summary.ndjson"))
    recorded = json.loads(open(summary[0]).readline())["host_records"] if summary else 0
    streamed = streamed_key(out)
    dropped = 0
    if streamed:
        recorded = streamed["host_events"] + streamed["tail_host_events"]
        dropped = streamed["dropped"]
    span = segments[-1][0] - segments[0][0] if len(segments) > 1 else 0
    rate = sum(n for _, n in segments[1:]) / span if span > 0 else 0
    leftovers = [n for n in os.listdir(out) if n.endswith(".partial") or n.startswith(".")]
    sizes = {suffix: sum(os.path.getsize(p) for p in glob.glob(os.path.join(out, "*" + suffix)))
             for suffix in (".trace.json", ".trace.json.gz", ".pftrace")}
    bytes_per_event = " ".join(f"{suffix[1:]} {size / max(recorded, 1):.0f}" for suffix, size in sizes.items() if size)
    shutil.rmtree(out, ignore_errors=True)
    return {"buffer_mb": buffer_mb, "interval_ms": interval_ms, "recorded": recorded,
            "peak_mib": peak_kib / 1024, "flush_s": (flush_end - flush_start) if flush_start and flush_end else -1,
            "wall_s": wall, "appends": len(appends), "appended": sum(a[0] for a in appends),
            "append_ms": sum(a[1] for a in appends), "longest_append_ms": max((a[1] for a in appends), default=0),
            "leftovers": leftovers, "segments": streamed["segments"] if streamed else 0, "dropped": dropped,
            "tail": streamed["tail_host_events"] if streamed else recorded, "stream_rate": rate,
            "bytes_per_event": bytes_per_event}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--program", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--devsim", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--buffers", default="64,256")
    parser.add_argument("--interval-ms", type=int, default=100)
    parser.add_argument("--formats", default="", help="PROFAGENT_TRACE_FORMAT (default: the agent's, json)")
    parser.add_argument("--stream-after-mb", type=int, default=0, help="PROFAGENT_STREAM_AFTER_MB (default: the agent's)")
    parser.add_argument("--summaries", default="off", help="PROFAGENT_SUMMARIES (default: off; a streamed window folds them)")
    parser.add_argument("--step-on", default="", help="PROFAGENT_STEP_ON (default: none; time:MS marks steps by time)")
    parser.add_argument("--stacks", action="store_true",
                        help="PROFAGENT_WITH_STACK=1: each event's call stack, symbolised as its segment streams")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    print(f"{args.events} host events requested (window_oom_app, user ranges), one window written at exit")
    print("load average (1 min) at start: %.2f" % os.getloadavg()[0])
    print("buffer MiB  partial ms  recorded   dropped    peak RSS MiB  peak-buffer MiB  exit flush s  tail events  "
          "segments  stream M ev/s  wall s  appends  appended  append ms (longest)")
    for buffer_mb in (int(b) for b in args.buffers.split(",")):
        for interval_ms in (0, args.interval_ms):
            r = one_run(args, buffer_mb, interval_ms)
            print(f"{r['buffer_mb']:>10}  {r['interval_ms']:>10}  {r['recorded']:>9}  {r['dropped']:>9}  {r['peak_mib']:>12.0f}  "
                  f"{r['peak_mib'] - buffer_mb:>15.0f}  {r['flush_s']:>12.2f}  {r['tail']:>11}  {r['segments']:>8}  "
                  f"{r['stream_rate'] / 1e6:>13.2f}  {r['wall_s']:>6.1f}  {r['appends']:>7}  "
                  f"{r['appended']:>8}  {r['append_ms']:>6} ({r['longest_append_ms']})  B/host event: {r['bytes_per_event']}",
                  flush=True)
            if r["leftovers"]:
                sys.exit(f"partial files left behind: {r['leftovers']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
