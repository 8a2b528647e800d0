"""A window's end under a memory limit: what fits is written, the rest is counted and said.

Program: programs/window_oom_app.cpp, run under `ulimit -v` (RLIMIT_AS, set for the child only)
with and without the agent: it holds memory of its own to the end (never freed) and records
many user ranges. Writing a window turns each 48-byte event into a ~210-byte record: under the
limit the agent cannot hold them all, and before, the whole window was lost ("out of memory
while freezing a window; it is lost", no file).
"""
import json
import os
import resource
import subprocess

import reliability as R
from reliability import trace_reader

MIB = 1 << 20


def run_limited(env, command, env_extra, limit, agent):
    """R.run with RLIMIT_AS set in the child before exec (the program and the agent both live
    under it, as under a shell's `ulimit -v`)."""
    variables = R.clean_environment()
    variables.update(env_extra)
    variables["LD_LIBRARY_PATH"] = env.devsim
    if agent:
        variables["LD_PRELOAD"] = env.agent

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run(command, env=variables, capture_output=True, timeout=300, preexec_fn=limited)
    return R.Run(type("C", (), {"stdout": done.stdout.decode("utf-8", "replace"),
                                "stderr": done.stderr.decode("utf-8", "replace"), "returncode": done.returncode}))


def case_address_space_limit(env):
    """1 GiB of address space, 500 MiB held by the program, 4 M ranges: the trace is written with
    the window's earliest part; every range recorded is either in it or counted as left out; one
    line says so; the program's output and status are unchanged."""
    out = env.out("window_memory_limit")
    program = os.path.join(os.path.dirname(env.app), "window_oom_app")
    command = [program, "500", "4000000"]
    extra = {"PROFAGENT_OUTPUT_DIR": out}
    agent = run_limited(env, command, extra, 1 << 30, True)
    plain = run_limited(env, command, extra, 1 << 30, False)
    R.expect_unchanged(agent, plain)
    R.expect(agent.returncode == 0 and agent.stdout.startswith("done"), f"status {agent.returncode}: {agent.stderr[-600:]!r}")
    R.expect(not [l for l in agent.agent_lines() if "it is lost" in l], f"the window was lost: {agent.agent_lines()}")
    document = R.one_valid_trace(out)
    drops = document["profagent_drops"]
    left_out = drops["left_out_host_events"]
    R.expect(left_out > 0 and drops["memory_room_bytes"] > 0 and drops["memory_needed_bytes"] > drops["memory_room_bytes"] - (8 << 20),
             f"nothing left out under the limit: {drops}")
    ranges = trace_reader.complete_events(document, "user_annotation")
    calls = trace_reader.complete_events(document, "cuda_runtime")
    R.expect(len(ranges) > 10000, f"only {len(ranges)} ranges written: the trace should hold what fits")
    # Every event the agent recorded is written or counted: recorded = 4 M ranges + the CUDA
    # calls, less those the buffers dropped under the same limit.
    calls_made = int(agent.stdout.split(", ")[1].split()[0])
    recorded = 4_000_000 + calls_made - drops["host_events"]
    written = len(ranges) + len(calls)
    R.expect(written + left_out == recorded, f"written {written} + left out {left_out} != recorded {recorded}")
    said = [l for l in agent.agent_lines() if "left out" in l]
    R.expect(len(said) == 1 and f"{left_out} host events" in said[0], f"the left-out line: {said}")
    return f"{written} events written, {left_out} left out and said once under a 1 GiB limit"


CASES = {
    "window_memory_limit": case_address_space_limit,
}
