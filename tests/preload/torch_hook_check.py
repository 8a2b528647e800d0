#!/usr/bin/python3
"""The Python hook's side of torch operators (agent/python/profagent_hook.py, _TorchOperators),
run as users run it: `profagent run` of a Python training loop.

    torch_hook_check.py --launcher L --out DIR cpu_build -- python3 train_steps.py 6
    torch_hook_check.py --launcher L --out DIR --fake-torch FAKE_TORCH_DIR fake_cuda -- python3 fake_torch_steps.py 6 [profiler]

cpu_build (Debian's torch): the hook finds a CPU build, says once why no operator is recorded,
and the program's output is what it is without the agent. fake_cuda (a stand-in CUDA torch that
prints when emit_nvtx is entered and left): emit_nvtx is on exactly from the forward pass of
the window's warm-up step to the first forward pass after the window, with record_shapes from
PROFAGENT_RECORD_SHAPES; when the program starts its own torch profiler, emit_nvtx is left
before it starts and never entered again, said once.
"""
import argparse
import os
import subprocess
import sys

SCHEDULE = ["--wait", "1", "--warmup", "1", "--active", "2", "--repeat", "1"]  # steps 1 warm-up, 2-3 recorded


def run(command, env):
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=240)


def lines_of(stderr, text):
    return [line for line in stderr.splitlines() if line.startswith("[profagent]") and text in line]


def fail(message, completed):
    print(f"FAILED: {message}\n--- stdout:\n{completed.stdout[-3000:]}\n--- stderr:\n{completed.stderr[-3000:]}")
    return 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--launcher", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("mode", choices=("cpu_build", "fake_cuda"))
    parser.add_argument("--fake-torch")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    a = parser.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    env = dict(os.environ, PROFAGENT_RECORD_SHAPES="1")
    if a.mode == "fake_cuda":
        env["PYTHONPATH"] = a.fake_torch
    plain = run(command, env)
    markers = ["--step-on", "python"] if a.mode == "cpu_build" else []  # fake_torch_steps.py calls profagent_step
    agent = run([a.launcher, "run", "--output-dir", a.out, *SCHEDULE, *markers, "--", *command], env)
    if agent.returncode != plain.returncode:
        return fail(f"exit status {agent.returncode} under the agent, {plain.returncode} without", agent)
    said = lines_of(agent.stderr, "no torch operators are recorded")
    if a.mode == "cpu_build":
        if agent.stdout != plain.stdout:
            return fail("the program's output changed under the agent", agent)
        if len(said) != 1 or "CPU build" not in said[0]:
            return fail(f"expected one line saying torch is a CPU build, got {said}", agent)
        print(f"passed: CPU build detected, said once: {said[0]}")
        return 0
    got = [line for line in agent.stdout.splitlines()]
    own_profiler = "profiler" in command
    if own_profiler:
        wanted = ["step 0", "step 1", "emit_nvtx on record_shapes=True", "step 2", "step 3", "emit_nvtx off",
                  "program profiler on", "program profiler off", "step 4", "step 5", "done"]
        why = "the program starts its own torch profiler"
    else:
        wanted = ["step 0", "step 1", "emit_nvtx on record_shapes=True", "step 2", "step 3", "step 4",
                  "emit_nvtx off", "step 5", "done"]
        why = None
    if got != wanted:
        return fail(f"emit_nvtx followed the steps as {got}, wanted {wanted}", agent)
    if (why is None and said) or (why is not None and (len(said) != 1 or why not in said[0])):
        return fail(f"lines about torch operators: {said}, wanted {'none' if why is None else why}", agent)
    print(f"passed: {' | '.join(got)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
