#!/usr/bin/python3
"""Runs unmodelled_calls (an nvcc program calling two runtime functions devsim does not model,
twice each) on the simulated device, without and with the agent preloaded.

    run_unmodelled_calls.py <program> <devsim library dir> <libprofagent.so> <output dir>

Without the agent: exit 0, every call line and both PASS lines, and on stderr exactly one
"not modelled" line per name (not one per call). With the agent: the same exit status, stdout
and stderr lines, and a trace holding each unmodelled call twice as a runtime API event with
its callback id and error 801. Only the Python standard library is used."""
import collections
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "lib"))
from trace_reader import load_trace  # noqa: E402

NAMES = ("cudaIpcGetMemHandle", "cudaImportExternalMemory")
NOT_MODELLED = re.compile(r"^devsim: (\w+) is not modelled; it returns cudaErrorNotSupported$", re.M)
NOT_SUPPORTED = 801


def run(program, env):
    done = subprocess.run([program], env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def check_output(label, rc, out, err):
    failures = []
    if rc != 0:
        failures.append(f"{label}: exit status {rc}")
    for name in NAMES:
        calls = re.findall(rf"^{name} -> 801 \(cudaErrorNotSupported\), last error 801, then 0$", out, re.M)
        if len(calls) != 2:
            failures.append(f"{label}: {len(calls)} lines of {name} failing as expected, not 2")
    for line in ("PASS unmodelled calls", "PASS round trip and launch after them"):
        if line not in out:
            failures.append(f"{label}: no '{line}'")
    said = collections.Counter(NOT_MODELLED.findall(err))
    if said != collections.Counter(NAMES):
        failures.append(f"{label}: 'not modelled' lines on stderr {dict(said)}, want one per name")
    return failures


def check_trace(output_dir):
    traces = glob.glob(os.path.join(output_dir, "*.trace.json"))
    if len(traces) != 1:
        return [f"agent: {len(traces)} trace files in {output_dir}, want 1"]
    events = load_trace(traces[0])["traceEvents"]
    failures = []
    for name in NAMES:
        calls = [e for e in events if e.get("name") == name and e.get("cat") == "cuda_runtime"]
        errors = [e.get("args", {}).get("cuda_error") for e in calls]
        if len(calls) != 2 or errors != [NOT_SUPPORTED] * 2:
            failures.append(f"agent trace: {name} events {len(calls)} with errors {errors}, want 2 with 801")
        elif any(not e["args"].get("cbid") for e in calls):
            failures.append(f"agent trace: {name} reported without its callback id")
    return failures


def main():
    program, library_dir, agent, output_dir = sys.argv[1:5]
    env = dict(os.environ, LD_LIBRARY_PATH=library_dir)
    env.pop("LD_PRELOAD", None)
    plain = run(program, env)
    print(plain[1] + plain[2])
    failures = check_output("without agent", *plain)

    shutil.rmtree(output_dir, ignore_errors=True)
    agent_env = dict(env, LD_PRELOAD=agent, PROFAGENT_OUTPUT_DIR=output_dir)
    profiled = run(program, agent_env)
    failures += check_output("with agent", *profiled)
    if profiled[:2] != plain[:2]:
        failures.append("the agent changed the exit status or the output")
    failures += check_trace(output_dir)
    for failure in failures:
        print("FAIL " + failure)
    if not failures:
        print("PASS unmodelled calls fail alone, once said, unchanged under the agent")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
