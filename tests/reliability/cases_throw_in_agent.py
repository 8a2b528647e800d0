"""Reliability case: no C++ exception of the agent leaves a hook. A test-only preload
(programs/throw_in_agent/throwing_new.cpp) makes every allocation made on the agent's behalf
throw std::bad_alloc while the program makes CUDA runtime calls and opens profagent ranges (the
first recorded call of each hook interns its name, the range its own; logging allocates too).
Each call must still return the real result, the program's output and exit status must be
those of a run without the agent, what was lost must be said once, and the calls made once
allocation works again must be in the trace.
"""
import os
import re

import reliability as R


def case_throw_in_agent(env):
    bin_dir = os.path.dirname(env.app)
    out = env.out("throw_in_agent")
    report = os.path.join(out, "refused.txt")
    command = [os.path.join(bin_dir, "throw_in_agent_app")]
    shim = os.path.join(bin_dir, "libthrowing_new.so")
    agent = R.run(command, {"PROFAGENT_OUTPUT_DIR": out, "THROWING_NEW_REPORT": report},
                  env.agent + ":" + shim, env.devsim)
    plain = R.run(command, {}, shim, env.devsim)
    R.expect_unchanged(agent, plain)
    R.expect(agent.returncode == 0 and "data intact" in agent.stdout and "WRONG" not in agent.stdout,
             f"a call did not return the real result: {agent.stdout!r}")
    with open(report) as f:
        refused = int(f.read())
    R.expect(refused > 0, "no allocation of the agent was made to throw: the case tested nothing")
    said = [line for line in agent.agent_lines() if "bad_alloc" in line or "were not printed" in line]
    R.expect(said, f"what the agent lost was not said: {agent.agent_lines()}")
    R.expect(len(said) == len(set(said)), f"a loss was said more than once: {said}")
    R.expect(any(re.search(r"wrote .*trace\.json", line) for line in agent.agent_lines()),
             f"no trace written: {agent.agent_lines()}")
    document = R.load(R.traces(out)[-1])
    mallocs = R.events(document, "cudaMalloc")
    R.expect(len(mallocs) >= 1, "the cudaMalloc made with allocation working is not in the trace")
    dropped = document["profagent_drops"]["host_events"]
    R.expect(len(mallocs) == 2 or dropped > 0,
             f"{2 - len(mallocs)} cudaMalloc calls are neither in the trace nor counted as dropped")
    return (f"{refused} agent allocations refused inside hooks; every call returned its real result, "
            f"{dropped} events counted as dropped")


CASES = {"throw_in_agent": case_throw_in_agent}
