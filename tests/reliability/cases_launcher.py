"""What `profagent run` adds to a program must not show: its Python hook (tracebacks,
introspection, module loaders, sitecustomize, the environment of the program and its children,
sys.path and sys.modules, the program's import finders) and where it is installed (a path with
a space). Programs: programs/python_hook_probe.py (Debian's torch 1.13) and reliability_app."""
import ast
import glob
import os
import shutil
import subprocess
import tempfile

import reliability as R
from reliability import trace_reader

PYTHON = "/usr/bin/python3"
PHASES = ("enumerate(DataLoader)#", "Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad",
          "nn.Module: Sequential", "autograd.backward#Tensor.backward")


def launcher(env):
    return os.path.join(os.path.dirname(os.path.dirname(env.agent)), "bin", "profagent")


def program_lines(run):
    """The program's own stderr: not the agent's lines, nor the launcher's report, which starts
    with its first "profagent: " line, once the program has ended."""
    lines = run.other_lines()
    ends = [i for i, line in enumerate(lines) if line.startswith("profagent: ")]
    return lines[:ends[0]] if ends else lines


def expect_same_program(hooked, plain, what):
    R.expect(hooked.returncode == plain.returncode, f"{what}: status {hooked.returncode}, {plain.returncode} without")
    if hooked.stdout != plain.stdout:
        ours, theirs = hooked.stdout.splitlines(), plain.stdout.splitlines()
        first = next(i for i in range(min(len(ours), len(theirs)) + 1)
                     if i >= min(len(ours), len(theirs)) or ours[i] != theirs[i])
        raise R.Failed(f"{what}: stdout differs at line {first + 1}:\n{ours[first:first + 3]}\n--- without ---\n"
                       f"{theirs[first:first + 3]}")
    R.expect(program_lines(hooked) == program_lines(plain),
             f"{what}: the program's stderr differs:\n{program_lines(hooked)[-8:]}\n--- without ---\n"
             f"{program_lines(plain)[-8:]}")


def annotations(out_dir):
    names = set()
    for path in glob.glob(os.path.join(out_dir, "*.trace.json")):
        names |= {e["name"] for e in trace_reader.events(R.load(path), cat="user_annotation")}
    return names


# ---- the Python hook -------------------------------------------------------------------------------

OWN_VARIABLES = ("CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH")  # the agent's own (child_environment.h)
AGENT_SET = OWN_VARIABLES + ("PROFAGENT_PYTHON_HOOK",)


def without_agent_set(stdout):
    """The probe's output with the printed environments (its own, /usr/bin/env's, a Python
    child's) cleared of the variables the runs compared below differ by on purpose:
    PROFAGENT_PYTHON_HOOK=off, the launcher's way of saying --no-python-hook, and
    CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH, which the hook hides from os.environ (the
    agent's own variables)."""
    lines = []
    for line in stdout.splitlines():
        title, _, value = line.partition(": ")
        if title in ("environment", "child environment", "python child environment"):
            entries = ast.literal_eval(value)
            entries = ast.literal_eval(entries) if isinstance(entries, str) else entries
            kept = [e for e in entries if (e[0] if isinstance(e, tuple) else e.split("=")[0]) not in AGENT_SET]
            line = f"{title}: {kept}"
        lines.append(line)
    return "\n".join(lines)


def case_python_hook_invisible(env):
    """The probe prints the same under `profagent run` as under `profagent run --no-python-hook`
    (the agent in both; only the hook differs) but for the agent's own variable, which the hook
    hides from os.environ, and the hook still records the phase ranges."""
    if not os.path.exists("/usr/lib/python3/dist-packages/torch/__init__.py"):
        return "SKIP: needs Debian's python3-torch"
    probe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "python_hook_probe.py")
    runs = {}
    for label, options in (("no hook", ["--no-python-hook"]), ("hook", [])):
        out = env.out("python_hook")  # one path: the program prints its environment
        command = [launcher(env), "run", "--output-dir", out] + options + ["--", PYTHON, probe]
        runs[label] = R.run(command, {}, None, env.devsim, timeout=300)
    hooked, plain, hooked_out = runs["hook"], runs["no hook"], out
    R.expect(plain.returncode == 1 and "ValueError: refused on purpose" in plain.stderr,
             f"the probe did not end with its own error: {plain.returncode} {plain.stderr[-300:]!r}")
    R.expect(not [l for l in hooked.agent_lines() if "python hook" in l], f"hook lines: {hooked.agent_lines()}")
    shown = [l for l in hooked.stdout.splitlines() if l.startswith("environment: ")]
    R.expect(shown and not any(name in shown[0] for name in OWN_VARIABLES), f"os.environ shows the agent's variables: {shown}")
    hooked.stdout, plain.stdout = without_agent_set(hooked.stdout), without_agent_set(plain.stdout)
    expect_same_program(hooked, plain, "with and without the hook")
    found = annotations(hooked_out)
    missing = [p for p in PHASES if not any(name.startswith(p) for name in found)]
    R.expect(not missing, f"phase ranges not recorded: {missing} (found {sorted(found)})")
    tracebacks = hooked.stdout.count("Traceback (most recent call last)")
    return f"{tracebacks} tracebacks, introspection, loaders, environment, sys.modules identical; phases recorded"


def run_with_pythonpath(command, value):
    """The command with PYTHONPATH set to `value`, or unset (None), whatever ctest's is."""
    run_env = R.clean_environment()
    run_env.pop("PYTHONPATH", None)
    if value is not None:
        run_env["PYTHONPATH"] = value
    completed = subprocess.run(command, env=run_env, capture_output=True, text=True, timeout=120)
    return R.Run(completed)


def case_python_hook_user_sitecustomize(env):
    """A sitecustomize of the user's own on PYTHONPATH still runs, is what `import sitecustomize`
    gives, and PYTHONPATH is restored exactly: set to that folder, set but empty, unset."""
    base = env.out("python_hook_user_site")
    site = os.path.join(base, "usersite")
    os.makedirs(site)
    with open(os.path.join(site, "sitecustomize.py"), "w") as f:
        f.write("import sys\nsys.user_site_ran = True\n")
    script = ("import os, sys, sitecustomize, subprocess\n"
              "print(getattr(sys, 'user_site_ran', False), sitecustomize.__file__)\n"
              "print(repr(os.environ.get('PYTHONPATH')), [p for p in sys.path if 'profagent' in p])\n"
              "print(subprocess.run(['/bin/sh', '-c', 'echo ${PYTHONPATH-unset}'], capture_output=True, text=True).stdout)\n"
              "print(os.getcwd() in sys.path)\n")
    notes = []
    for label, value in (("user folder", site), ("empty", ""), ("unset", None)):
        out = os.path.join(base, "out")
        hooked = run_with_pythonpath([launcher(env), "run", "--output-dir", out, "--", PYTHON, "-c", script], value)
        plain = run_with_pythonpath([PYTHON, "-c", script], value)
        expect_same_program(hooked, plain, f"PYTHONPATH {label}")
        notes.append(f"{label}: {plain.stdout.splitlines()[0]}")
    return "; ".join(notes)


# ---- installed under a path with a space -----------------------------------------------------------

def install_copy(env, prefix):
    """bin/profagent and lib/ of the build, copied under `prefix` (the launcher finds
    ../lib/libprofagent.so from its own real path)."""
    build_lib = os.path.dirname(env.agent)
    os.makedirs(os.path.join(prefix, "bin"))
    shutil.copy2(launcher(env), os.path.join(prefix, "bin", "profagent"))
    shutil.copytree(build_lib, os.path.join(prefix, "lib"),
                    ignore=lambda d, names: [n for n in names if not (n.startswith(("libprofagent", "profagent_python"))
                                                                     or d != build_lib)])
    return os.path.join(prefix, "bin", "profagent")


def case_launcher_path_with_space(env):
    """`profagent run` from an installation under "/tmp/profagent install .../": the program runs
    as without the agent (no ld.so error on its stderr) and is traced; the preload goes through
    a link in the user's private runtime directory (mode 0700)."""
    prefix = tempfile.mkdtemp(prefix="profagent install ", dir="/tmp")
    runtime = tempfile.mkdtemp(prefix="profagent_runtime_", dir="/tmp")
    try:
        binary = install_copy(env, os.path.join(prefix, "a:b c"))
        out = env.out("launcher_space")
        command = [env.app, "work", "3", "0"]
        extra = {"XDG_RUNTIME_DIR": runtime, "PROFAGENT_OUTPUT_DIR": out}
        hooked = R.run([binary, "run", "--"] + command, extra, None, env.devsim)
        plain = R.run(command, extra, None, env.devsim)
        expect_same_program(hooked, plain, "installed under a path with a space and a colon")
        R.one_valid_trace(out, R.expected(hooked.stdout))
        links = os.path.join(runtime, "profagent")
        mode = os.stat(links).st_mode & 0o777
        R.expect(mode == 0o700, f"the link directory has mode {oct(mode)}")
        named = [os.path.realpath(os.path.join(links, n)) for n in os.listdir(links)]
        R.expect(os.path.realpath(os.path.join(prefix, "a:b c", "lib", "libprofagent.so")) in named,
                 f"no link to the agent in {links}: {os.listdir(links)}")
    finally:
        shutil.rmtree(prefix, ignore_errors=True)
        shutil.rmtree(runtime, ignore_errors=True)
    return "traced; the program's stderr and status as without the agent"


CASES = {
    "launcher_python_hook_invisible": case_python_hook_invisible,
    "launcher_python_hook_user_sitecustomize": case_python_hook_user_sitecustomize,
    "launcher_path_with_space": case_launcher_path_with_space,
}
