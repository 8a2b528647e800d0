"""Step windows at their edges: a time:MS marker of any period (1 ms included) marks one step per
period and never spins; graphs without device work never make a window wait; launches racing a
step boundary land in the window of their launch call, with their kernel; the closing line after
windows were written. Program: programs/window_edges.cu (window_edges.cmake).
"""
import collections
import os
import re
import selectors
import time

import reliability as R

NAME = re.compile(r"\.w(\d+)(?:\.steps(\d+)-(\d+))?\.trace\.json$")


def program(env):
    return os.path.join(os.path.dirname(env.app), "window_edges")


def run_with_usage(command, env_extra, preload, env):
    """(Run, wall s, CPU s, peak RSS MiB) of one run, CPU and RSS from the kernel's rusage."""
    run_env = R.clean_environment()
    run_env.update(env_extra)
    run_env["LD_LIBRARY_PATH"] = env.devsim
    if preload:
        run_env["LD_PRELOAD"] = preload
    read_out, write_out = os.pipe()
    read_err, write_err = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: the command with its output on the pipes
        try:
            os.dup2(write_out, 1)
            os.dup2(write_err, 2)
            os.execve(command[0], command, run_env)
        finally:
            os._exit(127)
    os.close(write_out)
    os.close(write_err)
    stdout, stderr = drain(read_out, read_err)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - started
    code = os.waitstatus_to_exitcode(status)
    run = R.Run(type("C", (), {"stdout": stdout, "stderr": stderr, "returncode": code}))
    return run, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def drain(*fds):
    """Everything written to the pipes until their writers close them."""
    chunks = {fd: [] for fd in fds}
    selector = selectors.DefaultSelector()
    for fd in fds:
        selector.register(fd, selectors.EVENT_READ)
    while selector.get_map():
        for key, _ in selector.select():
            data = os.read(key.fd, 65536)
            if data:
                chunks[key.fd].append(data)
            else:
                selector.unregister(key.fd)
                os.close(key.fd)
    return tuple(b"".join(chunks[fd]).decode("utf-8", "replace") for fd in fds)


def windows(out):
    """Window number -> its trace document."""
    found = {}
    for path in R.traces(out):
        match = NAME.search(path)
        R.expect(match, f"unexpected trace {os.path.basename(path)}")
        found[int(match.group(1))] = R.load(path)
    return found


def profiler_steps(document):
    return [e for e in R.events(document) if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]


# ---- time:MS -------------------------------------------------------------------------------

def case_time_marker_1ms(env):
    """time:1 over a ~1 s program: about one step per millisecond (never more than one per
    period, never a spin), a prompt exit, little CPU and memory added."""
    out = env.out("window_edges_time_1ms")
    command = [program(env), "timed", "1000"]
    extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_STEP_ON": "time:1"}
    agent, agent_wall, agent_cpu, agent_rss = run_with_usage(command, extra, env.agent, env)
    plain, plain_wall, plain_cpu, plain_rss = run_with_usage(command, extra, None, env)
    R.expect_unchanged(agent, plain)
    document = R.one_valid_trace(out)
    steps = profiler_steps(document)
    missed = document["profagent_drops"].get("timer_periods_missed", 0)
    run_ms = plain_wall * 1000
    R.expect(len(steps) <= 1.2 * agent_wall * 1000 + 5,
             f"{len(steps)} steps marked in a {agent_wall:.2f} s run: more than one per millisecond")
    R.expect(len(steps) + missed >= 0.4 * run_ms,
             f"{len(steps)} steps and {missed} missed periods in a {run_ms:.0f} ms run: periods were lost")
    durations = sorted(e["dur"] for e in steps[:-1])
    median_ms = durations[len(durations) // 2] / 1000 if durations else 0
    R.expect(median_ms >= 0.5, f"median step {median_ms:.3f} ms: the timer does not wait for its period")
    R.expect(agent_wall - plain_wall < 3, f"exit took {agent_wall:.1f} s with the agent, {plain_wall:.1f} s without")
    R.expect(agent_cpu - plain_cpu < 0.6, f"CPU {agent_cpu:.2f} s with the agent, {plain_cpu:.2f} s without")
    R.expect(agent_rss - plain_rss < 200, f"peak RSS {agent_rss:.0f} MiB with the agent, {plain_rss:.0f} MiB without")
    said = [line for line in agent.agent_lines() if "time:" in line and "missed" in line]
    R.expect((missed == 0) == (not said), f"{missed} missed periods, said: {said}")
    return (f"{len(steps)} steps ({missed} periods missed) in {agent_wall:.2f} s (plain {plain_wall:.2f} s), "
            f"CPU +{agent_cpu - plain_cpu:.3f} s, peak RSS {agent_rss:.0f} MiB (plain {plain_rss:.0f})")


def case_time_marker_not_cuda(env):
    """time:MS in processes that never use CUDA (a shell pipeline, sleep): no timer, no window
    of empty steps, no output."""
    out = env.out("window_edges_time_not_cuda")
    extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_STEP_ON": "time:20", "PROFAGENT_SCHEDULE": "active=1"}
    for command in (["/bin/sleep", "0.3"], ["/bin/sh", "-c", "sleep 0.2 | cat; echo done"]):
        agent, plain = R.both(env, command, extra)
        R.expect((agent.stdout, agent.stderr, agent.returncode) == (plain.stdout, plain.stderr, plain.returncode),
                 f"{command}: the agent printed {agent.stderr[:300]!r}")
        R.expect(os.listdir(out) == [], f"{command}: wrote {sorted(os.listdir(out))[:4]}")
    return "sleep and a shell pipeline under time:20: no file, no output"


# ---- graphs without device work ------------------------------------------------------------

GRAPH_STEPS = 8
GRAPH_WAIT_MS = 4000


def graph_case(kind):
    def case(env):
        out = env.out(f"window_edges_graphs_{kind}")
        extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_SCHEDULE": "wait=0,warmup=0,active=2",
                 "PROFAGENT_WINDOW_WAIT_MS": str(GRAPH_WAIT_MS)}
        command = [program(env), "graphs", kind, str(GRAPH_STEPS)]
        started = time.monotonic()
        agent = R.run(command, extra, env.agent, env.devsim)
        agent_wall = time.monotonic() - started
        plain = R.run(command, extra, None, env.devsim)
        R.expect_unchanged(agent, plain)
        R.expect(agent.returncode == 0, f"status {agent.returncode}: {agent.stdout[-300:]!r}")
        late_lines = [line for line in agent.agent_lines() if "had not come" in line]
        R.expect(not late_lines, f"false late records: {late_lines}")
        found = windows(out)
        R.expect(len(found) == GRAPH_STEPS // 2 + 1, f"windows {sorted(found)}")
        waits = []
        for number, document in sorted(found.items()):
            drops = document["profagent_drops"]
            R.expect(drops["late_device_records"] == 0, f"window {number}: drops {drops}")
            waits.append(document["profagent_window"]["join_wait_ms"])
            R.expect(waits[-1] < GRAPH_WAIT_MS / 2, f"window {number} waited {waits[-1]} ms for its device work")
            check_graph_records(kind, number, document)
        return f"{kind}: {len(found)} windows, join waits (ms) {[round(w, 1) for w in waits]}, run {agent_wall:.2f} s"
    return case


def check_graph_records(kind, number, document):
    """Each step's kernel is linked to its launch; a kernel graph's kernels to cudaGraphLaunch;
    a graph without device work has no device record."""
    calls = {e["args"]["correlation"]: e["name"] for e in R.events(document)
             if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    kernels = [e for e in R.events(document) if e.get("cat") == "kernel"]
    launchers = collections.Counter(calls.get(e["args"].get("correlation"), "?") for e in kernels)
    steps = len(R.events(document, "cudaGraphLaunch")) // (2 if kind == "empty" else 1)
    wanted = {"cudaLaunchKernel": steps, "cudaGraphLaunch": steps if kind == "kernel" else 0}
    wanted = {name: count for name, count in wanted.items() if count}
    R.expect(dict(launchers) == wanted, f"window {number}: kernels by launch call {dict(launchers)}, expected {wanted}")
    others = [e["name"] for e in R.events(document) if e.get("cat") in ("gpu_memcpy", "gpu_memset")]
    R.expect(not others, f"window {number}: device records of a graph without work: {others}")


# ---- launches racing the step boundary -----------------------------------------------------

RACE_THREADS = 64
RACE_STEPS = 800


def race_case(schedule):
    """64 threads launch while the main thread ends a step every millisecond: every kernel of a
    window was launched by a call in that window, and every launch of a window has its kernel
    there. Launch calls are made slow (devsim's host cost x20, ~60 us) so that many are under
    way at each boundary, where recording and device tracing are switched."""
    return lambda env: check_race(env, schedule)


def check_race(env, schedule):
    out = env.out("window_edges_race_" + schedule.replace("=", "").replace(",", "_"))
    extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_SCHEDULE": schedule, "PROFAGENT_SUMMARIES": "off",
             "DEVSIM_HOST_COST_SCALE": "20"}
    command = [program(env), "race", str(RACE_THREADS), str(RACE_STEPS)]
    agent, plain = R.both(env, command, extra, timeout=300)
    R.expect_unchanged(agent, plain)
    found = windows(out)
    R.expect(len(found) >= RACE_STEPS // 2, f"{len(found)} windows for {RACE_STEPS} steps")
    launches = 0
    problems = []
    for number, document in sorted(found.items()):
        calls = [e["args"].get("correlation") for e in R.events(document, "cudaLaunchKernel")]
        kernels = {e["args"].get("correlation") for e in R.events(document) if e.get("cat") == "kernel"}
        launches += len(calls)
        strangers = kernels - set(calls)
        lost = [c for c in calls if c is None or c not in kernels]
        drops = document["profagent_drops"]
        if strangers or lost or drops["unmatched_device_records"] or drops["late_device_records"]:
            problems.append(f"window {number}: {len(strangers)} kernels launched outside it, {len(lost)} launches "
                            f"without their kernel, drops {drops['unmatched_device_records']} unmatched "
                            f"{drops['late_device_records']} late")
    R.expect(not problems, f"{len(problems)} windows wrong:\n" + "\n".join(problems[:8]))
    R.expect(launches > 0, "no launch was recorded")
    return f"{len(found)} windows, {launches} launches, each kernel in its launch call's window"


# ---- the closing line after windows were written -------------------------------------------

def closing_case(schedule, windows_written, why):
    """Windows written during the run, nothing recorded at exit (device queries were made):
    the closing line says the windows were written and why nothing came after them."""
    def case(env):
        out = env.out("window_edges_closing_" + schedule.replace("=", "").replace(",", "_"))
        extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_SCHEDULE": schedule}
        agent, plain = R.both(env, [program(env), "queries", "12"], extra)
        R.expect_unchanged(agent, plain)
        R.expect(len(windows(out)) == windows_written, f"windows {sorted(windows(out))}")
        last = R.closing_line(agent)
        R.expect("wrote nothing" not in last and "no CUDA call" not in last, f"closing line {last!r}")
        wanted = f"[profagent] wrote {windows_written} windows (files listed above); nothing was recorded after step "
        R.expect(last.startswith(wanted) and last.endswith(why), f"closing line {last!r}, expected {wanted!r}...{why!r}")
        return last
    return case


CASES = {
    "window_edges_time_marker_1ms": case_time_marker_1ms,
    "window_edges_time_marker_not_cuda": case_time_marker_not_cuda,
    # Recorded steps between idle ones (recording and device tracing switched at every boundary)
    # and back to back (windows cut while launches are under way).
    "window_edges_race_idle_between": race_case("wait=1,active=1"),
    "window_edges_race_back_to_back": race_case("wait=0,warmup=0,active=1"),
    "window_edges_closing_repeat_done": closing_case(
        "skip_first=1,active=2,repeat=2", 2, "the schedule's 2 cycles (repeat=2) were done"),
    "window_edges_closing_idle": closing_case(
        "wait=3,active=2", 2, "the process ended in idle step 12 of the schedule"),
}
for _kind in ("memory", "host", "empty", "child", "captured", "kernel"):
    CASES[f"window_edges_graphs_{_kind}"] = graph_case(_kind)
