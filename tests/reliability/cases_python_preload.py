"""The Python hook under plain `LD_PRELOAD=libprofagent.so python3 ...`, with no launcher: the
same phase ranges and `python` steps as `profagent run`, and a program that cannot tell the
agent is there (its environment, its children's, sys.path, sys.modules, tracebacks), compared
with the same program run without the agent at all. Programs: tests/preload/programs/
train_phases.py and programs/python_hook_probe.py (Debian's torch 1.13, CPU)."""
import ast
import collections
import glob
import os
import re

import reliability as R
from cases_launcher import PHASES, PYTHON, annotations, launcher
from cases_stacks import frames_of, stack_events

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(os.path.dirname(HERE), "preload", "programs", "train_phases.py")
PROBE = os.path.join(HERE, "programs", "python_hook_probe.py")
SCHEDULE = {"PROFAGENT_SKIP_FIRST": "1", "PROFAGENT_ACTIVE": "3", "PROFAGENT_REPEAT": "2"}


def needs_torch():
    if not os.path.exists("/usr/lib/python3/dist-packages/torch/__init__.py"):
        return "SKIP: needs Debian's python3-torch"
    return None


def windows(out_dir):
    """Per window trace, in window order: how often each annotation (phase range, ProfilerStep#N)
    was recorded."""
    found = []
    def number(path):
        return int(re.search(r"\.w(\d+)\.", os.path.basename(path)).group(1))

    for path in sorted(glob.glob(os.path.join(out_dir, "*.trace.json")), key=number):
        names = [e["name"] for e in R.load(path)["traceEvents"] if e.get("cat") == "user_annotation"]
        found.append(dict(collections.Counter(names)))
    return found


def case_preload_python_hook_as_launcher(env):
    """train_phases.py (8 iterations, `python` steps, skip 1 / active 3 / repeat 2) under plain
    LD_PRELOAD and under `profagent run`: the same windows, each with the same phase ranges and
    ProfilerStep# ranges, and the program's output as without the agent."""
    skip = needs_torch()
    if skip:
        return skip
    launched, preloaded = env.out("python_preload_launcher"), env.out("python_preload_plain")
    options = ["--skip-first", "1", "--active", "3", "--repeat", "2", "--step-on", "python"]
    by_launcher = R.run([launcher(env), "run", "--output-dir", launched] + options + ["--", PYTHON, TRAIN, "8"],
                        {}, None, env.devsim, timeout=300)
    by_preload = R.run([PYTHON, TRAIN, "8"], dict(SCHEDULE, PROFAGENT_STEP_ON="python", PROFAGENT_OUTPUT_DIR=preloaded),
                       env.agent, env.devsim, timeout=300)
    plain = R.run([PYTHON, TRAIN, "8"], {}, None, env.devsim, timeout=300)
    R.expect_unchanged(by_preload, plain, "plain LD_PRELOAD: ")
    R.expect(by_launcher.stdout == plain.stdout, "profagent run: the program's output changed")
    ours, theirs = windows(preloaded), windows(launched)
    R.expect(len(theirs) == 2, f"profagent run wrote {len(theirs)} windows, not 2")
    R.expect(ours == theirs, f"plain LD_PRELOAD recorded {ours}\n--- profagent run ---\n{theirs}")
    steps = sorted(n for window in ours for n in window if n.startswith("ProfilerStep#"))
    R.expect(steps == [f"ProfilerStep#{i}" for i in (1, 2, 3, 4, 5, 6)], f"steps {steps}")
    phases = [p.replace("Sequential", "Net") for p in PHASES]  # train_phases.py's model
    missing = [p for p in phases if not any(n.startswith(p) for window in ours for n in window)]
    R.expect(not missing, f"phase ranges not recorded under plain LD_PRELOAD: {missing}")
    return f"{len(ours)} windows, {sum(sum(w.values()) for w in ours)} annotations, equal to profagent run's"


ENVIRONMENTS = ("environment", "child environment", "python child environment")


def environment_entries(line):
    """(title, entries as "NAME=value") of a printed environment: os.environ's items, /usr/bin/env's
    lines, or a Python child's printed items; (None, None) for any other line."""
    title, _, value = line.partition(": ")
    if title not in ENVIRONMENTS:
        return None, None
    entries = ast.literal_eval(value)
    entries = ast.literal_eval(entries) if isinstance(entries, str) else entries
    return title, [e if isinstance(e, str) else f"{e[0]}={e[1]}" for e in entries]


def expect_same_environment(mine, without, agent):
    """The same entries but LD_PRELOAD (the user's, naming the agent); the /usr/bin/env child, a C
    program with no hook, also lists the variables the agent in it sets for itself."""
    title, ours = environment_entries(mine)
    _, theirs = environment_entries(without)
    preload = f"LD_PRELOAD={agent}"
    R.expect(preload in ours, f"{title}: LD_PRELOAD is not the user's: {[e for e in ours if 'LD_PRELOAD' in e]}")
    own = {f"{name}={os.path.realpath(agent)}" for name in ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH")}
    extra = {preload} | (own if title == "child environment" else set())
    R.expect(sorted(set(ours) - extra) == sorted(theirs) and len(ours) == len(theirs) + len(extra),
             f"{title}: with the agent only {sorted(set(ours) - set(theirs))}, without only {sorted(set(theirs) - set(ours))}")


def case_preload_python_hook_invisible(env):
    """python_hook_probe.py under plain LD_PRELOAD prints what it prints without the agent at all:
    tracebacks, introspection, loaders, its os.environ (PYTHONPATH unset as given, the agent's
    CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH hidden) and a Python child's with nothing but the user's LD_PRELOAD
    added, sys.path, sys.modules, its own uncaught error and status; the phases are recorded.
    The /usr/bin/env child also lists the variable the agent in that C child sets for itself. With -I, -E and -S,
    which would never run the hook, PYTHONPATH and sys.path are left as they are."""
    skip = needs_torch()
    if skip:
        return skip
    out = env.out("python_preload_probe")
    hooked = R.run([PYTHON, PROBE], {"PROFAGENT_OUTPUT_DIR": out}, env.agent, env.devsim, timeout=300)
    plain = R.run([PYTHON, PROBE], {"PROFAGENT_OUTPUT_DIR": out}, None, env.devsim, timeout=300)
    R.expect(plain.returncode == 1 and "ValueError: refused on purpose" in plain.stderr,
             f"the probe did not end with its own error: {plain.returncode} {plain.stderr[-300:]!r}")
    R.expect(not [l for l in hooked.agent_lines() if "python hook" in l], f"hook lines: {hooked.agent_lines()}")
    ours, theirs = hooked.stdout.splitlines(), plain.stdout.splitlines()
    R.expect(len(ours) == len(theirs), f"{len(ours)} lines printed, {len(theirs)} without the agent")
    for mine, without in zip(ours, theirs):
        if environment_entries(mine)[0]:
            expect_same_environment(mine, without, env.agent)
        else:
            R.expect(mine == without, f"printed\n{mine[:600]}\n--- without the agent ---\n{without[:600]}")
    R.expect(hooked.returncode == plain.returncode and hooked.other_lines() == plain.other_lines(),
             f"status {hooked.returncode} / {plain.returncode}; stderr {hooked.other_lines()[-5:]}")
    found = annotations(out)
    missing = [p for p in PHASES if not any(name.startswith(p) for name in found)]
    R.expect(not missing, f"phase ranges not recorded: {missing} (found {sorted(found)})")
    script = "import os, sys; print(os.environ.get('PYTHONPATH'), sys.path)"
    for option in ("-I", "-E", "-S"):
        for python_path in ({}, {"PYTHONPATH": "/nowhere"}):
            left = R.run([PYTHON, option, "-c", script], python_path, env.agent, env.devsim)
            alone = R.run([PYTHON, option, "-c", script], python_path, None, env.devsim)
            R.expect(left.stdout == alone.stdout, f"{option} {python_path}: {left.stdout!r} / {alone.stdout!r}")
    # Said once the program uses the agent (here: a profagent_step() through ctypes).
    used = R.run([PYTHON, "-I", "-c", "import ctypes; ctypes.CDLL(None).profagent_step()"],
                 {"PROFAGENT_OUTPUT_DIR": out}, env.agent, env.devsim)
    said = [l for l in used.agent_lines() if "Python hook not started" in l]
    R.expect(len(said) == 1 and "python was started with -I" in said[0], f"lines {used.agent_lines()}")
    return f"{len(ours)} lines as without the agent; phases recorded; -I, -E, -S left alone"


CHECK_SCRIPT = '''
import sys
import importlib.machinery, importlib.util


def extension(path):
    loader = importlib.machinery.ExtensionFileLoader("_profagent_ranges", path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location("_profagent_ranges", path, loader=loader))
    loader.exec_module(module)
    return module


def check(ranges, shift):
    codes, frame = [], sys._getframe()
    while frame is not None:
        codes.append(frame.f_code)
        frame = frame.f_back
    return ranges.check_frames(tuple(codes), sys._getframe().f_lineno + shift, codes[0].co_name)


def before():
    rt.cudaStreamSynchronize(None)


def after():
    rt.cudaStreamSynchronize(None)


ranges = extension(sys.argv[1])
before()
print("right", check(ranges, 0))
print("wrong", check(ranges, int(sys.argv[2])))
after()
print("right again", check(ranges, 0))
'''


def case_preload_python_frames_checked(env):
    """The layout Python frames are read with is checked at start-up by the hook (so frames show
    from the first call), and a check that finds other frames than Python's own turns them off
    for good: one line, and the calls after it have native frames only. The same script with a
    right second check keeps them, with no line."""
    ranges = os.path.join(os.path.dirname(env.agent), "profagent_python", "_profagent_ranges.abi3.so")
    results = {}
    for shift in (1, 0):
        out = env.out(f"python_frames_check_{shift}")
        script = os.path.join(out, "check.py")
        with open(script, "w") as f:
            f.write(R.py_runtime(env) + CHECK_SCRIPT)
        run = R.run([PYTHON, script, ranges, str(shift)], {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_WITH_STACK": "1"},
                    env.agent, env.devsim)
        R.expect(run.returncode == 0, f"status {run.returncode}: {run.stderr[-400:]}")
        document = R.one_valid_trace(out, {"cudaStreamSynchronize": 2})
        calls = sorted(stack_events(document, "cudaStreamSynchronize"), key=lambda e: e["ts"])
        functions = [[f.split(": ", 1)[1] for f in frames_of(document, e["sf"]) if ".py(" in f] for e in calls]
        said = [l for l in run.agent_lines() if "not the interpreter's own" in l]
        results[shift] = (run.stdout.split(), functions, said)
    printed, functions, said = results[1]
    R.expect(printed == ["right", "True", "wrong", "False", "right", "again", "False"], f"printed {printed}")
    R.expect(functions[0][:2] == ["before", "<module>"] and functions[1] == [], f"frames {functions}")
    R.expect(len(said) == 1 and "(another line:" in said[0], f"lines {said}")
    printed, functions, said = results[0]
    R.expect(printed == ["right", "True", "wrong", "True", "right", "again", "True"], f"printed {printed}")
    R.expect(functions[0][:2] == ["before", "<module>"] and functions[1][:2] == ["after", "<module>"] and not said,
             f"frames {functions}, lines {said}")
    return "checked at start-up; a wrong check turns frames off with one line"


def case_preload_python_too_old(env):
    """An interpreter older than the hook supports (2.7, 3.7: a program named like Python that
    exports what CPython exports, not yet started) is left alone: PYTHONPATH as given, and one
    line naming its version once the program uses the agent. A 3.8 is given the hook."""
    program = os.path.join(os.path.dirname(env.app), "python_lookalike")
    for version in ("2.7.18", "3.7.17", "3.8.10"):
        for python_path in (None, "/nowhere"):
            extra = dict({"PYTHONPATH": python_path} if python_path else {}, LOOKALIKE_VERSION=version)
            run = R.run([program], extra, env.agent, env.devsim)
            said = [l for l in run.agent_lines() if "Python hook not started" in l]
            if version == "3.8.10":
                hook = os.path.join(os.path.dirname(env.agent), "profagent_python")
                wanted = f"PYTHONPATH={hook}" + (f":{python_path}" if python_path else "")
                R.expect(run.stdout.strip() == wanted and not said, f"{version}: {run.stdout!r} {said}")
                continue
            R.expect(run.stdout.strip() == f"PYTHONPATH={python_path or '(unset)'}", f"{version}: {run.stdout!r}")
            R.expect(len(said) == 1 and f"Python {version} is older than 3.8" in said[0], f"{version}: {said}")
    return "2.7 and 3.7 left alone with one line; 3.8 given the hook"


CASES = {
    "preload_python_hook_as_launcher": case_preload_python_hook_as_launcher,
    "preload_python_hook_invisible": case_preload_python_hook_invisible,
    "preload_python_frames_checked": case_preload_python_frames_checked,
    "preload_python_too_old": case_preload_python_too_old,
}
