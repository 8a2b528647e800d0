"""Reliability cases of a file-size limit (`ulimit -f`, RLIMIT_FSIZE) smaller than the agent's
files: the agent's writes fail with EFBIG and never raise SIGXFSZ in the program (whose default
action would end it with status 153), nor call a SIGXFSZ handler of its own. The failed file
is removed and said in one line; the program's status, output and files are unchanged."""
import os

import reliability as R

LIMIT = 4096  # bytes: far below any trace


def limited(command, limit=LIMIT, stderr_file=None):
    """`command` under RLIMIT_FSIZE with SIGXFSZ at its default action (CPython ignores it, and
    an ignored signal would stay ignored across exec). `stderr_file`: stderr goes there."""
    redirect = f"os.dup2(os.open({stderr_file!r}, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2); " \
        if stderr_file else ""
    return ["/usr/bin/python3", "-c",
            "import os, resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_DFL); " + redirect +
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); os.execv(sys.argv[1], sys.argv[1:])"] + command


def unwritten(agent, out):
    """Every file the agent left is whole (under the limit), the trace is not there, and one
    line says why."""
    R.expect(not R.traces(out), f"a trace larger than the limit was left: {os.listdir(out)}")
    R.expect(not R.leftovers(out), f"half-written files left: {R.leftovers(out)}")
    for name in os.listdir(out):
        R.expect(os.path.getsize(os.path.join(out, name)) < LIMIT, f"{name} reached the limit")
    said = [line for line in agent.agent_lines() if "File too large" in line]
    R.expect(said and "trace.json" in " ".join(said), f"no line says the trace was too large: {agent.agent_lines()}")


def case_file_size_limit(env):
    out = env.out("fsize")
    agent, plain = R.both(env, limited([env.app, "work", "2", "0"]), {"PROFAGENT_OUTPUT_DIR": out})
    R.expect_unchanged(agent, plain)
    R.expect(agent.returncode == 0, f"status {agent.returncode} under ulimit -f {LIMIT}")
    unwritten(agent, out)
    return f"status 0 under ulimit -f of {LIMIT} bytes; {sorted(os.listdir(out))} written, the trace refused in one line"


def case_file_size_limit_own_handler(env):
    """A program with its own SIGXFSZ handler: it is never called for the agent's writes (it
    prints the number of calls after the agent's exit flush)."""
    out = env.out("fsize_handler")
    command = limited([os.path.join(os.path.dirname(env.app), "crash_app"), "xfsz_handler"])
    agent, plain = R.both(env, command, {"PROFAGENT_OUTPUT_DIR": out})
    R.expect_unchanged(agent, plain)
    R.expect("SIGXFSZ handler ran 0 times" in agent.stdout, f"stdout {agent.stdout!r}")
    unwritten(agent, out)
    return "the program's SIGXFSZ handler was not called for the agent's writes"


def case_file_size_limit_stderr(env):
    """stderr is a file under a 200-byte limit: the agent's lines that no longer fit are
    dropped, and the program still ends with status 0 (not 153)."""
    log_dir = env.out("fsize_stderr_log")
    results = {}
    for label, preload in (("agent", env.agent), ("plain", None)):
        log = os.path.join(log_dir, f"{label}.txt")
        command = limited([env.app, "work", "2", "0"], limit=200, stderr_file=log)
        run = R.run(command, {"PROFAGENT_OUTPUT_DIR": env.out(f"fsize_stderr_{label}")}, preload, env.devsim)
        with open(log, "rb") as f:
            results[label] = (run, f.read())
    (agent, written), (plain, untouched) = results["agent"], results["plain"]
    R.expect(agent.returncode == plain.returncode == 0, f"status {agent.returncode} (without: {plain.returncode})")
    R.expect(agent.stdout == plain.stdout and untouched == b"", f"stdout or the program's stderr differ: {untouched!r}")
    R.expect(0 < len(written) <= 200 and written.startswith(b"[profagent] "), f"stderr file: {written[:120]!r}")
    return f"{len(written)} bytes of agent lines in the limited stderr file, status 0"


CASES = {
    "file_size_limit": case_file_size_limit,
    "file_size_limit_own_handler": case_file_size_limit_own_handler,
    "file_size_limit_stderr": case_file_size_limit_stderr,
}
