"""What the agent must not take from the process it is loaded into: descriptors the program may
reuse (the unwinder's), the CUDA injection slot the program sets for its own tool, the
environment of a child the user started without the preload, a directory another user's
symlink points at. Each runs programs/footprint_app.cpp (or reliability_app) with and without
the agent and compares stdout, the program's own stderr lines, the exit status and the files
the program wrote; then checks what the agent itself wrote."""
import os
import shutil
import subprocess
import tempfile

import reliability as R


def app(env):
    return os.path.join(os.path.dirname(env.app), "footprint_app")


def tool(env):
    return os.path.join(os.path.dirname(env.app), "libfootprint_tool.so")


def files_of(directory):
    return {name: open(os.path.join(directory, name), "rb").read() for name in sorted(os.listdir(directory))}


# ---- the unwinder's descriptors (PROFAGENT_WITH_STACK) --------------------------------------------

def frames_of(document, sf):
    table = document.get("stackFrames", {})
    names = []
    while sf:
        frame = table[str(sf)]
        names.append(frame["name"])
        sf = int(frame.get("parent", 0))
    return names


def case_stack_descriptors(env):
    """Stacks on; after its first CUDA call the program closes every descriptor >= 3, opens two
    files of its own (fds 3 and 4) and makes CUDA calls from JIT code, whose frame has no unwind
    info (the unwinder then checks each read): its first free descriptor is the same as without
    the agent, its files are byte-identical, and the stacks still go past the JIT frame."""
    out = env.out("footprint_fds_out")
    results, data = {}, {}
    for label, preload in (("agent", env.agent), ("plain", None)):
        directory = env.out(f"footprint_fds_{label}")
        results[label] = R.run([app(env), "fds", directory], {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_WITH_STACK": "1"},
                               preload, env.devsim)
        data[label] = files_of(directory)
    R.expect_unchanged(results["agent"], results["plain"])
    R.expect(results["agent"].returncode == 0, f"status {results['agent'].returncode}: {results['agent'].stderr[-300:]!r}")
    R.expect(data["agent"] == data["plain"], f"the program's files differ with the agent:\n{data['agent']}\n---\n{data['plain']}")
    want = R.expected(results["agent"].stdout)
    document = R.one_valid_trace(out, {k: v for k, v in want.items() if k != "failures"})
    sets = R.events(document, "cudaMemset")
    callers = [frames_of(document, e["sf"]) for e in sets if "sf" in e]
    R.expect(len(callers) == len(sets), f"{len(sets) - len(callers)} of {len(sets)} cudaMemset calls have no stack")
    past_jit = [f for f in callers if any("descriptors" in name for name in f)]
    R.expect(past_jit, f"no stack went past the JIT frame: {callers[:1]}")
    return (f"{results['agent'].stdout.splitlines()[0]}, as without the agent; files identical; "
            f"{len(past_jit)}/{len(sets)} stacks read past the JIT frame")


# ---- the program's own injection tool -------------------------------------------------------------

def case_own_injection_tool(env):
    """The program calls setenv("CUDA_INJECTION64_PATH", its_tool, 0) before CUDA starts: the
    driver loads its tool, as without the agent; the agent steps aside from CUPTI (said once) and
    still records the calls its hooks see."""
    out = env.out("footprint_tool")
    agent, plain = R.both(env, [app(env), "setenv", tool(env)], {"PROFAGENT_OUTPUT_DIR": out})
    R.expect_unchanged(agent, plain)
    R.expect("tool: InitializeInjection called" in plain.stdout, f"the tool was not loaded even without the agent: {plain.stdout!r}")
    said = [line for line in agent.agent_lines() if "another tool is injected" in line]
    R.expect(len(said) == 1, f"stepping aside should be said once: {agent.agent_lines()}")
    want = R.expected(agent.stdout)
    document = R.one_valid_trace(out, {k: v for k, v in want.items() if k != "failures"})
    device = [e for e in R.events(document) if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    R.expect(not device, f"{len(device)} device records although the program's tool owns CUPTI")
    return "the program's tool was injected; agent host-only, said once"


# ---- a child started without the preload ----------------------------------------------------------

def child_launchers(env):
    """Ways a child is started without the preload, each run by a preloaded parent."""
    child = [app(env), "child"]
    dropped = "import os; env = {k: v for k, v in os.environ.items() if k != 'LD_PRELOAD'}; "
    return {
        "env -u LD_PRELOAD": ["/bin/sh", "-c", f"exec env -u LD_PRELOAD {child[0]} child"],
        "subprocess(env=...)": ["/usr/bin/python3", "-c",
                                dropped + f"import subprocess; subprocess.run({child!r}, env=env, check=True)"],
        "os.posix_spawn": ["/usr/bin/python3", "-c",
                           dropped + f"pid = os.posix_spawn({child[0]!r}, {child!r}, env); os.waitpid(pid, 0)"],
        "unsetenv then execv": ["/usr/bin/python3", "-c",
                                f"import os; os.environ.pop('LD_PRELOAD', None); os.execv({child[0]!r}, {child!r})"],
    }


def case_child_without_preload(env):
    """A child started without LD_PRELOAD by a preloaded parent is not profiled through the
    inherited CUDA_INJECTION64_PATH: it sees the environment it would see without the agent,
    writes nothing and says nothing. A child that keeps the preload is still profiled."""
    notes = []
    for label, command in child_launchers(env).items():
        out = env.out("footprint_child")
        agent, plain = R.both(env, command, {"PROFAGENT_OUTPUT_DIR": out})
        R.expect_unchanged(agent, plain, f"{label}: ")
        R.expect("child: CUDA_INJECTION64_PATH=(unset)" in agent.stdout, f"{label}: {agent.stdout!r}")
        R.expect(not agent.agent_lines(), f"{label}: the agent spoke in the child: {agent.agent_lines()}")
        R.expect(os.listdir(out) == [], f"{label}: the child was profiled: {os.listdir(out)}")
        notes.append(label)
    out = env.out("footprint_child_kept")
    kept = R.run(["/bin/sh", "-c", f"exec {app(env)} child"], {"PROFAGENT_OUTPUT_DIR": out}, env.agent, env.devsim)
    R.one_valid_trace(out, {"cudaMalloc": 1, "cudaFree": 1})
    R.expect(kept.returncode == 0, f"the child that keeps the preload: status {kept.returncode}")
    return "not profiled after " + ", ".join(notes) + "; a child keeping the preload is"


# ---- an output directory behind another user's symlink --------------------------------------------

def case_output_dir_foreign_symlink(env):
    """Running as root, PROFAGENT_OUTPUT_DIR goes through a symlink another user owns, pointing
    at that user's directory: refused with one line, nothing created there. A symlink owned by
    the user running (root) is followed as before."""
    if os.geteuid() != 0:
        return "SKIP: needs root (to own files as another user)"
    nobody = 65534
    base = tempfile.mkdtemp(prefix="profagent_symlink_", dir="/tmp")
    try:
        victim = os.path.join(base, "victim")
        os.makedirs(victim)
        os.chown(victim, nobody, nobody)
        planted = os.path.join(base, "planted")
        os.symlink(victim, planted)
        os.lchown(planted, nobody, nobody)
        agent = R.safety_run(env, os.path.join(planted, "out"))
        R.expect(os.listdir(victim) == [], f"files landed in the other user's directory: {os.listdir(victim)}")
        closing = R.closing_line(agent)
        R.expect(closing.startswith("[profagent] wrote nothing: ") and "symbolic link" in closing and "owned by" in closing,
                 f"closing line {closing!r}")
        own = os.path.join(base, "own")
        os.symlink(victim, own)  # root's own symlink: root meant it
        R.safety_run(env, os.path.join(own, "out"))
        R.one_valid_trace(os.path.join(victim, "out"))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return "another user's symlink refused (nothing written behind it); root's own followed"


CASES = {
    "footprint_stack_descriptors": case_stack_descriptors,
    "footprint_own_injection_tool": case_own_injection_tool,
    "footprint_child_without_preload": case_child_without_preload,
    "footprint_output_dir_foreign_symlink": case_output_dir_foreign_symlink,
}
