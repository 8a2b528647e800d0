#!/usr/bin/python3
"""Reliability cases: every promise the agent makes to the process it is loaded into, as a test.

    reliability.py --agent libprofagent.so --app reliability_app --devsim DIR --cudart DIR
                   --work DIR CASE

Each case runs a program with LD_PRELOAD=libprofagent.so and, where it says "unchanged",
again without the agent: stdout, the program's own stderr lines and the exit status (signal
deaths included) must be identical. Output files are parsed with the json module; a case
raises Failed with a sentence saying what is wrong. Standard library only.
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import agent_run  # noqa: E402
import trace_reader  # noqa: E402
from test_output import remove_output_of_passed_case  # noqa: E402
from agent_run import clean_environment  # noqa: E402,F401 (the cases use R.clean_environment)

Run = agent_run.Run.of  # the Run of a finished process: R.Run(completed) in the cases


class Failed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise Failed(message)


class Env:
    def __init__(self, options):
        self.agent = options.agent
        self.app = options.app
        self.devsim = options.devsim
        self.cudart = options.cudart
        self.work = options.work

    def out(self, name):
        path = os.path.join(self.work, name)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path


def run(command, env_extra, preload=None, library_path=None, timeout=120, stdin=None):
    env = agent_run.agent_environment(preload, library_path, base={**clean_environment(), **env_extra})
    return agent_run.run(command, env, timeout, stdin)


def both(env, command, env_extra, library_path=None, timeout=120):
    """The run with the agent and the same run without it."""
    library_path = library_path or env.devsim
    with_agent = run(command, env_extra, env.agent, library_path, timeout)
    without = run(command, env_extra, None, library_path, timeout)
    return with_agent, without


def expect_unchanged(with_agent, without, what=""):
    expect(with_agent.returncode == without.returncode,
           f"{what}exit status {with_agent.returncode} with the agent, {without.returncode} without "
           f"(stderr: {with_agent.stderr[-600:]!r})")
    expect(with_agent.stdout == without.stdout,
           f"{what}stdout differs:\n{with_agent.stdout[-600:]}\n--- without ---\n{without.stdout[-600:]}")
    expect(with_agent.other_lines() == without.other_lines(),
           f"{what}the program's stderr differs: {with_agent.other_lines()[-5:]} / {without.other_lines()[-5:]}")


def traces(out_dir):
    return sorted(glob.glob(os.path.join(out_dir, "*.trace.json")))


def load(path):
    """The trace's document; a file that is no trace (invalid UTF-8 included) fails the case."""
    try:
        return trace_reader.load_trace(path)
    except trace_reader.TraceError as error:
        raise Failed(str(error)) from error


def events(document, name=None):
    """Complete events, without the gpu_user_annotation slices that mirror an operator's or a
    range's device work on the device lanes (they carry its name, but are not calls) and the
    agent's own work on its profagent track (not the program's)."""
    found = [e for e in trace_reader.complete_events(document)
             if e.get("cat") not in ("gpu_user_annotation", "profagent")]
    return [e for e in found if e.get("name") == name] if name else found


def leftovers(out_dir):
    """Temporary or partial files the agent must never leave behind."""
    return [n for n in os.listdir(out_dir) if n.startswith(".") or n.endswith((".tmp", ".partial"))]


def expected(stdout):
    lines = [line for line in stdout.splitlines() if line.startswith("expect ")]
    expect(lines, f"the program printed no 'expect' line: {stdout[-300:]!r}")
    return json.loads(lines[-1][len("expect "):])


def one_valid_trace(out_dir, calls=None):
    found = traces(out_dir)
    expect(len(found) == 1, f"expected one trace in {out_dir}, found {os.listdir(out_dir)}")
    document = load(found[0])
    if calls:
        for name, count in calls.items():
            got = len(events(document, name))
            expect(got == count, f"{name}: {got} events in the trace, the program made {count}")
    expect(not leftovers(out_dir), f"left behind: {leftovers(out_dir)}")
    return document


# ---- exit paths -------------------------------------------------------------------------------

def exit_case(how, status, real_runtime=False):
    """real_runtime: NVIDIA's libcudart.so.13 without a driver (every call fails with 35)."""
    def case(env):
        out = env.out(f"end_{how}")
        agent, plain = both(env, [env.app, "end", how, str(status)], {"PROFAGENT_OUTPUT_DIR": out},
                            library_path=env.cudart if real_runtime else None)
        expect_unchanged(agent, plain)
        expect(agent.returncode == status, f"exit status {agent.returncode}, the program asked for {status}")
        one_valid_trace(out, expected(agent.stdout))
        return f"status {status} unchanged, trace complete"
    return case


def case_exec(env):
    """exec: the first image writes its trace before exec; the new image (same pid) writes its
    own next to it under a numbered name, never replacing the first."""
    out = env.out("exec")
    command = [env.app, "exec", env.app, "work", "2", "4"]
    agent, plain = both(env, command, {"PROFAGENT_OUTPUT_DIR": out})
    expect_unchanged(agent, plain)
    found = traces(out)
    expect(len(found) == 2, f"expected the trace of each image, found {os.listdir(out)}")
    counts = sorted(len(events(load(path), "cudaMalloc")) for path in found)
    expect(counts == [2, 3], f"cudaMalloc per image {counts}, expected 3 before exec and 2 after")
    return "both images traced, status 4 unchanged"


def signal_case(which, handler):
    def case(env):
        out = env.out(f"signal_{which}_{handler}")
        command = [env.app, "signal", which] + (["handler"] if handler else [])
        agent, plain = both(env, command, {"PROFAGENT_OUTPUT_DIR": out})
        expect_unchanged(agent, plain)
        sig = signal.SIGINT if which == "SIGINT" else signal.SIGTERM
        expect(agent.returncode == -sig, f"the process did not die of {which}: {agent.returncode}")
        # By design no signal handling by default (signals belong to the program), so the
        # trace of a process killed by a signal is deliberately absent — and nothing
        # half-written is left.
        expect(not traces(out) and not leftovers(out), f"unexpected files {os.listdir(out)}")
        return f"died of {which} as without the agent, no file"
    return case


# ---- opt-in signal handling (PROFAGENT_HANDLE_SIGNALS=1) -------------------------------------

HANDLED = {"PROFAGENT_HANDLE_SIGNALS": "1", "PROFAGENT_LOG_LEVEL": "debug"}


def reset_signals(to):
    """For preexec_fn: SIGTERM and SIGINT start as `to` in the program, whatever ctest had."""
    def reset():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, to)
    return reset


def run_until_signal(env, command, env_extra, sig, preload):
    """Starts `command`, waits for its "recording" line, sends `sig`, collects the rest."""
    run_env = clean_environment()
    run_env.update(env_extra)
    run_env["LD_LIBRARY_PATH"] = env.devsim
    if preload:
        run_env["LD_PRELOAD"] = preload
    process = subprocess.Popen(command, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               preexec_fn=reset_signals(signal.SIG_DFL))
    first = process.stdout.readline()
    if first == b"recording\n":
        process.send_signal(sig)
    try:
        stdout, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise Failed(f"{command[1:]} did not end within 60 s of {sig.name} (preload: {bool(preload)})")
    expect(first == b"recording\n", f"the program never started recording: {first!r} {stderr[-400:]!r}")
    return Run(type("C", (), {"stdout": (first + stdout).decode("utf-8", "replace"),
                              "stderr": stderr.decode("utf-8", "replace"),
                              "returncode": process.returncode}))


def flushed_at(agent):
    return [line.split("flushing at ")[1] for line in agent.agent_lines() if "flushing at " in line]


def trace_with_kernels(out):
    document = one_valid_trace(out)
    kernels = [e for e in events(document) if e.get("cat") == "kernel"]
    launches = events(document, "cudaLaunchKernel")
    expect(len(kernels) >= 20 and len(launches) >= 20,
           f"{len(kernels)} kernels and {len(launches)} launches in the trace, the program made 20 before the signal")
    return len(kernels)


def handled_signal_case(which):
    """The agent's handler: trace written by the flush thread, then the default action: the
    process dies of the same signal as without the agent. The signal lands while the program
    launches kernels (often inside a CUDA call)."""
    def case(env):
        out = env.out(f"handled_{which}")
        sig = getattr(signal, which)
        command = [env.app, "loop", "busy"]
        agent = run_until_signal(env, command, dict(HANDLED, PROFAGENT_OUTPUT_DIR=out), sig, env.agent)
        plain = run_until_signal(env, command, dict(HANDLED, PROFAGENT_OUTPUT_DIR=out), sig, None)
        expect(plain.returncode == -sig, f"without the agent the program ended with {plain.returncode}")
        expect_unchanged(agent, plain)
        expect(flushed_at(agent) == [which], f"flushes: {flushed_at(agent)} (stderr {agent.stderr[-400:]!r})")
        kernels = trace_with_kernels(out)
        expect(closing_line(agent).startswith("[profagent] wrote "), f"closing line {closing_line(agent)!r}")
        return f"status {agent.returncode} with and without the agent, trace with {kernels} kernels"
    return case


def case_handled_big_trace(env):
    """3 million events: more than can be written within the handler's 2 s bound on a slow
    machine. Whatever the speed, the process still dies of SIGTERM (never hangs), and a
    published trace is complete. Known gap: a write cut short leaves its hidden .tmp file."""
    out = env.out("handled_big")
    command = [env.app, "loop", "big"]
    extra = dict(HANDLED, PROFAGENT_OUTPUT_DIR=out, PROFAGENT_CUPTI="off")
    agent = run_until_signal(env, command, extra, signal.SIGTERM, env.agent)
    expect(agent.returncode == -signal.SIGTERM, f"status {agent.returncode}: {agent.stderr[-400:]!r}")
    expect(flushed_at(agent) == ["SIGTERM"], f"flushes: {flushed_at(agent)}")
    if not traces(out):
        return f"died of SIGTERM, trace not finished within the bound ({sorted(os.listdir(out))})"
    document = one_valid_trace(out)
    calls = len(events(document, "cudaStreamSynchronize"))
    drops = document["profagent_drops"]["host_events"]
    expect(calls + drops == 3000000, f"{calls} recorded + {drops} dropped != 3000000 calls")
    return f"died of SIGTERM after writing {calls} calls ({drops} dropped)"


def case_handled_second_signal(env):
    """SIGINT while the agent is writing the trace of a SIGTERM (the flush thread has said
    "flushing at SIGTERM"; 3 million events take far longer to write than a kill takes): the
    second signal is not held back behind the first (that would end the process by SIGTERM):
    it goes to its previous action, and the process dies of SIGINT. The time from SIGINT to
    the end is printed, not asserted."""
    out = env.out("handled_second")
    run_env = clean_environment()
    run_env.update(dict(HANDLED, PROFAGENT_OUTPUT_DIR=out, PROFAGENT_CUPTI="off",
                        LD_PRELOAD=env.agent, LD_LIBRARY_PATH=env.devsim))
    process = subprocess.Popen([env.app, "loop", "big"], env=run_env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, preexec_fn=reset_signals(signal.SIG_DFL))
    try:
        expect(process.stdout.readline() == b"recording\n", "the program never started recording")
        process.send_signal(signal.SIGTERM)
        sent = None
        for line in process.stderr:
            if b"flushing at SIGTERM" in line:
                process.send_signal(signal.SIGINT)
                sent = time.monotonic()
                break
        expect(sent is not None, "the agent never said it was flushing at SIGTERM")
        process.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    expect(process.returncode == -signal.SIGINT, f"status {process.returncode}, expected death by SIGINT")
    return f"SIGINT during the SIGTERM flush: status {process.returncode}, ended {took:.3f} s after SIGINT"


def case_handled_app_reraise(env):
    """The program's SIGTERM handler, installed before the agent's, restores SIG_DFL and
    re-raises (the case that left rocprofiler's processes running,
    https://github.com/ROCm/rocm-systems/pull/8756): the agent
    writes the trace, calls it, and the process still dies of SIGTERM."""
    out = env.out("handled_app_reraise")
    command = [env.app, "loop", "idle", "reraise"]
    extra = dict(HANDLED, PROFAGENT_OUTPUT_DIR=out)
    agent = run_until_signal(env, command, extra, signal.SIGTERM, env.agent)
    plain = run_until_signal(env, command, extra, signal.SIGTERM, None)
    expect_unchanged(agent, plain)
    expect(agent.returncode == -signal.SIGTERM, f"status {agent.returncode}")
    expect("own handler" in agent.stdout, f"the program's handler did not run: {agent.stdout!r}")
    expect(flushed_at(agent) == ["SIGTERM"], f"flushes: {flushed_at(agent)}")
    kernels = trace_with_kernels(out)
    return f"own handler ran, status {agent.returncode} as without the agent, trace with {kernels} kernels"


def handled_app_exit_case(when):
    """The program's own SIGTERM handler calls exit(3): status 3 as without the agent. `late`
    (installed after the first CUDA call, so it replaces the agent's): the trace is written by
    the normal exit handler; `early` (before it): the agent writes the trace, then calls it."""
    def case(env):
        out = env.out(f"handled_app_exit_{when}")
        command = [env.app, "loop", "idle", when]
        extra = dict(HANDLED, PROFAGENT_OUTPUT_DIR=out)
        agent = run_until_signal(env, command, extra, signal.SIGTERM, env.agent)
        plain = run_until_signal(env, command, extra, signal.SIGTERM, None)
        expect_unchanged(agent, plain)
        expect(agent.returncode == 3, f"status {agent.returncode}, the handler calls exit(3)")
        wanted = ["exit"] if when == "late" else ["SIGTERM"]
        expect(flushed_at(agent) == wanted, f"flushes: {flushed_at(agent)}, expected {wanted}")
        kernels = trace_with_kernels(out)
        return f"status 3 with and without the agent, trace written at {wanted[0]} with {kernels} kernels"
    return case


def case_handled_chained(env):
    """A handler installed BEFORE the agent's (Python's SIGTERM handler, then the agent loaded
    with dlopen): the agent writes the trace, then calls it; it exits with status 3."""
    out = env.out("handled_chained")
    script = ("import ctypes, signal, sys, time\n"
              "signal.signal(signal.SIGTERM, lambda *a: sys.exit(3))\n"
              f"ctypes.CDLL({env.agent!r}, mode=ctypes.RTLD_GLOBAL)\n" + py_runtime(env) +
              "p = ctypes.c_void_p()\n"
              "rt.cudaMalloc(ctypes.byref(p), 256); rt.cudaFree(p)\n"
              "print('recording', flush=True)\n"
              "while True: time.sleep(0.05)\n")
    command = ["/usr/bin/python3", "-c", script]
    agent = run_until_signal(env, command, dict(HANDLED, PROFAGENT_OUTPUT_DIR=out), signal.SIGTERM, None)
    expect(agent.returncode == 3, f"status {agent.returncode}: {agent.stderr[-400:]!r}")
    expect(flushed_at(agent) == ["SIGTERM"], f"flushes: {flushed_at(agent)}")
    one_valid_trace(out, {"cudaMalloc": 1, "cudaFree": 1})
    return "Python's own SIGTERM handler ran after the trace was written: status 3"


def case_handled_python(env):
    """A Python program (as a torchrun worker): CPython has no SIGTERM handler, so the agent's
    runs: trace written, death by SIGTERM as without the agent. CPython installs its SIGINT
    handler at start-up, before the agent's (installed at the first CUDA call), which chains it:
    trace written, then KeyboardInterrupt with its traceback, as without the agent."""
    script = (py_runtime(env) + "import time\n"
              "p = ctypes.c_void_p()\n"
              "rt.cudaMalloc(ctypes.byref(p), 256); rt.cudaFree(p)\n"
              "print('recording', flush=True)\n"
              "while True: time.sleep(0.05)\n")
    command = ["/usr/bin/python3", "-c", script]
    notes = []
    for sig, flushed in ((signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT")):
        out = env.out(f"handled_python_{sig.name}")
        extra = dict(HANDLED, PROFAGENT_OUTPUT_DIR=out)
        agent = run_until_signal(env, command, extra, sig, env.agent)
        plain = run_until_signal(env, command, extra, sig, None)
        # The traceback's line number is where the interpreter was when the signal landed (the
        # print or the loop): the one thing that may differ.
        for run_ in (agent, plain):
            run_.stderr = re.sub(r", line \d+,", ", line N,", run_.stderr)
        expect_unchanged(agent, plain, f"{sig.name}: ")
        expect(flushed_at(agent) == [flushed], f"{sig.name}: flushes {flushed_at(agent)}, expected [{flushed!r}]")
        one_valid_trace(out, {"cudaMalloc": 1, "cudaFree": 1})
        notes.append(f"{sig.name}: status {agent.returncode}, written at {flushed}")
    return "; ".join(notes)


def case_handled_dispositions(env):
    """What the program sees in main: default without the variable, the agent's handler with
    it, and an inherited SIG_IGN left ignored."""
    seen = {}
    for label, extra, start in (("unset", {}, signal.SIG_DFL), ("on", HANDLED, signal.SIG_DFL),
                                ("on_ignored", HANDLED, signal.SIG_IGN)):
        run_env = clean_environment()
        run_env.update(dict(extra, PROFAGENT_OUTPUT_DIR=env.out("dispositions"),
                            LD_PRELOAD=env.agent, LD_LIBRARY_PATH=env.devsim))
        completed = subprocess.run([env.app, "dispositions"], env=run_env, capture_output=True, timeout=60,
                                   preexec_fn=reset_signals(start))
        expect(completed.returncode == 0, f"{label}: status {completed.returncode}")
        seen[label] = completed.stdout.decode().strip()
    wanted = {"unset": "SIGTERM default SIGINT default", "on": "SIGTERM handler SIGINT handler",
              "on_ignored": "SIGTERM ignored SIGINT ignored"}
    expect(seen == wanted, f"dispositions {seen}, expected {wanted}")
    return "; ".join(f"{k}: {v}" for k, v in seen.items())


def case_live_threads(env):
    out = env.out("live_threads")
    agent, plain = both(env, [env.app, "live_threads"], {"PROFAGENT_OUTPUT_DIR": out}, timeout=60)
    expect_unchanged(agent, plain)
    document = one_valid_trace(out, {"cudaMalloc": 1})
    syncs = len(events(document, "cudaStreamSynchronize"))
    return f"exit(5) with 4 threads calling CUDA: trace valid ({syncs} syncs recorded)"


def py_runtime(env):
    """The start of a Python program that calls CUDA the way Python programs do: through a
    compiled extension linked against the runtime (libpy_cuda_ext.so, next to the programs),
    whose calls meet the agent's hooks. `rt.cudaMalloc(...)` calls its `ext_cudaMalloc`.
    (ctypes.CDLL('libcudart.so.13').f, or ctypes.CDLL(None).f, looks f up unversioned and so
    reaches the runtime itself, past LD_PRELOAD: see the README's limits.)"""
    extension = os.path.join(os.path.dirname(env.app), "libpy_cuda_ext.so")
    return ("import ctypes\n"
            f"_ext = ctypes.CDLL({extension!r})\n"
            "class _Runtime:\n"
            "    def __getattr__(self, name):\n"
            "        return getattr(_ext, 'ext_' + name)\n"
            "rt = _Runtime()\n")


def case_python_os_exit(env):
    """os._exit from Python after a hooked call through ctypes."""
    out = env.out("python_os_exit")
    script = (py_runtime(env) + "import os\n"
              "p = ctypes.c_void_p()\n"
              "print(rt.cudaMalloc(ctypes.byref(p), 256), rt.cudaFree(p), flush=True)\n"
              "os._exit(3)\n")
    agent, plain = both(env, ["/usr/bin/python3", "-c", script], {"PROFAGENT_OUTPUT_DIR": out})
    expect_unchanged(agent, plain)
    expect(agent.returncode == 3, f"status {agent.returncode}")
    one_valid_trace(out, {"cudaMalloc": 1, "cudaFree": 1})
    return "os._exit(3): trace written, status unchanged"


# ---- fork -------------------------------------------------------------------------------------

def child_traces(out_dir, parent_pid_file):
    return [p for p in traces(out_dir) if p != parent_pid_file]


def fork_case(policy):
    def case(env):
        out = env.out(f"fork_{policy}")
        extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_CHILD": policy, "PROFAGENT_CUPTI": "off"}
        agent = run([env.app, "fork_stress", "50"], extra, env.agent, env.devsim, timeout=300)
        expect(agent.returncode == 0, f"status {agent.returncode}: {agent.stdout[-300:]} {agent.stderr[-300:]}")
        made = expected(agent.stdout)["cudaStreamSynchronize"]
        documents = {path: load(path) for path in traces(out)}
        parents = [p for p, d in documents.items() if events(d, "cudaStreamSynchronize")]
        expect(len(parents) == 1, f"no single parent trace among {list(documents)}")
        parent = documents[parents[0]]
        got = len(events(parent, "cudaStreamSynchronize"))
        drops = parent.get("profagent_drops", {}).get("host_events", 0)
        expect(got + drops == made, f"parent trace: {got} + {drops} dropped != {made} calls made")
        expect(not events(parent, "child"), "a child's range is in the parent's trace")
        children = [d for p, d in documents.items() if p != parents[0]]
        if policy == "off":
            expect(not children, f"PROFAGENT_CHILD=off but {len(children)} child traces were written")
        else:
            expect(len(children) == 50, f"PROFAGENT_CHILD=light: {len(children)} child traces, expected 50")
            for child in children:
                own = len(events(child, "child"))
                inherited = len(events(child)) - own
                expect(own == 10 and inherited == 0,
                       f"a child trace holds {own} own ranges and {inherited} parent events")
        expect(not leftovers(out), f"left behind: {leftovers(out)}")
        return f"50 forks under 8 recording threads: parent {got}+{drops} dropped, {len(children)} child files"
    return case


def case_python_multiprocessing(env):
    out = env.out("python_multiprocessing")
    script = (py_runtime(env) + "import multiprocessing as mp\n"
              "def work(i):\n"
              "    return rt.cudaStreamSynchronize(None) + i * i\n"
              "if __name__ == '__main__':\n"
              "    print(rt.cudaDeviceSynchronize())\n"
              "    with mp.get_context('fork').Pool(4) as pool:\n"
              "        print(sum(pool.map(work, range(100))))\n")
    agent, plain = both(env, ["/usr/bin/python3", "-c", script], {"PROFAGENT_OUTPUT_DIR": out}, timeout=120)
    expect_unchanged(agent, plain)
    parent = [load(p) for p in traces(out) if events(load(p), "cudaDeviceSynchronize")]
    expect(len(parent) == 1, f"no single parent trace in {os.listdir(out)}")
    expect(not leftovers(out), f"left behind: {leftovers(out)}")
    return f"pool of 4 (fork): result unchanged, {len(traces(out))} trace files"


def case_torch_dataloader(env):
    out = env.out("torch_dataloader")
    script = (py_runtime(env) + "import torch\n"
              "from torch.utils.data import DataLoader, Dataset\n"
              "class D(Dataset):\n"
              "    def __len__(self): return 64\n"
              "    def __getitem__(self, i):\n"
              "        rt.cudaStreamSynchronize(None)\n"
              "        return torch.full((4,), float(i))\n"
              "rt.cudaDeviceSynchronize()\n"
              "total = sum(float(b.sum()) for b in DataLoader(D(), batch_size=8, num_workers=4))\n"
              "print(total)\n")
    if subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode != 0:
        return "SKIP: /usr/bin/python3 has no torch"
    agent, plain = both(env, ["/usr/bin/python3", "-c", script], {"PROFAGENT_OUTPUT_DIR": out}, timeout=300)
    expect_unchanged(agent, plain)
    expect(agent.returncode == 0, f"status {agent.returncode}: {agent.stderr[-400:]}")
    for path in traces(out):
        load(path)
    expect(not leftovers(out), f"left behind: {leftovers(out)}")
    return f"DataLoader(num_workers=4): result unchanged, {len(traces(out))} trace files"


# ---- threads ----------------------------------------------------------------------------------

def count_case(name, args, extra):
    def case(env):
        out = env.out(name)
        env_extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_CUPTI": "off"}
        env_extra.update(extra)
        agent = run([env.app] + args, env_extra, env.agent, env.devsim, timeout=600)
        expect(agent.returncode == 0, f"status {agent.returncode}: {agent.stderr[-400:]}")
        made = expected(agent.stdout)["cudaStreamSynchronize"]
        document = one_valid_trace(out)
        got = len(events(document, "cudaStreamSynchronize"))
        drops = document["profagent_drops"]["host_events"]
        expect(got + drops == made, f"{got} recorded + {drops} dropped != {made} calls made")
        if drops:
            reported = [line for line in agent.agent_lines() if "drop" in line.lower()]
            expect(reported, "events were dropped but nothing said so on stderr")
        return f"{made} calls: {got} recorded + {drops} dropped"
    return case


# ---- bad configuration ------------------------------------------------------------------------

VARIABLES = ["OUTPUT_DIR", "SCHEDULE", "SKIP_FIRST", "WAIT", "WARMUP", "ACTIVE", "REPEAT", "STEP_ON",
             "ACTIVITIES", "RECORD_SHAPES", "PROFILE_MEMORY", "WITH_STACK", "SORT_BY", "GROUP_BY",
             "ROW_LIMIT", "LOG_LEVEL", "CUPTI", "CUPTI_LIB", "BUFFER_MB", "CHILD", "HANDLE_SIGNALS"]
BAD_VALUES = {"empty": b"", "garbage": b"#%!garbage?", "negative": b"-7", "huge": b"9" * 4000,
              "non_utf8": b"\xff\xfe\x80bad"}


def case_bad_config(env):
    """Every variable x every bad value: the program's output and status unchanged, at most one
    message naming the variable, never the value, and never a crash."""
    baseline = run([env.app, "work", "1", "6"], {}, None, env.devsim)
    failures = []
    for variable in VARIABLES:
        for label, value in BAD_VALUES.items():
            out = env.out("bad_config")
            extra = {"PROFAGENT_OUTPUT_DIR": out}
            name = "PROFAGENT_" + variable
            if variable == "OUTPUT_DIR":
                extra = {}
            env_bytes = {k.encode(): v.encode() for k, v in clean_environment().items()}
            env_bytes.update({k.encode(): v.encode() for k, v in extra.items()})
            env_bytes[name.encode()] = value
            env_bytes[b"LD_PRELOAD"] = env.agent.encode()
            env_bytes[b"LD_LIBRARY_PATH"] = env.devsim.encode()
            cwd = tempfile.mkdtemp(dir=env.work)  # a relative or odd OUTPUT_DIR lands here
            completed = subprocess.run([env.app, "work", "1", "6"], env=env_bytes, capture_output=True,
                                       timeout=60, cwd=cwd)
            shutil.rmtree(cwd, ignore_errors=True)
            agent = Run(type("C", (), {"stdout": completed.stdout.decode("utf-8", "replace"),
                                       "stderr": completed.stderr.decode("utf-8", "replace"),
                                       "returncode": completed.returncode}))
            where = f"{name}={label}: "
            try:
                expect_unchanged(agent, baseline, where)
                mentions = [line for line in agent.agent_lines() if name in line]
                expect(len(mentions) <= 1, f"{where}{len(mentions)} messages: {mentions}")
                # Paths the user chose are shown where files go; no other value is ever echoed.
                expect(variable in ("OUTPUT_DIR", "CUPTI_LIB") or len(value) < 8 or
                       value.decode("latin-1") not in agent.stderr, f"{where}the value was echoed")
                last = agent.agent_lines()[-1] if agent.agent_lines() else ""
                expect(last.startswith("[profagent] wrote"), f"{where}no closing line: {last!r}")
            except Failed as failure:
                failures.append(str(failure))
    expect(not failures, f"{len(failures)} bad-config cases failed:\n" + "\n".join(failures[:10]))
    return f"{len(VARIABLES)} variables x {len(BAD_VALUES)} bad values: output and status unchanged"


# ---- output safety ----------------------------------------------------------------------------

def safety_run(env, out, extra=None, wrapper=None):
    env_extra = {"PROFAGENT_OUTPUT_DIR": out}
    env_extra.update(extra or {})
    command = (wrapper or []) + [env.app, "work", "2", "0"]
    agent = run(command, env_extra, env.agent, env.devsim)
    plain = run(command, env_extra, None, env.devsim)
    expect_unchanged(agent, plain)
    return agent


def closing_line(agent):
    lines = agent.agent_lines()
    return lines[-1] if lines else ""


def case_output_safety(env):
    base = env.out("output_safety")
    notes = []
    # An existing directory we may not write to (root ignores modes: skip that part as root).
    locked = os.path.join(base, "locked")
    os.makedirs(locked)
    os.chmod(locked, 0o500)
    if os.geteuid() != 0:
        agent = safety_run(env, locked)
        expect(closing_line(agent).startswith("[profagent] wrote nothing: "), f"unwritable: {closing_line(agent)!r}")
        expect(os.listdir(locked) == [], "files appeared in the read-only directory")
        notes.append("unwritable")
    os.chmod(locked, 0o700)
    # A missing parent: created.
    deep = os.path.join(base, "missing", "parent", "dir")
    safety_run(env, deep)
    one_valid_trace(deep)
    notes.append("missing parent created")
    # Existing files and planted symlinks where the agent will write: never replaced, never
    # followed; the trace goes to the next free name.
    planted = os.path.join(base, "planted")
    os.makedirs(planted)
    canary = os.path.join(base, "canary")
    with open(canary, "w") as f:
        f.write("canary")
    agent = safety_run(env, planted)
    first = traces(planted)
    expect(len(first) == 1, f"first run: {os.listdir(planted)}")
    host = os.path.basename(first[0]).split(".")[0]
    # A pid cannot be predicted, but `exec` keeps it: the shell plants symlinks under the
    # names its own pid will get, then becomes the program.
    exec_dir = os.path.join(base, "planted_exec")
    os.makedirs(exec_dir)
    script = (f"for n in {host}.$$.w1.trace.json {host}.$$.w1.table.txt {host}.$$.w1.summary.ndjson; do "
              f"ln -s {canary} {exec_dir}/$n; done; exec {env.app} work 2 0")
    agent = run(["/bin/sh", "-c", script], {"PROFAGENT_OUTPUT_DIR": exec_dir}, env.agent, env.devsim)
    expect(agent.returncode == 0, f"planted symlinks: status {agent.returncode}")
    with open(canary) as f:
        expect(f.read() == "canary", "the canary behind a planted symlink was written")
    links = [n for n in os.listdir(exec_dir) if os.path.islink(os.path.join(exec_dir, n))]
    expect(len(links) == 3, f"planted symlinks were replaced: {os.listdir(exec_dir)}")
    written = [p for p in traces(exec_dir) if not os.path.islink(p)]
    expect(len(written) == 1, f"no trace beside the planted symlinks: {os.listdir(exec_dir)}")
    load(written[0])
    notes.append("planted symlinks untouched, trace under a new name")
    # The output directory itself is a symlink: refused.
    link_dir = os.path.join(base, "dir_link")
    os.symlink(planted, link_dir)
    before = sorted(os.listdir(planted))
    agent = safety_run(env, link_dir)
    expect(sorted(os.listdir(planted)) == before, "wrote through a symlinked output directory")
    expect("symbolic link" in closing_line(agent), f"symlinked dir: {closing_line(agent)!r}")
    notes.append("symlinked dir refused")
    # Disk full: RLIMIT_FSIZE with SIGXFSZ ignored (writes fail with EFBIG).
    full = os.path.join(base, "full")
    os.makedirs(full)
    wrapper = ["/usr/bin/python3", "-c",
               "import os, resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
               "resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000)); os.execv(sys.argv[1], sys.argv[1:])"]
    agent = safety_run(env, full, wrapper=wrapper)
    expect(closing_line(agent).startswith("[profagent] wrote nothing: ") or "cannot write" in agent.stderr,
           f"disk full: {closing_line(agent)!r}")
    expect(not traces(full), f"a trace was left on a full disk: {os.listdir(full)}")
    expect(not leftovers(full), f"half-written files left: {leftovers(full)}")
    notes.append("disk full: nothing half-written")
    return ", ".join(notes)


# ---- hostile names ----------------------------------------------------------------------------

def case_hostile_names(env):
    out = env.out("hostile")
    agent, plain = both(env, [env.app, "hostile"], {"PROFAGENT_OUTPUT_DIR": out})
    expect_unchanged(agent, plain)
    document = one_valid_trace(out)
    wanted = expected(agent.stdout)["kernels"]
    kernels = [e for e in events(document) if e.get("cat") == "kernel"]
    expect(len(kernels) == wanted, f"{len(kernels)} kernel records, {wanted} launched")
    ranges = [e for e in events(document) if e.get("cat") == "user_annotation"]
    expect(len(ranges) == wanted, f"{len(ranges)} hostile ranges recorded, {wanted} made")
    names = {e["name"] for e in kernels}
    expect(any(n.startswith("quote\"kernel") for n in names), f"quotes lost: {sorted(names)[:4]}")
    expect(any(len(n) >= 64 * 1024 for n in names) or any("K" * 1000 in n for n in names), "the 64 KiB name is gone")
    for path in glob.glob(os.path.join(out, "*.ndjson")):
        with open(path, "rb") as f:
            for line in f.read().decode("utf-8").splitlines():
                json.loads(line)
    return f"{len(kernels)} hostile kernel names, trace and summary valid JSON"


# ---- CUPTI faults -----------------------------------------------------------------------------

def cupti_case(label, extra, mode):
    def case(env):
        out = env.out("cupti_" + label)
        env_extra = {"PROFAGENT_OUTPUT_DIR": out}
        env_extra.update(extra)
        agent, plain = both(env, [env.app, "hostile"], env_extra)
        expect_unchanged(agent, plain)
        document = one_valid_trace(out)
        kernels = [e for e in events(document) if e.get("cat") == "kernel"]
        cupti_lines = [line for line in agent.agent_lines()
                       if "cupti" in line.lower() and not line.startswith("[profagent] wrote")]
        if mode == "host_only":
            expect(not kernels, f"{len(kernels)} device records although CUPTI is {label}")
            expect(events(document, "cudaLaunchKernel"), "host events lost in host-only mode")
            expect(len(cupti_lines) == 1, f"CUPTI's refusal should be reported once: {cupti_lines}")
        else:
            drops = document["profagent_drops"]
            lost = drops["device_records"]
            expect(lost > 0, f"no dropped device records counted: {drops}")
            expect(len(kernels) + lost >= expected(agent.stdout)["kernels"], "records vanished uncounted")
            said = [line for line in agent.agent_lines() if "device records dropped" in line]
            expect(len(said) == 1, f"the drops should be said once: {said}")
        return f"{label}: {len(kernels)} device records, {len(cupti_lines)} CUPTI line(s)"
    return case


# ---- not a CUDA process -----------------------------------------------------------------------

def case_not_cuda(env):
    out = env.out("not_cuda")
    commands = [["/bin/true"], ["/bin/sh", "-c", "echo a b c | tr a-z A-Z | wc -c; exit 3"],
                ["/usr/bin/python3", "-c", "pass"], ["/bin/false"]]
    for command in commands:
        agent, plain = both(env, command, {"PROFAGENT_OUTPUT_DIR": out})
        expect((agent.stdout, agent.stderr, agent.returncode) == (plain.stdout, plain.stderr, plain.returncode),
               f"{command}: output changed: {agent.stderr!r}")
        expect(os.listdir(out) == [], f"{command}: wrote {os.listdir(out)}")
    return f"{len(commands)} commands: no files, no noise"


# ---- twice loaded / secure mode ---------------------------------------------------------------

def case_twice_loaded(env):
    out = env.out("twice_preload")
    agent = run([env.app, "work", "3", "0"], {"PROFAGENT_OUTPUT_DIR": out},
                f"{env.agent}:{env.agent}", env.devsim)
    expect(agent.returncode == 0, f"status {agent.returncode}")
    one_valid_trace(out, {"cudaMalloc": 3, "cudaFree": 3})
    out2 = env.out("twice_dlopen")
    script = (f"import ctypes\nctypes.CDLL({env.agent!r})\n" + py_runtime(env) +
              "p = ctypes.c_void_p()\n"
              "rt.cudaMalloc(ctypes.byref(p), 256); rt.cudaFree(p)\n")
    agent = run(["/usr/bin/python3", "-c", script], {"PROFAGENT_OUTPUT_DIR": out2}, env.agent, env.devsim)
    expect(agent.returncode == 0, f"preloaded + dlopen'ed: status {agent.returncode} {agent.stderr[-300:]}")
    one_valid_trace(out2, {"cudaMalloc": 1, "cudaFree": 1})
    return "listed twice and preloaded+dlopen'ed: each call recorded once"


def case_secure_mode(env):
    """AT_SECURE: a setgid copy of the program run by a non-root user. ld.so then preloads only
    from system directories, so the agent is put in one (not writable by the user)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return "SKIP: needs root and setpriv to make a setgid binary run by another user"
    base = tempfile.mkdtemp(prefix="profagent_secure_", dir="/tmp")
    os.chmod(base, 0o755)
    app = os.path.join(base, "reliability_app")
    shutil.copy(env.app, app)
    os.chown(app, 0, 0)
    os.chmod(app, 0o2755)  # setgid root
    libdir = "/usr/lib/x86_64-linux-gnu"
    agent_copy = os.path.join(libdir, "libprofagent_securetest.so")
    shutil.copy(env.agent, agent_copy)
    os.chmod(agent_copy, 0o4755)  # ld.so preloads in secure mode only set-user-ID libraries
    out = os.path.join(base, "out")
    os.makedirs(out)
    os.chmod(out, 0o777)
    try:
        env_extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_LOG_LEVEL": "debug", "LD_LIBRARY_PATH": env.devsim}
        # LD_PRELOAD is set by `env` after setpriv, so only the setgid program gets the agent.
        setpriv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                   "env", "LD_PRELOAD=libprofagent_securetest.so"]
        command = setpriv + [app, "work", "2", "0"]
        # LD_LIBRARY_PATH is ignored in secure mode too: the app meets the real runtime (no
        # driver) — what matters is that the agent is loaded and stays silent.
        agent = run(command, env_extra)
        plain = run([w for w in command if not w.startswith("LD_PRELOAD=")], env_extra)
        expect_unchanged(agent, plain)
        expect(not agent.agent_lines(), f"the agent spoke in secure mode: {agent.agent_lines()}")
        expect(os.listdir(out) == [], f"files written in secure mode: {os.listdir(out)}")
        loaded = run(setpriv + [app, "agent_loaded"], env_extra)
        expect("agent loaded: yes" in loaded.stdout, f"the agent was not loaded, the case proves nothing: {loaded.stdout!r}")
        expect(not loaded.agent_lines() and os.listdir(out) == [], "the agent acted in secure mode")
    finally:
        os.unlink(agent_copy)
        shutil.rmtree(base, ignore_errors=True)
    return "setgid binary: agent loaded, silent, nothing written, output unchanged"


CASES = {
    "exit_return": exit_case("return", 3),
    "exit_exit": exit_case("exit", 4),
    "exit__exit": exit_case("_exit", 5),
    "exit__Exit": exit_case("_Exit", 6),
    "exit__exit_real_cudart": exit_case("_exit", 5, real_runtime=True),
    "exit_exit_real_cudart": exit_case("exit", 4, real_runtime=True),
    "exit_exec": case_exec,
    "exit_sigterm": signal_case("SIGTERM", False),
    "exit_sigint": signal_case("SIGINT", False),
    "exit_sigterm_app_handler": signal_case("SIGTERM", True),
    "exit_sigterm_handled": handled_signal_case("SIGTERM"),
    "exit_sigint_handled": handled_signal_case("SIGINT"),
    "exit_sigterm_handled_big_trace": case_handled_big_trace,
    "exit_sigterm_handled_second_signal": case_handled_second_signal,
    "exit_sigterm_handled_app_exit": handled_app_exit_case("late"),
    "exit_sigterm_handled_app_exit_chained": handled_app_exit_case("early"),
    "exit_sigterm_handled_app_reraise": case_handled_app_reraise,
    "exit_sigterm_handled_chained": case_handled_chained,
    "exit_signals_handled_python": case_handled_python,
    "exit_signals_handled_dispositions": case_handled_dispositions,
    "exit_live_threads": case_live_threads,
    "exit_python_os_exit": case_python_os_exit,
    "fork_stress_light": fork_case("light"),
    "fork_stress_off": fork_case("off"),
    "fork_python_multiprocessing": case_python_multiprocessing,
    "fork_torch_dataloader": case_torch_dataloader,
    "threads_64x100k": count_case("threads_64", ["threads", "64", "100000"], {"PROFAGENT_BUFFER_MB": "16"}),
    "threads_1000_short": count_case("threads_short", ["short_threads", "1000", "10"], {}),
    "bad_config": case_bad_config,
    "output_safety": case_output_safety,
    "hostile_names": case_hostile_names,
    "cupti_unavailable": cupti_case("unavailable", {"DEVSIM_CUPTI": "unavailable"}, "host_only"),
    "cupti_busy": cupti_case("busy", {"DEVSIM_CUPTI": "busy"}, "host_only"),
    "cupti_drop_every": cupti_case("drops", {"DEVSIM_CUPTI_DROP_EVERY": "3"}, "drops"),
    "cupti_fail_enable": cupti_case("fail_enable", {"DEVSIM_CUPTI_FAIL": "cuptiActivityEnable=CUPTI_ERROR_UNKNOWN"},
                                    "host_only"),
    "not_a_cuda_process": case_not_cuda,
    "twice_loaded": case_twice_loaded,
    "secure_mode": case_secure_mode,
}


def all_cases():
    """This file's cases and those of every tests/reliability/cases_*.py (a module-level CASES
    dict each), so that a topic's cases live in a file of their own."""
    import importlib
    found = dict(CASES)
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    # Case modules `import reliability` for the helpers above: let them share this very module
    # (run as __main__), so that its Failed is the one main() catches.
    sys.modules.setdefault("reliability", sys.modules[__name__])
    for path in sorted(glob.glob(os.path.join(here, "cases_*.py"))):
        module = importlib.import_module(os.path.splitext(os.path.basename(path))[0])
        clash = set(found) & set(module.CASES)
        if clash:
            raise SystemExit(f"reliability: case names defined twice: {sorted(clash)}")
        found.update(module.CASES)
    return found


def main():
    if sys.argv[1:] == ["--list"]:  # CMake reads the case names from here (one per line)
        print("\n".join(sorted(all_cases())))
        return 0
    cases = all_cases()
    parser = argparse.ArgumentParser()
    for option in ("agent", "app", "devsim", "cudart", "work"):
        parser.add_argument("--" + option, required=True)
    parser.add_argument("case", choices=sorted(cases))
    options = parser.parse_args()
    os.makedirs(options.work, exist_ok=True)
    try:
        summary = cases[options.case](Env(options))
    except Failed as failure:
        print(f"FAILED reliability.{options.case}: {failure}")
        return 1
    print(f"ok reliability.{options.case}: {summary}")
    remove_output_of_passed_case(options.work)
    return 0



if __name__ == "__main__":
    sys.exit(main())
