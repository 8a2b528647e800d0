"""Reliability cases of crashing programs (agent/crash_signals.h): a program that dies of
SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT (assert, an uncaught exception, abort) after some
CUDA work leaves a valid trace of that work and the closing line, and dies exactly as without
the agent: the same raw wait status (signal and core-dump flag), stdout and its own stderr.
Handlers of the program's own keep working: one that recovers from a SIGSEGV recovers (and
nothing is written until the real exit), one that hands the signal back to the default action
dies as before, with the trace.

The programs run in a directory of their own with RLIMIT_CORE unlimited, so that the
core-dump bit of the status means what it would for a user (core files are removed)."""
import glob
import os
import re
import resource
import signal
import subprocess

import reliability as R

CRASHES = {"assert": signal.SIGABRT, "throw": signal.SIGABRT, "abort": signal.SIGABRT,
           "segv": signal.SIGSEGV, "bus": signal.SIGBUS, "fpe": signal.SIGFPE, "ill": signal.SIGILL,
           "stack": signal.SIGSEGV, "raise_segv": signal.SIGSEGV}


def crash_app(env):
    return os.path.join(os.path.dirname(env.app), "crash_app")


def allow_core_dumps():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def run_raw(env, command, env_extra, preload, cwd):
    """The run with its raw wait status (subprocess keeps only the signal, not the core bit)."""
    run_env = R.clean_environment()
    run_env.update(env_extra)
    run_env["LD_LIBRARY_PATH"] = env.devsim
    if preload:
        run_env["LD_PRELOAD"] = preload
    stdout_path, stderr_path = os.path.join(cwd, "stdout"), os.path.join(cwd, "stderr")
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        process = subprocess.Popen(command, env=run_env, stdout=out, stderr=err, cwd=cwd,
                                   preexec_fn=allow_core_dumps)
        try:
            _, status = os.waitpid(process.pid, 0)
        except BaseException:
            process.kill()
            raise
        process.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    with open(stdout_path, "rb") as out, open(stderr_path, "rb") as err:
        result = R.Run(type("C", (), {"stdout": out.read().decode("utf-8", "replace"),
                                      "stderr": err.read().decode("utf-8", "replace"),
                                      "returncode": process.returncode}))
    result.status = status
    result.cores = [n for n in os.listdir(cwd) if n.startswith("core")]
    for name in result.cores + ["stdout", "stderr"]:
        os.unlink(os.path.join(cwd, name))
    return result


def both_raw(env, command, env_extra, name, normalize=None):
    """`normalize`: applied to both stderrs before they are compared (what differs by run)."""
    work = env.out(name + "_cwd")
    agent = run_raw(env, command, env_extra, env.agent, work)
    plain = run_raw(env, command, env_extra, None, work)
    if normalize:
        agent.stderr, plain.stderr = normalize(agent.stderr), normalize(plain.stderr)
    R.expect_unchanged(agent, plain)
    R.expect(agent.status == plain.status,
             f"raw wait status {agent.status:#x} with the agent, {plain.status:#x} without (core dumps "
             f"{agent.cores} / {plain.cores})")
    return agent, plain


def describe(status):
    core = ", core dumped" if os.WIFSIGNALED(status) and os.WCOREDUMP(status) else ""
    return f"{signal.Signals(os.WTERMSIG(status)).name}{core}" if os.WIFSIGNALED(status) else f"status {os.WEXITSTATUS(status)}"


def crash_line(agent, sig):
    said = [line for line in agent.agent_lines() if "the program crashed" in line]
    R.expect(len(said) == 1 and said[0].startswith(f"[profagent] {sig.name}:"),
             f"the crash should be said once, naming {sig.name}: {agent.agent_lines()}")
    closing = R.closing_line(agent)
    R.expect(closing.startswith("[profagent] wrote ") and "wrote nothing" not in closing,
             f"closing line {closing!r}")


def crash_case(how, where="", extra=None):
    """`where`: "" (main), "thread" (a second thread, main in a CUDA call), "threads" (4 threads
    crashing at once: all wait for one write)."""
    def case(env):
        sig = CRASHES[how]
        name = f"crash_{how}" + (f"_{where}" if where else "")
        out = env.out(name)
        command = [crash_app(env), "crash", how] + ([where] if where else [])
        agent, plain = both_raw(env, command, dict(extra or {}, PROFAGENT_OUTPUT_DIR=out), name)
        R.expect(os.WIFSIGNALED(plain.status) and os.WTERMSIG(plain.status) == sig,
                 f"the program itself did not die of {sig.name}: {describe(plain.status)}")
        R.one_valid_trace(out, R.expected(agent.stdout))
        crash_line(agent, sig)
        return f"{describe(agent.status)} with and without the agent; trace of the work before the crash"
    return case


def case_crashes_off(env):
    """PROFAGENT_HANDLE_CRASHES=0: the agent touches no crash signal; the process dies as
    without it and, as before this switch existed, leaves no trace."""
    out = env.out("crash_off")
    agent, _ = both_raw(env, [crash_app(env), "crash", "segv"],
                        {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_HANDLE_CRASHES": "0"}, "crash_off")
    R.expect(not R.traces(out) and not R.leftovers(out), f"files with crash handling off: {os.listdir(out)}")
    R.expect(not any("crashed" in line for line in agent.agent_lines()), f"agent lines: {agent.agent_lines()}")
    return f"{describe(agent.status)}, no trace, as asked"


def case_crash_after_exit_flush(env):
    """A crash in an exit handler that runs after the agent's exit flush (a late destructor):
    the trace written at exit stays, its closing line stays the last agent line (no crash line
    for a crash that has nothing left to write), and the process dies of SIGSEGV as without it."""
    out = env.out("crash_at_exit")
    agent, plain = both_raw(env, [crash_app(env), "crash_at_exit"], {"PROFAGENT_OUTPUT_DIR": out}, "crash_at_exit")
    R.expect(os.WIFSIGNALED(plain.status) and os.WTERMSIG(plain.status) == signal.SIGSEGV,
             f"the program itself did not die of SIGSEGV: {describe(plain.status)}")
    R.one_valid_trace(out, R.expected(agent.stdout))
    R.expect(not any("crashed" in line for line in agent.agent_lines()), f"agent lines: {agent.agent_lines()}")
    R.expect(R.closing_line(agent).startswith("[profagent] wrote "), f"closing line {R.closing_line(agent)!r}")
    return f"trace written at exit, then {describe(agent.status)} as without the agent, no second word"


def own_handler_case(when, what):
    """The program's own SIGSEGV handler. `before` the first CUDA call (the agent chains it):
    `recover` siglongjmps back and works on (status 0; the trace is written at the real exit
    with the work after the recovery), `die` resets SIG_DFL and returns (the write faults
    again: SIGSEGV, with the trace of the work before). `after` (it replaces the agent's):
    the program's own behaviour, no crash trace."""
    def case(env):
        name = f"own_segv_{when}_{what}"
        out = env.out(name)
        extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_LOG_LEVEL": "debug"}
        agent, plain = both_raw(env, [crash_app(env), "own_segv", when, what], extra, name)
        R.expect("own SIGSEGV handler ran" in plain.stdout and "own SIGSEGV handler ran" in agent.stdout,
                 f"the program's handler did not run: {agent.stdout!r}")
        flushes = R.flushed_at(agent)
        if what == "recover":
            R.expect(plain.status == 0, f"the program did not recover by itself: {describe(plain.status)}")
            R.expect(flushes == ["exit"], f"flushes {flushes}: a recovered fault must not end the recording")
            R.one_valid_trace(out, {"cudaMalloc": 3, "cudaFree": 3})
            return "recovered from its own SIGSEGV: status 0, trace written at exit with the later work"
        R.expect(os.WIFSIGNALED(plain.status) and os.WTERMSIG(plain.status) == signal.SIGSEGV,
                 f"the program did not die of SIGSEGV by itself: {describe(plain.status)}")
        if when == "after":
            R.expect(not flushes and not R.traces(out), f"flushes {flushes}, files {os.listdir(out)}")
            return f"its handler replaced the agent's: {describe(agent.status)} as without the agent, no trace"
        R.expect(flushes == ["SIGSEGV"], f"flushes {flushes}")
        R.one_valid_trace(out, {"cudaMalloc": 2, "cudaFree": 2})
        crash_line(agent, signal.SIGSEGV)
        return f"its handler ran, then {describe(agent.status)} as without the agent, with the trace"
    return case


def python_crash_case(faulthandler):
    """A Python program that calls CUDA through an extension, then dies of SIGSEGV in C code
    (ctypes.string_at(0)). Without faulthandler: the trace. With `-X faulthandler` (pytest
    enables it too), Python's handler is set up before the first CUDA call and the agent chains
    it; it prints the Python traceback and ends the process itself (re-raising at once), so no
    crash trace is written — but its output and the status stay exactly as without the agent."""
    def case(env):
        name = "crash_python" + ("_faulthandler" if faulthandler else "")
        out = env.out(name)
        script = (R.py_runtime(env) + "p = ctypes.c_void_p()\n"
                  "rt.cudaMalloc(ctypes.byref(p), 256); rt.cudaFree(p)\n"
                  "print('crashing', flush=True)\n"
                  "ctypes.string_at(0)\n")
        command = ["/usr/bin/python3"] + (["-X", "faulthandler"] if faulthandler else []) + ["-c", script]
        thread_ids = lambda text: re.sub(r"hread 0x[0-9a-f]+", "hread 0xN", text)  # faulthandler's dump
        agent, plain = both_raw(env, command, {"PROFAGENT_OUTPUT_DIR": out}, name, thread_ids)
        R.expect(os.WIFSIGNALED(plain.status) and os.WTERMSIG(plain.status) == signal.SIGSEGV,
                 f"the program itself did not die of SIGSEGV: {describe(plain.status)}")
        if faulthandler:
            R.expect("Fatal Python error: Segmentation fault" in agent.stderr, f"no faulthandler dump: {agent.stderr[-300:]!r}")
            return f"faulthandler's dump and {describe(agent.status)} as without the agent (no crash trace: its handler ends the process)"
        R.one_valid_trace(out, {"cudaMalloc": 1, "cudaFree": 1})
        crash_line(agent, signal.SIGSEGV)
        return f"{describe(agent.status)} as without the agent, with the trace"
    return case


CASES = {f"crash_{how}": crash_case(how) for how in CRASHES}
CASES.update({
    "crash_segv_on_thread": crash_case("segv", "thread"),
    "crash_abort_on_thread": crash_case("abort", "thread"),
    "crash_abort_on_4_threads_at_once": crash_case("abort", "threads"),
    "crash_segv_on_4_threads_at_once": crash_case("segv", "threads"),
    "crash_segv_signals_handled": crash_case("segv", extra={"PROFAGENT_HANDLE_SIGNALS": "1"}),
    "crash_handling_off": case_crashes_off,
    "crash_after_exit_flush": case_crash_after_exit_flush,
    "crash_python": python_crash_case(False),
    "crash_python_faulthandler": python_crash_case(True),
    "crash_own_handler_recovers": own_handler_case("before", "recover"),
    "crash_own_handler_dies": own_handler_case("before", "die"),
    "crash_own_handler_installed_later": own_handler_case("after", "die"),
})
