"""Process-level reliability cases: the agent's threads, signals, stderr and the
program's descriptors, ways out and working directory. Each runs process_app (programs/
process_app.cpp) with and without the agent and compares stdout, the program's own stderr lines,
the exit status and the files the program wrote; then checks what the agent itself wrote."""
import json
import os
import signal
import subprocess

import reliability as R


def app(env):
    return os.path.join(os.path.dirname(env.app), "process_app")


def run(env, command, extra, preload, cwd=None, stderr=None, timeout=60):
    """As R.run, plus a working directory and a stderr of our choosing (then not captured).
    A process still running after `timeout` s fails the case (killed first)."""
    run_env = R.clean_environment()
    run_env.update(extra)
    run_env["LD_LIBRARY_PATH"] = env.devsim
    if preload:
        run_env["LD_PRELOAD"] = preload
    try:
        completed = subprocess.run(command, env=run_env, cwd=cwd, stdout=subprocess.PIPE,
                                   stderr=stderr if stderr is not None else subprocess.PIPE,
                                   timeout=timeout)
    except subprocess.TimeoutExpired:
        raise R.Failed(f"{command[1]} still running after {timeout} s "
                       f"({'with' if preload else 'without'} the agent)")
    decode = lambda b: (b or b"").decode("utf-8", "replace")
    return R.Run(type("C", (), {"stdout": decode(completed.stdout), "stderr": decode(completed.stderr),
                                "returncode": completed.returncode}))


def both(env, command, extra, **options):
    return run(env, command, extra, env.agent, **options), run(env, command, extra, None, **options)


def closing_lines(agent):
    """The agent's "wrote ..." lines (one per written window)."""
    return [line for line in agent.agent_lines() if "wrote " in line]


def drops(out_dir):
    found = R.traces(out_dir)
    R.expect(found, f"no trace in {out_dir}: {os.listdir(out_dir)}")
    return R.load(found[-1])["profagent_drops"]


def files_of(directory):
    return {name: open(os.path.join(directory, name), "rb").read() for name in sorted(os.listdir(directory))}


# ---- 2: main calls pthread_exit ---------------------------------------------------------------

def case_pthread_exit(env):
    """Main prints (buffered: stdout is a pipe) and calls pthread_exit; a worker then makes CUDA
    calls and ends. The process must end (glibc's exit(0) after the last thread) with the same
    output, and the trace written — also with the time:MS timer thread running."""
    for label, extra in (("default", {}), ("timer", {"PROFAGENT_STEP_ON": "time:20"})):
        out = env.out(f"pthread_exit_{label}")
        agent, plain = both(env, [app(env), "pthread_exit"], {"PROFAGENT_OUTPUT_DIR": out, **extra}, timeout=30)
        R.expect_unchanged(agent, plain, f"{label}: ")
        R.expect(agent.returncode == 0, f"{label}: exit status {agent.returncode}")
        R.expect("worker: 10 allocations done" in agent.stdout, f"{label}: stdout lost: {agent.stdout!r}")
        R.one_valid_trace(out, R.expected(agent.stdout))
        R.expect(len(closing_lines(agent)) == 1, f"{label}: closing lines {closing_lines(agent)}")
    return "the process ends with status 0, stdout and trace complete (also with time:MS, signal handling)"


# ---- 8: a signal the program blocks and takes itself -------------------------------------------

def blocked_signal_case(how):
    def case(env):
        """SIGUSR1 blocked in main before the first CUDA call, the agent's timer (created at the
        first CUDA call) and exporter threads busy, then kill(getpid(), SIGUSR1) and sigwait/
        signalfd: the program takes it, as without the agent."""
        out = env.out(f"blocked_{how}")
        extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_STEP_ON": "time:20",
                 "PROFAGENT_SCHEDULE": "wait=1,active=2"}
        agent, plain = both(env, [app(env), how, "400"], extra)
        R.expect_unchanged(agent, plain)
        R.expect(agent.returncode == 0, f"exit status {agent.returncode}: {agent.stderr[-300:]!r}")
        windows = [line for line in agent.agent_lines() if line.startswith("[profagent] window ")]
        R.expect(windows, f"no window was written by the exporter thread: {agent.agent_lines()[-3:]}")
        return f"SIGUSR1 taken by {how} with {len(windows)} windows exported meanwhile"
    return case


# ---- 5: stderr a pipe nobody reads ----------------------------------------------------------------

def case_stderr_closed_pipe(env):
    """stderr is a pipe whose reader is gone (`prog 2>&1 >/dev/null | true`): the agent's lines
    must never kill the process with SIGPIPE (status 141 in a shell)."""
    out = env.out("stderr_closed_pipe")
    results = []
    for preload in (env.agent, None):
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            results.append(run(env, [app(env), "work", "5"],
                               {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_LOG_LEVEL": "debug"},
                               preload, stderr=write_end))
        finally:
            os.close(write_end)
    agent, plain = results
    R.expect(agent.returncode == plain.returncode == 0,
             f"exit status {agent.returncode} with the agent, {plain.returncode} without")
    R.expect(agent.stdout == plain.stdout, f"stdout differs: {agent.stdout!r} / {plain.stdout!r}")
    R.one_valid_trace(out, R.expected(agent.stdout))
    lost = drops(out)["log_lines"]
    R.expect(lost >= 1, f"the lines lost to the broken pipe are not counted: {drops(out)}")
    return f"status 0 as without the agent; {lost} agent lines counted as lost"


# ---- 7: fds 0-2 closed and reopened as data files -----------------------------------------------

def case_std_fds_reopened(env):
    """The program closes 0-2 and opens its data files, which become fds 0-2: the files must
    be byte-identical with and without the agent (no table, no closing line in them)."""
    out = env.out("std_fds_out")
    data = {}
    for label, preload in (("agent", env.agent), ("plain", None)):
        directory = env.out(f"std_fds_{label}")
        result = run(env, [app(env), "reopen_std_fds", directory],
                     {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_LOG_LEVEL": "debug"}, preload)
        R.expect(result.returncode == 0, f"{label}: exit status {result.returncode}")
        data[label] = files_of(directory)
    R.expect(data["agent"] == data["plain"],
             f"the program's files differ with the agent: {data['agent']} / {data['plain']}")
    R.one_valid_trace(out, {"cudaMalloc": 5})
    counters = drops(out)
    R.expect(counters["stderr_replaced"] and counters["log_lines"] >= 1,
             f"the withheld lines are not said in the trace: {counters}")
    return f"data files identical; trace says {counters['log_lines']} lines withheld, stderr replaced"


# ---- 12a: siglongjmp out of a hooked call ---------------------------------------------------------

def case_siglongjmp(env):
    """A signal handler siglongjmps out of a cudaDeviceSynchronize that blocks on a long kernel:
    the thread's later calls must still be recorded (the guard heals itself)."""
    out = env.out("siglongjmp")
    extra = {"PROFAGENT_OUTPUT_DIR": out, "DEVSIM_KERNEL_NS": "long_kernel=3000000000"}
    agent, plain = both(env, [app(env), "longjmp"], extra)
    R.expect_unchanged(agent, plain)
    R.expect(agent.returncode == 0, f"exit status {agent.returncode}: {agent.stdout!r}")
    R.one_valid_trace(out, R.expected(agent.stdout))
    return "the calls after the jump are recorded"


# ---- 12b: closefrom, own files, then the opt-in signal handler -----------------------------------

def case_closefrom_handler(env):
    """PROFAGENT_HANDLE_SIGNALS=1; the program closes fds 3+ and opens its own files, then gets
    SIGTERM: the handler must write into none of them, and the trace is still written."""
    out = env.out("closefrom_out")
    data = {}
    results = {}
    for label, preload in (("agent", env.agent), ("plain", None)):
        directory = env.out(f"closefrom_{label}")
        results[label] = run(env, [app(env), "closefrom_sigterm", directory],
                             {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_HANDLE_SIGNALS": "1"}, preload)
        data[label] = files_of(directory)
    R.expect_unchanged(results["agent"], results["plain"])
    R.expect(results["agent"].returncode == -signal.SIGTERM, f"status {results['agent'].returncode}")
    R.expect(data["agent"] == data["plain"], f"the program's files differ with the agent: {data['agent']}")
    R.one_valid_trace(out, R.expected(results["agent"].stdout))
    return "files identical, died of SIGTERM as without the agent, trace written"


# ---- 12c: quick_exit, execveat ----------------------------------------------------------------

def case_quick_exit(env):
    out = env.out("quick_exit")
    agent, plain = both(env, [app(env), "quick_exit", "5"], {"PROFAGENT_OUTPUT_DIR": out})
    R.expect_unchanged(agent, plain)
    R.expect(agent.returncode == 5 and "at_quick_exit handler ran" in agent.stdout,
             f"status {agent.returncode}, stdout {agent.stdout!r}")
    R.one_valid_trace(out, R.expected(agent.stdout))
    return "trace written, at_quick_exit handler ran, status 5"


def case_execveat(env):
    out = env.out("execveat")
    agent, plain = both(env, [app(env), "execveat"], {"PROFAGENT_OUTPUT_DIR": out})
    R.expect_unchanged(agent, plain)
    R.expect(agent.returncode == 0, f"status {agent.returncode}")
    found = R.traces(out)
    R.expect(len(found) == 2, f"expected the trace of each image, found {os.listdir(out)}")
    counts = sorted(len(R.events(R.load(path), "cudaMalloc")) for path in found)
    R.expect(counts == [2, 3], f"cudaMalloc per image {counts}, expected 3 before execveat and 2 after")
    return "both images traced"


# ---- 12d: a relative output directory and chdir ------------------------------------------------

def case_relative_output_dir(env):
    """Started in A with a relative PROFAGENT_OUTPUT_DIR (and with the default), the program
    chdir()s to B: the files go to A, where it was started."""
    for label, extra, name in (("relative", {"PROFAGENT_OUTPUT_DIR": "rel/out"}, "rel/out"),
                               ("default", {}, "profagent_out")):
        start, moved = env.out(f"start_{label}"), env.out(f"moved_{label}")
        agent, plain = both(env, [app(env), "chdir", moved], extra, cwd=start)
        R.expect_unchanged(agent, plain, f"{label}: ")
        R.expect(agent.returncode == 0, f"{label}: status {agent.returncode}")
        R.expect(not os.listdir(moved), f"{label}: files written after chdir: {os.listdir(moved)}")
        R.one_valid_trace(os.path.join(start, name), R.expected(agent.stdout))
    return "files where the program was started, for a relative and the default directory"


# ---- 12e: control characters in PROFAGENT_OUTPUT_DIR -------------------------------------------

def case_control_chars_logged(env):
    """A newline (and an escape byte) in PROFAGENT_OUTPUT_DIR: every agent line keeps its prefix,
    nothing the agent prints looks like a line of the program."""
    out = env.out("ctrl") + "/a\nb\x1bc"
    agent, plain = both(env, [app(env), "work", "3"], {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_LOG_LEVEL": "debug"})
    R.expect_unchanged(agent, plain)
    R.expect(agent.other_lines() == [], f"agent output without the prefix: {agent.other_lines()}")
    R.one_valid_trace(out, R.expected(agent.stdout))
    closing = closing_lines(agent)
    R.expect(len(closing) == 1 and "a\\nb\\x1bc" in closing[0], f"closing line {closing}")
    return "every agent line prefixed, the path shown escaped"


CASES = {
    "process_pthread_exit": case_pthread_exit,
    "process_sigwait_blocked": blocked_signal_case("sigwait"),
    "process_signalfd_blocked": blocked_signal_case("signalfd"),
    "process_stderr_closed_pipe": case_stderr_closed_pipe,
    "process_std_fds_reopened": case_std_fds_reopened,
    "process_siglongjmp_out_of_hook": case_siglongjmp,
    "process_closefrom_signal_handler": case_closefrom_handler,
    "process_quick_exit": case_quick_exit,
    "process_execveat": case_execveat,
    "process_relative_output_dir": case_relative_output_dir,
    "process_control_chars_logged": case_control_chars_logged,
}
