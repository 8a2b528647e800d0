"""Reliability case of the DIOPI GOT patching under concurrent loads: threads load libraries
that import a DIOPI operator, some through a library constructor (a dlopen nested under the
loader's lock, whose hook scans the new object), some directly while calling the operator
through each fresh copy, and all of them unload again. The agent must neither deadlock (a
scan holding an agent lock across a loader call did, every run) nor crash on an object
unloaded mid-scan, and every operator call made through a freshly loaded copy must be in the
trace (its dlopen returned only once the copy's slots were patched).
"""
import os

import reliability as R

ITERATIONS = "300"


def case_diopi_concurrent_loads(env):
    bin_dir = os.path.dirname(env.app)
    out = env.out("diopi_concurrent_loads")
    command = [os.path.join(bin_dir, "diopi_race_app"), os.path.join(bin_dir, "diopi_race"), ITERATIONS]
    try:
        agent, plain = R.both(env, command, {"PROFAGENT_OUTPUT_DIR": out}, timeout=60)
    except R.subprocess.TimeoutExpired:
        raise R.Failed("the program did not finish in 60 s: the loads deadlocked")
    R.expect_unchanged(agent, plain)
    calls = R.expected(agent.stdout)["diopiFill"]
    R.expect(calls == 2 * int(ITERATIONS) * 3, f"the program made {calls} operator calls")
    R.one_valid_trace(out, {"diopiFill": calls})
    return f"{calls} operator calls through {2 * int(ITERATIONS)} fresh loads, all recorded, no deadlock"


CASES = {"diopi_concurrent_loads": case_diopi_concurrent_loads}
