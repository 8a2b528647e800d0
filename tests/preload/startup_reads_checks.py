#!/usr/bin/python3
"""What a process that records nothing reads at start-up: startup_reads_checks.py --agent LIB --out DIR

Under strace (file opens of every process): a shell that runs /bin/true and a forked subshell
with the agent preloaded opens neither /proc/stat nor /sys/devices/system/cpu/online (the
first window's system CPU times wait for its first recorded event, collector/cpu_times.h).
A process that records one user range reads them for its window's start and end, and its trace
has both ends of profagent_cpu_times. Only the Python standard
library (and strace) is used.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from trace_reader import complete_events, load_trace  # noqa: E402

SYSTEM_FILES = ("/proc/stat", "/sys/devices/system/cpu/online")
RECORDING = ("import ctypes; agent = ctypes.CDLL(None); "
             "agent.profagent_range_push(b'startup_reads'); agent.profagent_range_pop()")
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
    return condition


def opens_under_agent(args, command, out, log_name):
    """The files opened by `command` and its children with the agent preloaded."""
    log = os.path.join(out, log_name)
    env = dict(os.environ, LD_PRELOAD=args.agent, PROFAGENT_OUTPUT_DIR=os.path.join(out, "traces"))
    done = subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", log, *command],
                          env=env, capture_output=True, text=True, timeout=120)
    expect(done.returncode == 0, f"{command} exited with {done.returncode}: {done.stderr[-1500:]}")
    with open(log) as f:
        return [line for line in f if any(f'"{name}"' in line for name in SYSTEM_FILES)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agent", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)

    idle = opens_under_agent(args, ["/bin/sh", "-c", "/bin/true; (/bin/true); exit 0"], args.out, "idle.strace")
    expect(not idle, f"processes that record nothing read the system's CPU times: {idle}")

    recording = opens_under_agent(args, ["/usr/bin/python3", "-c", RECORDING], args.out, "recording.strace")
    proc_stat = [line for line in recording if '"/proc/stat"' in line]
    # Once for the first window's start, once for its end.
    expect(len(proc_stat) == 2, f"a recording process read /proc/stat {len(proc_stat)} times, not 2: {recording}")
    traces = sorted(glob.glob(os.path.join(args.out, "traces", "*.trace.json")))
    if expect(len(traces) == 1, f"expected one trace, got {traces}"):
        trace = load_trace(traces[0])
        cpu = trace.get("profagent_cpu_times")
        ranges = [e for e in complete_events(trace) if e.get("name") == "startup_reads"]
        if expect(cpu is not None and ranges, f"{traces[0]}: no profagent_cpu_times or no range"):
            expect(cpu["end"]["system_busy_ns"] >= cpu["start"]["system_busy_ns"] > 0,
                   f"{traces[0]}: system times {cpu}")
            expect(cpu["end"]["process_ns"] > cpu["start"]["process_ns"] and cpu["start"]["cpus"] >= 1,
                   f"{traces[0]}: process times {cpu}")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("passed: nothing recorded, no system CPU times read; a recording process read them at its first event")
    return 0


if __name__ == "__main__":
    sys.exit(main())
