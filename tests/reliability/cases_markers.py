"""Step markers that cannot hang or crash the program, warnings that
stay one line, the launcher forwarding signals, address-space limits, and a closing line
when a schedule or marker never let anything be recorded. Programs: programs/markers.cmake."""
import fcntl
import os
import pty
import re
import resource
import shutil
import signal
import subprocess
import termios

import reliability as R

# torch.profiler.schedule over 10 steps: steps 3-4 and 7-8 are recorded, two windows.
SCHEDULE = {"PROFAGENT_SCHEDULE": "skip_first=1,wait=1,warmup=1,active=2,repeat=2"}
WINDOWS = {1: [3, 4], 2: [7, 8]}
# Patterns that broke std::regex on the program's names: (a|b)*c overflowed the stack on a
# 20,000-character name, (\w+\s?)+$ backtracked exponentially on a 1000-character one.
HOSTILE = [r"(a|b)*c", r"(\w+\s?)+$"]


def program(env, name):
    return os.path.join(os.path.dirname(env.app), name)


def step_on_lines(run):
    return [line for line in run.agent_lines() if "PROFAGENT_STEP_ON" in line]


def check_windows(out, expected):
    """Exactly the scheduled windows, each with its ProfilerStep#N and the launches of its steps."""
    found = {}
    for path in R.traces(out):
        match = re.search(r"\.w(\d+)\.steps(\d+)-(\d+)\.trace\.json$", path)
        R.expect(match, f"unexpected trace {os.path.basename(path)}")
        document = R.load(path)
        steps = sorted(int(e["name"][len("ProfilerStep#"):]) for e in R.events(document)
                       if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
        launches = len(R.events(document, "cudaLaunchKernel"))
        found[int(match.group(1))] = (steps, launches)
    wanted = {w: (steps, len(steps) * expected["per_step"]) for w, steps in WINDOWS.items()}
    R.expect(found == wanted, f"windows (steps, launches) {found}, expected {wanted}")
    R.expect(not R.leftovers(out), f"left behind: {R.leftovers(out)}")


def marker_case(kind, marker):
    def case(env):
        out = env.out(f"markers_{kind}")
        step_on = ",".join(f"{kind}:{p}" for p in HOSTILE + [marker])
        extra = dict(SCHEDULE, PROFAGENT_OUTPUT_DIR=out, PROFAGENT_STEP_ON=step_on)
        # A hang or a crash on the hostile names fails here (std::regex: SIGSEGV, or no end).
        agent, plain = R.both(env, [program(env, "markers_app"), "steps", "10"], extra, timeout=60)
        R.expect_unchanged(agent, plain)
        R.expect(agent.returncode == 0, f"status {agent.returncode}: {agent.stderr[-400:]!r}")
        R.expect(not step_on_lines(agent), f"warnings: {step_on_lines(agent)}")
        check_windows(out, R.expected(agent.stdout))
        return f"{kind} markers with {HOSTILE} on 1000-64 KiB names: windows {WINDOWS}"
    return case


def case_markers_bad_items(env):
    """18,000 bad items and an invalid 50,000-character pattern: one line each, shortened; the
    valid marker still works."""
    out = env.out("markers_bad_items")
    invalid = "[" + "a" * 50000
    step_on = "x," * 18000 + f"kernel:{invalid},kernel:^train_step_end$"
    extra = dict(SCHEDULE, PROFAGENT_OUTPUT_DIR=out, PROFAGENT_STEP_ON=step_on)
    agent, plain = R.both(env, [program(env, "markers_app"), "steps", "10"], extra, timeout=60)
    R.expect_unchanged(agent, plain)
    lines = step_on_lines(agent)
    R.expect(len(lines) == 2, f"{len(lines)} PROFAGENT_STEP_ON lines, expected 2: {[l[:160] for l in lines[:4]]}")
    R.expect("18000 items ignored" in lines[0], f"first line {lines[0][:200]!r}")
    R.expect("1 of 2 kernel:/range: patterns" in lines[1] and "(50001 bytes)" in lines[1],
             f"second line {lines[1][:300]!r}")
    R.expect(all(len(line) < 400 for line in lines), f"line lengths {[len(l) for l in lines]}")
    check_windows(out, R.expected(agent.stdout))
    return f"2 warning lines ({len(lines[0])} and {len(lines[1])} characters), windows {WINDOWS}"


def case_markers_without_re2(env):
    """The agent without its libprofagent_re2.so beside it (a copy elsewhere): kernel: and
    range: markers are left out with one line; api: markers still mark the steps."""
    out = env.out("markers_without_re2")
    alone = os.path.join(env.work, "alone", "lib")
    os.makedirs(alone, exist_ok=True)
    agent_copy = os.path.join(alone, "libprofagent.so")
    shutil.copyfile(env.agent, agent_copy)
    extra = dict(SCHEDULE, PROFAGENT_OUTPUT_DIR=out,
                 PROFAGENT_STEP_ON="kernel:^never$,range:^never$,api:cudaLaunchKernel")
    command = [program(env, "markers_app"), "steps", "10"]
    agent = R.run(command, extra, agent_copy, env.devsim, timeout=60)
    plain = R.run(command, extra, None, env.devsim, timeout=60)
    R.expect_unchanged(agent, plain)
    lines = step_on_lines(agent)
    R.expect(len(lines) == 1 and "kernel:/range: markers ignored: RE2 could not be loaded" in lines[0],
             f"lines: {lines}")
    # api:cudaLaunchKernel ends a step at every launch: 7 per loop step, so 70 steps; the
    # schedule's windows are then steps 3-4 and 7-8 of those, one launch each.
    found = sorted(os.path.basename(p).split(".")[2:4] for p in R.traces(out))
    R.expect(found == [["w1", "steps3-4"], ["w2", "steps7-8"]], f"windows {found}")
    return lines[0]


# ---- a schedule or marker that never lets anything be recorded says why ------------

SILENT = {
    "never_active": ({"PROFAGENT_SCHEDULE": "skip_first=100,active=1", "PROFAGENT_STEP_ON": "kernel:^train_step_end$"},
                     "wrote nothing: the schedule never reached an active step "
                     "(10 steps seen, the first active step would be 100)"),
    "ended_in_warmup": ({"PROFAGENT_SCHEDULE": "wait=2,warmup=20,active=1", "PROFAGENT_STEP_ON": "kernel:^train_step_end$"},
                        "wrote nothing: the process ended during warmup step 10"),
    "no_step_marked": ({"PROFAGENT_SKIP_FIRST": "3"},
                       "wrote nothing: no step ended, so the schedule never reached an active step (the first would be step 3)"),
    "profiler_api_never": ({"PROFAGENT_STEP_ON": "profiler-api"},
                           "wrote nothing: PROFAGENT_STEP_ON=profiler-api records only between cudaProfilerStart and "
                           "cudaProfilerStop, and no cudaProfilerStart was seen"),
}


def silent_case(name):
    def case(env):
        variables, wanted = SILENT[name]
        out = env.out(f"silent_{name}")
        extra = dict(variables, PROFAGENT_OUTPUT_DIR=out)
        agent, plain = R.both(env, [program(env, "markers_app"), "steps", "10"], extra, timeout=60)
        R.expect_unchanged(agent, plain)
        R.expect(not os.listdir(out), f"files written: {os.listdir(out)}")
        lines = agent.agent_lines()
        R.expect(len(lines) == 1 and lines[0].startswith("[profagent] " + wanted),
                 f"the agent said {lines}, expected one line starting {wanted!r}")
        # The same settings in a process that never uses CUDA: no file, no line.
        quiet = R.run(["/bin/true"], extra, env.agent, env.devsim)
        R.expect(not quiet.stderr and not os.listdir(out), f"/bin/true: {quiet.stderr!r}")
        return lines[0]
    return case


# ---- `profagent run` forwards signals ------------------------------------------------

FORWARDED = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2]


def default_signals():
    """preexec_fn: the forwarded signals start at their default action, unblocked (whatever
    ctest had), and a SIGQUIT death leaves no core file."""
    for sig in FORWARDED:
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Waiter:
    """signal_waiter started directly or through `profagent run`, up to its "ready <pid>"."""

    def __init__(self, env, args, out, launcher, preexec_fn=default_signals, pass_fds=()):
        run_env = R.clean_environment()
        run_env.update(PROFAGENT_OUTPUT_DIR=out, LD_LIBRARY_PATH=env.devsim)
        command = [program(env, "signal_waiter")] + args
        if launcher:
            command = [program(env, "profagent"), "run", "--"] + command
        self.process = subprocess.Popen(command, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        preexec_fn=preexec_fn, pass_fds=pass_fds)
        self.first = self.process.stdout.readline().decode()
        R.expect(self.first.startswith("ready "), f"{command}: no ready line: {self.first!r}")
        self.pid = int(self.first.split()[1])  # the program's (the launcher's child when launched)
        self.out = out

    def line(self):
        return self.process.stdout.readline().decode()

    def finish(self):
        try:
            stdout, stderr = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            stdout, stderr = self.process.communicate()
            raise R.Failed(f"still running 30 s after the signal: {stderr[-300:]!r}")
        finally:
            if os.path.exists(f"/proc/{self.pid}"):  # an orphan: never leave it behind
                os.kill(self.pid, signal.SIGKILL)
                raise R.Failed(f"the program (pid {self.pid}) outlived the launcher")
        # The agent's lines, and the launcher's closing report (its lines and the files listed).
        ours = ("[profagent]", "profagent:", "  " + self.out)
        lines = [l for l in stderr.decode().splitlines() if not l.startswith(ours)]
        return stdout.decode(), lines, self.process.returncode


def case_launcher_forwards_signals(env):
    """Each signal sent to the launcher (as docker stop or a supervisor sends it) reaches the
    program, which handles it (status 3) or dies of it (launcher status 128+N), as the program
    run directly does; the program is reaped, never orphaned."""
    out = env.out("launcher_signals")
    seen = []
    for sig in FORWARDED:
        for mode in (["handle", str(int(sig))], ["default"]):
            results = []
            for launcher in (True, False):
                waiter = Waiter(env, mode, out, launcher)
                waiter.process.send_signal(sig)
                results.append(waiter.finish())
            (stdout, lines, status), (plain_stdout, plain_lines, plain_status) = results
            wanted = 3 if mode[0] == "handle" else 128 + sig
            R.expect(status == wanted, f"{sig.name} {mode[0]}: launcher status {status}, expected {wanted}")
            R.expect(plain_status == (3 if mode[0] == "handle" else -sig), f"{sig.name}: direct run {plain_status}")
            R.expect(stdout == plain_stdout, f"{sig.name} {mode[0]}: stdout {stdout!r}, directly {plain_stdout!r}")
            R.expect(lines == plain_lines, f"{sig.name} {mode[0]}: stderr {lines}, directly {plain_lines}")
            if mode[0] == "handle":
                R.expect(stdout == f"got {sig.name}\n", f"{sig.name}: the program printed {stdout!r}")
            seen.append(f"{sig.name}:{status}")
    return "launcher statuses " + " ".join(seen) + ", no orphan"


def case_launcher_terminal_sigint(env):
    """Ctrl-C on the terminal goes to the launcher and the program (one foreground process
    group): the launcher must not send a second SIGINT. The program prints each signal it
    gets; a SIGUSR1 sent to the launcher afterwards is forwarded and ends it: exactly one
    SIGINT came before."""
    out = env.out("launcher_terminal")
    master, slave = pty.openpty()

    def on_terminal():
        default_signals()
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)  # the pty is the controlling terminal

    try:
        waiter = Waiter(env, ["handle", str(int(signal.SIGUSR1))], out, True, on_terminal, (slave,))
        os.write(master, b"\x03")  # Ctrl-C: the line discipline signals the foreground group
        got = waiter.line()
        R.expect(got == "got SIGINT\n", f"after Ctrl-C the program printed {got!r}")
        waiter.process.send_signal(signal.SIGUSR1)
        stdout, lines, status = waiter.finish()
    finally:
        os.close(master)
        os.close(slave)
    R.expect(stdout == "got SIGUSR1\n", f"after SIGUSR1 the program printed {stdout!r} (a second SIGINT?)")
    R.expect(status == 3, f"launcher status {status}")
    return "Ctrl-C reached the program once, SIGUSR1 forwarded, status 3"


# ---- address-space limits --------------------------------------------------------------

def run_limited(env, command, extra, preload, limit):
    """R.run under RLIMIT_AS = limit bytes (as `ulimit -v`)."""
    run_env = R.clean_environment()
    run_env.update(extra, LD_LIBRARY_PATH=env.devsim)
    if preload:
        run_env["LD_PRELOAD"] = env.agent
    completed = subprocess.run(command, env=run_env, capture_output=True, timeout=120,
                               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    return R.Run(type("C", (), {"stdout": completed.stdout.decode("utf-8", "replace"),
                                "stderr": completed.stderr.decode("utf-8", "replace"),
                                "returncode": completed.returncode}))


def case_address_space_limit(env):
    """ulimit -v 200 MiB: the program runs (it needs far less), the agent's 256 MiB cannot be
    reserved. It records into what fits, counts the rest as dropped with the true cause, says
    so in one line, and writes the trace: recorded + dropped = calls made. CUPTI is off: its
    own 128 MiB of activity buffers are another reservation (refused with one line here)."""
    out = env.out("address_space")
    limit = 200 << 20
    command = [env.app, "threads", "1", "600000"]
    extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_CUPTI": "off"}
    agent = run_limited(env, command, extra, True, limit)
    plain = run_limited(env, command, extra, False, limit)
    R.expect_unchanged(agent, plain)
    R.expect(agent.returncode == 0, f"status {agent.returncode}: {agent.stderr[-300:]!r}")
    calls = R.expected(agent.stdout)["cudaStreamSynchronize"]
    document = R.one_valid_trace(out)
    recorded = len(R.events(document, "cudaStreamSynchronize"))
    drops = document["profagent_drops"]
    R.expect(recorded + drops["host_events"] == calls,
             f"{recorded} recorded + {drops['host_events']} dropped != {calls} calls")
    R.expect(recorded > 0 and drops["host_events"] > 0, f"recorded {recorded}, dropped {drops['host_events']}")
    R.expect(drops["host_events_cause"] == "address space limit", f"cause {drops['host_events_cause']!r}")
    R.expect(drops["host_buffer_reserved_bytes"] < drops["host_buffer_requested_bytes"] == 256 << 20,
             f"buffers {drops}")
    said = [line for line in agent.agent_lines() if "dropped" in line or "address space" in line]
    R.expect(len(said) == 1 and "address space limit" in said[0] and "raise the limit" in said[0],
             f"lines about it: {said}")
    return (f"{recorded} recorded + {drops['host_events']} dropped = {calls} calls in "
            f"{drops['host_buffer_reserved_bytes'] >> 20} MiB reserved; said once")


CASES = {
    "markers_kernel_hostile": marker_case("kernel", "^train_step_end$"),
    "markers_range_hostile": marker_case("range", "^step_boundary$"),
    "markers_bad_items": case_markers_bad_items,
    "markers_without_re2": case_markers_without_re2,
    "launcher_forwards_signals": case_launcher_forwards_signals,
    "launcher_terminal_sigint": case_launcher_terminal_sigint,
    "address_space_limit": case_address_space_limit,
}
CASES.update({f"silent_{name}": silent_case(name) for name in SILENT})
