#!/usr/bin/python3
"""ns per cuLaunchKernel added by the CUPTI callback path: the median of 5 runs of
driver_launch_bench (100k launches each) without the agent, with the agent injected but idle
(a schedule that never records: callbacks switched off), idle with an api: step marker
(callbacks on, nothing recorded) and recording. The recording runs must
trace every launch.

    inject_bench.py <driver_launch_bench> <libprofagent.so> <devsim dir> <out dir>"""
import glob
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from trace_reader import complete_events, load_trace  # noqa: E402

COUNT = 100000


def once(program, env, out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    environment = dict(os.environ, DEVSIM_HOST_COST_SCALE="0", PROFAGENT_OUTPUT_DIR=out, **env)
    done = subprocess.run([program, str(COUNT)], env=environment, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        sys.exit(f"{env}: exit {done.returncode}\n{done.stderr}")
    return float(done.stdout.split()[1])


def median(program, env, out):
    return statistics.median(once(program, env, out) for _ in range(5))


def main():
    program, agent, devsim, out = sys.argv[1:5]
    base = {"LD_LIBRARY_PATH": devsim}
    injected = dict(base, CUDA_INJECTION64_PATH=agent)
    plain = median(program, base, out)
    # Idle: a schedule that never records (one step, skipped). Without a marker the callback's
    # domains are switched off; with an api: marker they stay on and every call is checked.
    idle = median(program, dict(injected, PROFAGENT_STEP_ON="time:600000", PROFAGENT_SKIP_FIRST="5"), out)
    marking = median(program, dict(injected, PROFAGENT_STEP_ON="api:cuCtxSynchronize", PROFAGENT_SKIP_FIRST="5"), out)
    # Recording also pays CUPTI's activity records (devsim's share of the cost): the same run
    # with the callbacks refused isolates what the callback path adds.
    refused = median(program, dict(injected, DEVSIM_CUPTI_FAIL="cuptiSubscribe=CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"), out)
    recording = median(program, injected, out)
    traces = glob.glob(os.path.join(out, "*.trace.json"))
    launches = sum(1 for e in complete_events(load_trace(traces[0])) if e.get("name") == "cuLaunchKernel")
    print(f"cuLaunchKernel ns/call: no agent {plain:.1f}, agent idle {idle:.1f} ({idle - plain:+.1f}), "
          f"idle with an api: marker {marking:.1f} ({marking - plain:+.1f}), "
          f"recording {recording:.1f} ({recording - plain:+.1f}; callbacks refused {refused:.1f}, "
          f"so the callback adds {recording - refused:+.1f}); {launches} launches traced")
    return 0 if launches == COUNT else 1


if __name__ == "__main__":
    sys.exit(main())
