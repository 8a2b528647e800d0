"""On-demand tracing of running processes: `profagent trigger` asks processes started with
PROFAGENT_ON_DEMAND for their next steps through their sockets (no signal), and every target it
cannot trigger gets one clear line and is left as it was. Program: programs/trigger.cmake.

Each case has its own XDG_RUNTIME_DIR, so `--all` reaches only the processes the case started
(tests run in parallel)."""
import os
import re
import signal
import socket
import shutil
import subprocess
import tempfile
import time

import reliability as R

STEPS = 3


def launcher(env):
    return os.path.join(os.path.dirname(os.path.dirname(env.agent)), "bin", "profagent")


def private_runtime(env, name):
    """A short private folder: a socket's path has at most 107 bytes (the build tree's is longer)."""
    return tempfile.mkdtemp(prefix="pa-trigger-")


def sockets(runtime):
    folder = os.path.join(runtime, "profagent")
    return sorted(n for n in os.listdir(folder) if n.endswith(".sock")) if os.path.isdir(folder) else []


def wait_for(condition, what, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise R.Failed(f"timed out waiting for {what}")


def trigger(env, runtime, args, user=None):
    environment = R.clean_environment()
    environment["XDG_RUNTIME_DIR"] = runtime
    command = [launcher(env), "trigger"] + args
    if user is not None:
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] + command
    completed = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=60)
    return completed.returncode, completed.stdout.splitlines(), completed.stderr.splitlines()


def start_job(env, runtime, out, stop_file, count, period_ms=50):
    environment = R.clean_environment()
    environment.update({"LD_PRELOAD": env.agent, "LD_LIBRARY_PATH": env.devsim, "XDG_RUNTIME_DIR": runtime,
                        "PROFAGENT_ON_DEMAND": "1", "PROFAGENT_OUTPUT_DIR": out})
    app = os.path.join(os.path.dirname(env.app), "trigger_app")
    return [subprocess.Popen([app, str(period_ms), stop_file], env=environment, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(count)]


def finish_job(processes, stop_file):
    open(stop_file, "w").close()
    results = []
    for process in processes:
        stdout, stderr = process.communicate(timeout=120)
        results.append((process.pid, process.returncode, stdout, stderr))
    return results


def window_steps(path):
    document = R.load(path)
    steps = sorted(int(e["name"][len("ProfilerStep#"):]) for e in R.events(document)
                   if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    return steps, len(R.events(document, "cudaLaunchKernel"))


def check_windows(results, triggered_out, first):
    """Each process wrote one window of exactly the triggered steps, the same for all of them."""
    wanted = list(range(first, first + STEPS))
    for pid, status, stdout, stderr in results:
        R.expect(status == 0, f"process {pid} ended with {status}: {stderr[-600:]!r}")
        per_step = R.expected(stdout)["per_step"]
        mine = [p for p in R.traces(triggered_out) if f".{pid}." in os.path.basename(p)]
        R.expect(len(mine) == 1, f"process {pid}: traces {mine} in {os.listdir(triggered_out)}")
        R.expect(f".steps{first}-{first + STEPS - 1}." in mine[0], f"process {pid}: file {mine[0]}")
        steps, launches = window_steps(mine[0])
        R.expect(steps == wanted and launches == STEPS * per_step,
                 f"process {pid}: steps {steps} with {launches} launches, expected {wanted} with "
                 f"{STEPS * per_step}")
        closing = [l for l in stderr.splitlines() if l.startswith("[profagent]")][-1]
        R.expect("the triggered steps were all recorded" in closing, f"process {pid}: last line {closing!r}")


def case_trigger_all(env):
    """Four processes of one job on demand, triggered with --all --steps 3: each writes exactly
    steps S..S+2, the same S everywhere (two past the furthest step in progress), into the
    --output-dir given; a second trigger while they record changes nothing; the sockets are
    gone after the exit."""
    runtime = private_runtime(env, "trigger_all_runtime")
    out, triggered = env.out("trigger_all_default"), env.out("trigger_all_triggered")
    stop_file = os.path.join(env.out("trigger_all_stop"), "stop")
    # Two ranks start late, so the job's processes are at different steps when triggered.
    processes = start_job(env, runtime, out, stop_file, 2)
    try:
        wait_for(lambda: len(sockets(runtime)) == 2, "the first 2 sockets")
        time.sleep(0.3)
        processes += start_job(env, runtime, out, stop_file, 2)
        wait_for(lambda: len(sockets(runtime)) == 4, "the 4 sockets")
        status, stdout, stderr = trigger(env, runtime, ["--all", "--steps", str(STEPS), "--output-dir", triggered])
        R.expect(status == 0 and len(stdout) == 4, f"trigger: status {status}, {stdout}, {stderr}")
        firsts = {int(re.search(r"recording steps (\d+)-", line).group(1)) for line in stdout}
        R.expect(len(firsts) == 1, f"the processes start at different steps: {stdout}")
        again = trigger(env, runtime, ["--all", "--steps", "1"])
        R.expect(again[0] == 1 and not again[1] and any("already triggered" in l for l in again[2]),
                 f"second trigger: {again}")
        wait_for(lambda: len(R.traces(triggered)) == 4, "the 4 triggered windows")
    finally:
        results = finish_job(processes, stop_file)
        left = sockets(runtime)
        shutil.rmtree(runtime, ignore_errors=True)
    first = firsts.pop()
    check_windows(results, triggered, first)
    R.expect(not R.traces(out), f"written outside the trigger's window: {os.listdir(out)}")
    R.expect(not left, f"sockets left after the exit: {left}")
    return f"4 processes at different steps, each wrote steps {first}-{first + STEPS - 1}; second trigger refused; sockets removed"


FAST_PROCESSES = 8


def case_trigger_all_fast_steps(env):
    """Eight processes stepping every millisecond, triggered with --all --steps 3: asking them one
    after the other takes longer than a step, so some have begun the step first chosen by the
    time they are asked. The trigger takes back what it armed and tries again further ahead:
    each process still writes exactly steps S..S+2, the same S everywhere, and none is left armed
    for other steps."""
    runtime = private_runtime(env, "trigger_fast_runtime")
    out, triggered = env.out("trigger_fast_default"), env.out("trigger_fast_triggered")
    stop_file = os.path.join(env.out("trigger_fast_stop"), "stop")
    processes = start_job(env, runtime, out, stop_file, FAST_PROCESSES, period_ms=1)
    try:
        wait_for(lambda: len(sockets(runtime)) == FAST_PROCESSES, "the sockets")
        status, stdout, stderr = trigger(env, runtime, ["--all", "--steps", str(STEPS), "--output-dir", triggered])
        R.expect(status == 0 and len(stdout) == FAST_PROCESSES, f"trigger: status {status}, {stdout}, {stderr}")
        firsts = {int(re.search(r"recording steps (\d+)-", line).group(1)) for line in stdout}
        R.expect(len(firsts) == 1, f"the processes start at different steps: {stdout}")
        wait_for(lambda: len(R.traces(triggered)) == FAST_PROCESSES, "the triggered windows")
    finally:
        results = finish_job(processes, stop_file)
        shutil.rmtree(runtime, ignore_errors=True)
    first = firsts.pop()
    check_windows(results, triggered, first)
    R.expect(not R.traces(out), f"written outside the trigger's window: {os.listdir(out)}")
    retried = [l for l in stderr if "tried again" in l]
    return f"{FAST_PROCESSES} processes stepping every ms each wrote steps {first}-{first + STEPS - 1}; {len(retried)} retries said"


def exchange(runtime, pid, line):
    """One request line to the agent of `pid` over its socket, as `profagent trigger` sends it;
    the answer line."""
    with socket.socket(socket.AF_UNIX) as connection:
        connection.settimeout(10)
        connection.connect(os.path.join(runtime, "profagent", f"{pid}.sock"))
        connection.sendall(line.encode() + b"\n")
        return connection.makefile().readline().strip()


def case_trigger_cancel(env):
    """What `--all` sends when one process had begun the chosen step: `cancel first=S` takes back
    a trigger armed from S while S has not begun (the process is idle again, says so once, and
    records nothing); a cancel of what is not armed, or of a trigger whose first step began,
    is refused and changes nothing."""
    runtime = private_runtime(env, "trigger_cancel_runtime")
    out = env.out("trigger_cancel_out")
    stop_file = os.path.join(env.out("trigger_cancel_stop"), "stop")
    processes = start_job(env, runtime, out, stop_file, 1)
    pid = processes[0].pid
    try:
        wait_for(lambda: len(sockets(runtime)) == 1, "the socket")
        step = int(re.search(r"step=(\d+)", exchange(runtime, pid, "status")).group(1))
        far = step + 40  # 2 s ahead at a step per 50 ms
        armed = exchange(runtime, pid, f"record first={far} steps=2 dir={out}")
        R.expect(armed.startswith(f"ok first={far} last={far + 1}"), f"record: {armed!r}")
        R.expect("busy=1" in exchange(runtime, pid, "status"), "not busy once armed")
        taken_back = exchange(runtime, pid, f"cancel first={far}")
        R.expect(taken_back.startswith("ok step=") and "busy=0" in taken_back, f"cancel: {taken_back!r}")
        again = exchange(runtime, pid, f"cancel first={far}")
        R.expect(again.startswith("error no trigger from step"), f"second cancel: {again!r}")
        # Armed from the next step, which begins at once: too late to take back.
        soon = exchange(runtime, pid, "record first=0 steps=1 dir=" + out)
        first = int(re.search(r"first=(\d+)", soon).group(1))
        wait_for(lambda: int(re.search(r"step=(\d+)", exchange(runtime, pid, "status")).group(1)) >= first,
                 "the triggered step")
        late = exchange(runtime, pid, f"cancel first={first}")
        wait_for(lambda: len(R.traces(out)) == 1, "the window of the trigger not taken back")
    finally:
        results = finish_job(processes, stop_file)
        shutil.rmtree(runtime, ignore_errors=True)
    R.expect(late.startswith(f"error step {first} has already begun"), f"late cancel: {late!r}")
    _, status, _, stderr = results[0]
    R.expect(status == 0, f"status {status}: {stderr[-600:]!r}")
    said = [l for l in stderr.splitlines() if "taken back" in l]
    R.expect(len(said) == 1 and f"from step {far}" in said[0], f"lines about the cancel: {said}")
    windows = [os.path.basename(p) for p in R.traces(out)]
    R.expect(len(windows) == 1 and f".steps{first}-{first}." in windows[0], f"windows written: {windows}")
    return f"armed from {far}, taken back (said once), nothing recorded for it; a cancel at step {first} refused"


def case_trigger_bad_targets(env):
    """One clear line, status 1 and nothing changed for: a process without the agent, no such
    process, a stale socket (removed), another user's process, nobody on demand (--all)."""
    runtime = private_runtime(env, "trigger_bad_runtime")
    said = {}
    status, _, stderr = trigger(env, runtime, ["--all"])
    said["nobody"] = (status, stderr)
    plain = subprocess.Popen(["sleep", "60"])
    try:
        said["without agent"] = trigger(env, runtime, [str(plain.pid)])[0::2]
        said["other user"] = trigger(env, runtime, [str(plain.pid)], user=65534)[0::2]
    finally:
        plain.kill()
        plain.wait()
    said["no process"] = trigger(env, runtime, [str(plain.pid)])[0::2]
    folder = os.path.join(runtime, "profagent")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    stale = os.path.join(folder, f"{plain.pid}.sock")
    left = socket.socket(socket.AF_UNIX)
    left.bind(stale)
    left.close()  # bound, never listened: as a socket left by a killed process
    said["stale"] = trigger(env, runtime, [str(plain.pid)])[0::2]
    stale_left = os.path.exists(stale)
    shutil.rmtree(runtime, ignore_errors=True)
    wanted = {"nobody": "no process of this user runs the agent on demand",
              "without agent": "does not run the agent on demand",
              "other user": "belongs to another user",
              "no process": "no such process",
              "stale": "removed its stale socket"}
    for what, (status, lines) in said.items():
        R.expect(status == 1 and len(lines) == 1 and wanted[what] in lines[0], f"{what}: status {status}, {lines}")
    R.expect(not stale_left, "the stale socket is still there")
    return "; ".join(f"{what}: {lines[0]}" for what, (_, lines) in said.items())


def case_trigger_duration(env):
    """--duration-ms 400: one window of at least 400 ms from the trigger, whose steps are
    consecutive and hold their launches (the first step began before the window: its launches
    are not in it); a --steps trigger meanwhile is refused and changes nothing."""
    runtime = private_runtime(env, "trigger_duration_runtime")
    out = env.out("trigger_duration_out")
    stop_file = os.path.join(env.out("trigger_duration_stop"), "stop")
    processes = start_job(env, runtime, out, stop_file, 1)
    pid = processes[0].pid
    try:
        wait_for(lambda: len(sockets(runtime)) == 1, "the socket")
        status, stdout, stderr = trigger(env, runtime, [str(pid), "--duration-ms", "400"])
        R.expect(status == 0 and stdout == [f"process {pid}: recording 400 ms; files in {out} (names with .{pid}.)"],
                 f"trigger: status {status}, {stdout}, {stderr}")
        again = trigger(env, runtime, [str(pid), "--steps", "2"])
        R.expect(again[0] == 1 and len(again[2]) == 1 and "a timed window is being recorded" in again[2][0],
                 f"second trigger: {again}")
        wait_for(lambda: len(R.traces(out)) == 1, "the timed window")
    finally:
        results = finish_job(processes, stop_file)
        shutil.rmtree(runtime, ignore_errors=True)
    _, returncode, stdout, stderr = results[0]
    R.expect(returncode == 0, f"status {returncode}: {stderr[-600:]!r}")
    per_step = R.expected(stdout)["per_step"]
    document = R.load(R.traces(out)[0])
    marks = sorted((e for e in R.events(document) if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    steps = [int(e["name"][len("ProfilerStep#"):]) for e in marks]
    launches = len(R.events(document, "cudaLaunchKernel"))
    span_ms = (marks[-1]["ts"] + marks[-1]["dur"] - marks[0]["ts"]) / 1000 if marks else 0
    R.expect(steps and steps == list(range(steps[0], steps[0] + len(steps))), f"steps {steps}")
    R.expect(per_step * (len(steps) - 1) <= launches <= per_step * len(steps),
             f"{launches} launches in steps {steps} ({per_step} per step)")
    R.expect(400 <= span_ms < 30000, f"the window spans {span_ms:.1f} ms")
    return f"steps {steps[0]}-{steps[-1]}, {launches} launches, {span_ms:.0f} ms; --steps meanwhile refused"


CASES = {
    "trigger_duration": case_trigger_duration,
    "trigger_all_steps": case_trigger_all,
    "trigger_all_fast_steps": case_trigger_all_fast_steps,
    "trigger_cancel": case_trigger_cancel,
    "trigger_bad_targets": case_trigger_bad_targets,
}
