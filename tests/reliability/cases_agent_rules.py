"""Two rules of the agent that do not depend on how a process runs:

- A bad PROFAGENT_* value is said only by a process that uses the agent (its first CUDA call),
  exactly once there, never by /bin/true or the other stages of a shell pipeline that inherited
  the variable.
- The same program records the same calls whichever way the agent came in: LD_PRELOAD or
  CUDA_INJECTION64_PATH alone (device queries included; the calls torch.profiler leaves out of
  its traces are left out both ways).
Program: programs/window_edges.cu (window_edges.cmake).
"""
import collections
import os

import reliability as R

BAD = {"PROFAGENT_SCHEDULE": "#%!garbage?", "PROFAGENT_STEP_ON": "time:0"}


def program(env):
    return os.path.join(os.path.dirname(env.app), "window_edges")


def bad_value_lines(run):
    return [line for line in run.agent_lines() if any(name in line for name in BAD)]


def case_bad_value_warned_where_used(env):
    out = env.out("agent_rules_bad_values")
    extra = dict(BAD, PROFAGENT_OUTPUT_DIR=out)
    quiet = [["/bin/true"], ["/bin/sh", "-c", "echo a b c | tr a-z A-Z | wc -c"], ["/usr/bin/python3", "-c", "pass"]]
    for command in quiet:
        agent, plain = R.both(env, command, extra)
        R.expect((agent.stdout, agent.stderr, agent.returncode) == (plain.stdout, plain.stderr, plain.returncode),
                 f"{command}: the agent printed {agent.stderr!r}")
    # The CUDA program says each bad value once, in a pipeline whose other stages say nothing.
    pipeline = f"echo start | cat; {program(env)} queries 2 | cat; echo end | cat"
    agent, plain = R.both(env, ["/bin/sh", "-c", pipeline], extra)
    R.expect_unchanged(agent, plain)
    said = bad_value_lines(agent)
    for name in BAD:
        mine = [line for line in said if name in line]
        R.expect(len(mine) == 1, f"{name}: said {len(mine)} times in the pipeline: {said}")
    R.expect(R.closing_line(agent).startswith("[profagent] wrote"), f"closing line {R.closing_line(agent)!r}")
    return f"{len(quiet)} processes without CUDA silent; the CUDA stage said {len(said)} lines"


def call_counts(out):
    document = R.one_valid_trace(out)
    return collections.Counter(e["name"] for e in R.events(document)
                               if e.get("cat") in ("cuda_runtime", "cuda_driver"))


def case_same_calls_both_ways(env):
    """Runtime and driver calls per name, with the preload and by injection alone."""
    runs = {}
    for way in ("preload", "injection"):
        out = env.out(f"agent_rules_{way}")
        extra = {"PROFAGENT_OUTPUT_DIR": out}
        if way == "injection":
            extra["CUDA_INJECTION64_PATH"] = env.agent
        agent = R.run([program(env), "queries", "4"], extra, env.agent if way == "preload" else None, env.devsim)
        R.expect(agent.returncode == 0, f"{way}: status {agent.returncode}: {agent.stderr[-400:]!r}")
        runs[way] = call_counts(out)
    R.expect(runs["preload"] == runs["injection"],
             f"calls differ: preload only {dict(runs['preload'] - runs['injection'])}, "
             f"injection only {dict(runs['injection'] - runs['preload'])}")
    counts = runs["preload"]
    for name, count in {"cudaGetDeviceCount": 5, "cudaGetDeviceProperties": 1, "cudaMemcpy": 5,
                        "cudaLaunchKernel": 4, "cudaEventRecord": 4}.items():
        R.expect(counts[name] == count, f"{name}: {counts[name]} events, the program made {count} calls")
    left_out = [n for n in ("cudaSetDevice", "cudaGetDevice", "cudaGetLastError", "cudaEventCreate",
                            "cudaEventDestroy") if counts[n]]
    R.expect(not left_out, f"calls torch.profiler leaves out were recorded: {left_out}")
    return f"{sum(counts.values())} calls of {len(counts)} names, the same both ways"


CASES = {
    "agent_rules_bad_value_warned_where_used": case_bad_value_warned_where_used,
    "agent_rules_same_calls_both_ways": case_same_calls_both_ways,
}
