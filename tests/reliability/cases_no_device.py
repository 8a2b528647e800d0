"""Reliability cases of a machine without a usable CUDA device: every process that made a
CUDA call ends with the agent's closing line, "wrote ..." or "wrote nothing: <why>", also
when the program gave up after its first device query (as cuda-samples do: exit(EXIT_FAILURE)
from checkCudaErrors, exit(EXIT_WAIVED), a return from main, exit() inside an atexit
handler). Each mode runs twice: on devsim with the queries made to fail with error 35
(DEVSIM_FAIL), and on NVIDIA's own runtime, which without a driver fails every call with 35
(skipped where a device answers). The program's stdout and exit status must be unchanged.
"""
import os

import reliability as R

FAIL_35 = "cudaGetDeviceCount=35,cudaSetDevice=35,cudaMalloc=35"
NO_DEVICE_LINE = "[profagent] wrote nothing: no CUDA device: every call returned error 35"


def program(env):
    return os.path.join(os.path.dirname(env.app), "no_device_app")


def failed_queries(stdout):
    lines = [line for line in stdout.splitlines() if line.startswith("device queries ")]
    R.expect(lines, f"the program did not say how many queries failed: {stdout!r}")
    return int(lines[-1].split()[-1])


def run_mode(env, mode, runtime):
    out = env.out(f"no_device_{mode}_{runtime}")
    extra = {"PROFAGENT_OUTPUT_DIR": out}
    if runtime == "devsim":
        extra["DEVSIM_FAIL"] = FAIL_35
    library_path = env.devsim if runtime == "devsim" else env.cudart
    agent, plain = R.both(env, [program(env), mode], extra, library_path=library_path)
    if runtime == "nvidia" and "device found" in plain.stdout:
        print("SKIP: NVIDIA's runtime found a device here; this case is for machines without one")
        return None
    R.expect_unchanged(agent, plain)
    return agent, out


def query_case(mode, status):
    def case(env):
        said = []
        for runtime in ("devsim", "nvidia"):
            ran = run_mode(env, mode, runtime)
            if ran is None:
                continue
            agent, out = ran
            R.expect(agent.returncode == status, f"{runtime}: exit status {agent.returncode}, expected {status}")
            calls = failed_queries(agent.stdout)
            last = R.closing_line(agent)
            R.expect(last.startswith(NO_DEVICE_LINE), f"{runtime}: closing line {last!r}")
            counted = f", {calls} call" + ("" if calls == 1 else "s")
            R.expect(last.endswith(counted), f"{runtime}: {last!r} does not count the {calls} failed calls")
            R.expect(os.listdir(out) == [], f"{runtime}: files written: {os.listdir(out)}")
            said.append(runtime)
        return f"status {status}, closing line counts the failed calls ({', '.join(said)})"
    return case


def case_malloc_exit(env):
    """A recorded call that failed: the trace holds it with its error, and says so last."""
    said = []
    for runtime in ("devsim", "nvidia"):
        ran = run_mode(env, "malloc", runtime)
        if ran is None:
            continue
        agent, out = ran
        R.expect(agent.returncode == 2, f"{runtime}: exit status {agent.returncode}")
        R.expect(R.closing_line(agent).startswith("[profagent] wrote /"), f"{runtime}: {R.closing_line(agent)!r}")
        R.one_valid_trace(out, {"cudaMalloc": 1})
        said.append(runtime)
    return f"failed cudaMalloc written with its trace ({', '.join(said)})"


CASES = {
    "no_device_exit_failure": query_case("exit_failure", 1),
    "no_device_waived": query_case("waived", 2),
    "no_device_return": query_case("return", 0),
    "no_device_atexit_exit": query_case("atexit_exit", 3),
    "no_device_malloc_exit": case_malloc_exit,
}
