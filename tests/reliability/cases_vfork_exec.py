"""Reliability case of execl, execlp and execle called from a vfork child: the agent's
wrappers of them run in the child, which shares the parent's memory, and must not allocate.
The program counts the mallocs made while its children run exec (its own malloc precedes
every library's, the agent's included) and prints them with the children's exit statuses:
with the agent the output must be the one without it — zero mallocs, same statuses, same
output of the exec'd programs.
"""
import os

import reliability as R


def case_vfork_exec_no_malloc(env):
    out = env.out("vfork_exec")
    command = [os.path.join(os.path.dirname(env.app), "vfork_exec_app")]
    agent, plain = R.both(env, command, {"PROFAGENT_OUTPUT_DIR": out})
    R.expect_unchanged(agent, plain)
    lines = [line for line in agent.stdout.splitlines() if "mallocs in the child" in line]
    R.expect(len(lines) == 3, f"not every variant ran: {agent.stdout!r}")
    for line in lines:
        R.expect(line.endswith("mallocs in the child 0"), f"allocated in a vfork child: {line}")
        R.expect("missing program status 127, found program status 0" in line, f"exec went wrong: {line}")
    ran = [line for line in agent.stdout.splitlines() if line.endswith("ran") or line.endswith("ran 1")]
    R.expect(len(ran) == 3, f"the exec'd programs did not all run: {agent.stdout!r}")
    return "execl/execlp/execle in vfork children: exec'd programs ran, no malloc"


CASES = {"vfork_exec_no_malloc": case_vfork_exec_no_malloc}
