#!/usr/bin/env python3
"""profagent overhead benchmarks against a peer. Prints four tables:

  1. time added per intercepted call: agent absent / loaded and idle / recording host-only /
     recording with (devsim) CUPTI — CPU and wall ns per call (median of runs) and callgrind
     instructions per call (the noise-free figure);
  2. a launch-bound workload (>= 1 M launches of near-zero kernels, devsim host cost model on):
     slowdown with the agent recording everything, next to published peer figures;
  3. the same workload traced by uftrace (library-call tracing, the reference preload tracer):
     added time and trace bytes per event, side by side;
  4. trace writing: events/s and bytes/event of the exit flush, memory per buffered event,
     time to flush 1 M events at exit, plus the component benchmarks' own figures.

Never a pass/fail timed test: it prints figures and their targets. The exit status is non-zero
only when a section could not run (a program failed or printed nothing to parse).
Run it through scripts/bench.sh (builds first); CTest `bench.overhead_smoke` runs it with --smoke.
The environment variables of each mode are printed, so any row can be reproduced by hand.
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

CALLS = {"profiler": "cudaProfilerStart", "launch": "kernel<<<1,1>>>"}  # nvcc 13: __cudaLaunchKernel
MODES = ["absent", "idle", "idle_cupti", "host", "cupti"]
MODE_TITLES = {
    "absent": "agent absent",
    "idle": "loaded, idle",
    "idle_cupti": "idle, CUPTI paused",
    "host": "recording host-only",
    "cupti": "recording + CUPTI",
    "uftrace": "uftrace record",
}
# Idle = the real not-recording path of the hooks (record state Off): a step schedule whose
# steps are all skipped. The program never marks a step, so it stays in step 0 forever.
IDLE_ENV = {"PROFAGENT_SKIP_FIRST": "1000000000"}
# Launch-bound workload: host cost model on (a launch spins 3 us like on hardware), kernels
# of 0.5 us so the device never is the bottleneck.
LAUNCH_BOUND_ENV = {"DEVSIM_HOST_COST_SCALE": "1", "DEVSIM_KERNEL_MIN_NS": "500",
                    "DEVSIM_KERNEL_WAVE_NS": "500"}
# Per-call micro-benchmarks: no modelled host cost, so the agent's share is visible.
MICRO_ENV = dict(LAUNCH_BOUND_ENV, DEVSIM_HOST_COST_SCALE="0")
PEER_FIGURES = [("Nsight Systems (published, CPU-bound workloads)", "2.3x - 3.3x"),
                ("Triton Proton (published, CPU-bound workloads)", "1.03x - 1.44x")]


class BenchError(RuntimeError):
    pass


class Runner:
    """Runs bench_calls in one mode and returns its parsed figures."""

    def __init__(self, args):
        self.args = args
        self.counter = 0
        self.idle_at_exit = False  # see probe_idle()
        self.added_cpu_ns = {}     # (call, mode) -> CPU ns added per call (section 1 medians)
        self.absent_cpu_ns = {}    # call -> CPU ns per call without the agent (section 1)
        self.instructions = {}     # (call, mode) -> callgrind counts per call (section 1)

    def env(self, mode, extra):
        env = dict(os.environ)
        for key in [k for k in env if k.startswith("PROFAGENT_") or k.startswith("DEVSIM_")]:
            del env[key]
        env.pop("LD_PRELOAD", None)
        env["LD_LIBRARY_PATH"] = self.args.devsim + (":" + env["LD_LIBRARY_PATH"]
                                                     if env.get("LD_LIBRARY_PATH") else "")
        env.update(mode_env(mode, self.args.agent))
        env.update(extra)
        return env

    def output_dir(self, mode):
        self.counter += 1
        path = os.path.join(self.args.work, "out", f"{mode}-{self.counter}")
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def run(self, mode, call, calls, sync_every=0, extra=None, wrapper=None):
        out_dir = self.output_dir(mode)
        env = self.env(mode, dict(extra or {}, PROFAGENT_OUTPUT_DIR=out_dir))
        command = (wrapper or []) + [self.args.program, call, str(calls), str(sync_every)]
        if mode in ("idle", "idle_cupti") and self.idle_at_exit:
            command.append("at-exit")
        result = run_timed(command, env, out_dir)
        result.update(parse_figures(result["stdout"], command))
        result.update(read_agent_output(out_dir))
        result["out_dir"] = out_dir
        return result


def mode_env(mode, agent):
    if mode in ("absent", "uftrace"):
        return {}
    env = {"LD_PRELOAD": agent, "PROFAGENT_LOG_LEVEL": "warn"}
    if mode in ("idle", "idle_cupti"):
        env.update(IDLE_ENV)
    env["PROFAGENT_CUPTI"] = "off" if mode in ("host", "idle") else "on"
    return env


def run_timed(command, env, out_dir):
    """Runs a command; returns its stdout, end time (CLOCK_MONOTONIC ns) and total CPU ns."""
    with open(os.path.join(out_dir, "stdout"), "w+") as out, \
         open(os.path.join(out_dir, "stderr"), "w+") as err:
        start_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err, cwd=out_dir)
        _, status, usage = os.wait4(process.pid, 0)
        end_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise BenchError(f"{' '.join(command)} exited with {process.returncode}:\n{stderr[-2000:]}")
    return {"stdout": stdout, "stderr": stderr, "end_ns": end_ns, "process_wall_ns": end_ns - start_ns,
            "total_cpu_ns": int((usage.ru_utime + usage.ru_stime) * 1e9), "peak_rss_kb": usage.ru_maxrss,
            "total_sys_ns": int(usage.ru_stime * 1e9), "total_minflt": usage.ru_minflt}


def parse_figures(stdout, command):
    match = re.search(r"^calls=\d+ .*$", stdout, re.M)
    if match is None:
        raise BenchError(f"{' '.join(command)} printed no figures:\n{stdout[-2000:]}")
    return {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", match.group(0))}


def read_agent_output(out_dir):
    """Host/device record counts from the agent's summaries, bytes and events of its traces."""
    found = {"host_records": 0, "device_records": 0, "trace_bytes": 0, "trace_events": 0,
             "files": 0, "dir_bytes": 0, "device_drops": 0}
    for path in glob.glob(os.path.join(out_dir, "*.*")):  # .trace.json, .table.txt, .summary.ndjson
        found["dir_bytes"] += os.path.getsize(path)
        if not path.endswith("json"):
            continue
        with open(path, "rb") as f:
            head = f.read(4096)
        found["files"] += 1
        if b'"profagent-summary"' in head:
            text = open(path, encoding="utf-8", errors="replace").read()
            for key in ("host_records", "device_records"):  # the last: drops{} has one too
                counts = re.findall(rf'"{key}":(\d+)', text)
                found[key] += int(counts[-1]) if counts else 0
            drops = re.search(r'"drops":\{[^}]*"device_records":(\d+)', text)
            found["device_drops"] += int(drops.group(1)) if drops else 0
        elif b'"traceEvents"' in head or b'"schemaVersion"' in head:
            found["trace_bytes"] += os.path.getsize(path)
            found["trace_events"] += count_in_file(path, b'"ph":')
    return found


def count_in_file(path, needle):
    """Occurrences of `needle` (every trace event has exactly one "ph" key), streamed."""
    count, tail = 0, b""
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            block = tail + chunk
            count += block.count(needle)
            tail = block[-(len(needle) - 1):]
            count -= tail.count(needle)
    return count


def median(values):
    return statistics.median(values) if values else float("nan")


def fmt(value, digits=1):
    if value is None or value != value:
        return "n/a"
    return f"{value:,.{digits}f}"


def print_table(title, header, rows, notes=()):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    print()
    print(title)
    line = "  ".join(str(h).rjust(w) if i else str(h).ljust(w) for i, (h, w) in enumerate(zip(header, widths)))
    print(line)
    print("-" * len(line))
    for row in rows:
        print("  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
    for note in notes:
        print("  " + note)
    sys.stdout.flush()


# ---- section 1 ------------------------------------------------------------------------------

def callgrind_ir_per_call(runner, mode, call, calls):
    """Instructions per call of bench_loop (the loop only), counted by callgrind: in total, in
    libprofagent.so itself and in libcupti (devsim's simulated CUPTI)."""
    if shutil.which("valgrind") is None:
        return None
    out_file = os.path.join(runner.args.work, f"callgrind.{mode}.{call}.out")
    wrapper = ["valgrind", "--tool=callgrind", "--toggle-collect=bench_loop",
               f"--callgrind-out-file={out_file}"]
    runner.run(mode, call, calls, runner.args.sync_every, extra=MICRO_ENV, wrapper=wrapper)
    by_object = callgrind_self_cost_by_object(out_file)
    def share(fragment):
        return sum(ir for ob, ir in by_object.items() if fragment in os.path.basename(ob)) / calls
    return {"total": sum(by_object.values()) / calls, "agent": share("libprofagent"),
            "cupti": share("libcupti")}


def callgrind_self_cost_by_object(path):
    """Self instructions per object file from a callgrind output (format: valgrind's
    callgrind-format docs). Cost lines after `calls=` are inclusive costs of a call: skipped."""
    names, cost, current, skip_next = {}, {}, "?", False
    with open(path) as f:
        for line in f:
            if line.startswith("ob="):
                current = resolve_compressed(line[3:].strip(), names)
            elif line.startswith("cob="):  # also defines compressed object names
                resolve_compressed(line[4:].strip(), names)
            elif line.startswith("calls="):
                skip_next = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if not skip_next:
                    fields = line.split()
                    cost[current] = cost.get(current, 0) + (int(fields[-1]) if len(fields) > 1 else 0)
                skip_next = False
    if not cost:
        raise BenchError(f"no instruction counts in {path}")
    return cost


def resolve_compressed(text, names):
    """`(id) name` defines a compressed name, `(id)` refers to it."""
    match = re.match(r"\((\d+)\)\s*(.*)", text)
    if match is None:
        return text
    if match.group(2):
        names[match.group(1)] = match.group(2)
    return names.get(match.group(1), text)


def probe_idle(runner):
    """Uses the schedule's idle steps if this build honours them; else the loop runs after the
    agent's exit flush (bench_calls at-exit), where hooks take the same not-recording path."""
    r = runner.run("idle", "profiler", 1000, extra={"DEVSIM_HOST_COST_SCALE": "0"})
    runner.idle_at_exit = r["host_records"] >= 1000
    if runner.idle_at_exit:
        return (f"idle: this build records during steps {env_text(IDLE_ENV)} skips (no step "
                "schedule yet), so idle was measured after the agent's exit flush (record state "
                "Off, the same hook path as an idle step: bench_calls ... at-exit).")
    return f"idle: every step skipped by the schedule ({env_text(IDLE_ENV)})."


def section_per_call(runner, args):
    rows, notes = [], [probe_idle(runner)]
    for call in args.call_kinds:
        timings = {mode: [] for mode in MODES}
        idle_records = 0
        for _ in range(args.runs):  # interleaved, so load changes hit every mode alike
            for mode in MODES:
                r = runner.run(mode, call, args.calls, args.sync_every, extra=MICRO_ENV)
                timings[mode].append((r["cpu_ns"] / r["calls"], r["wall_ns"] / r["calls"]))
                if mode in ("idle", "idle_cupti"):
                    idle_records = max(idle_records, r["host_records"])
        ir = {mode: callgrind_ir_per_call(runner, mode, call, args.cg_calls) for mode in MODES}
        rows += per_call_rows(call, timings, ir)
        base = median([t[0] for t in timings["absent"]])
        runner.absent_cpu_ns[call] = base
        for mode in MODES:
            runner.added_cpu_ns[(call, mode)] = median([t[0] for t in timings[mode]]) - base
            runner.instructions[(call, mode)] = ir[mode]
        if idle_records >= args.calls:
            notes.append(f"WARNING: the idle run of {CALLS[call]} recorded {idle_records} events.")
    notes.append("added = mode - absent (median CPU/wall of the calling thread inside the loop; "
                 "Ir = instructions of the loop / calls, callgrind --toggle-collect=bench_loop; "
                 "agent Ir = of those, in libprofagent.so itself; CUPTI Ir = in devsim's "
                 "simulated libcupti, not representative of NVIDIA's).")
    notes.append("targets: recording host-only <= 20 ns added, idle <= 3 ns added.")
    notes.append("modes: idle and host PROFAGENT_CUPTI=off; idle_cupti and cupti "
                 "PROFAGENT_CUPTI=on (devsim libcupti; paused while idle, as Kineto does); all with " + env_text(MICRO_ENV) +
                 f"; launches synchronise every {args.sync_every}.")
    print_table(f"1. Time added per intercepted call (devsim, {args.calls} calls x {args.runs} runs, "
                f"median; callgrind {args.cg_calls} calls)",
                ["call", "mode", "CPU ns/call", "added", "wall ns/call", "added", "Ir/call",
                 "added Ir", "agent Ir", "CUPTI Ir", "target"], rows, notes)


def per_call_rows(call, timings, ir):
    base_cpu = median([t[0] for t in timings["absent"]])
    base_wall = median([t[1] for t in timings["absent"]])
    targets = {"idle": "<= 3 ns", "idle_cupti": "-", "host": "<= 20 ns", "cupti": "-", "absent": ""}
    rows = []
    for mode in MODES:
        cpu = median([t[0] for t in timings[mode]])
        wall = median([t[1] for t in timings[mode]])
        total, base_ir = ir_field(ir[mode], "total"), ir_field(ir["absent"], "total")
        rows.append([CALLS[call], MODE_TITLES[mode], fmt(cpu), added(cpu, base_cpu, mode),
                     fmt(wall), added(wall, base_wall, mode), fmt(total, 0),
                     added(total, base_ir, mode, 0), fmt(ir_field(ir[mode], "agent"), 0),
                     fmt(ir_field(ir[mode], "cupti"), 0), targets[mode]])
    return rows


def ir_field(counts, key):
    return counts[key] if counts else None


def added(value, base, mode, digits=1):
    if mode == "absent" or value is None or base is None:
        return ""
    return ("+" if value >= base else "") + fmt(value - base, digits)


def env_text(env):
    return " ".join(f"{k}={v}" for k, v in env.items())


# ---- section 2 ------------------------------------------------------------------------------

def section_launch_bound(runner, args):
    modes = ["absent", "host", "cupti"]
    results = {mode: [] for mode in modes}
    for _ in range(args.launch_runs):
        for mode in modes:
            results[mode].append(runner.run(mode, "launch", args.launches, args.sync_every,
                                            extra=LAUNCH_BOUND_ENV))
    base = summarise_launch_runs(results["absent"])
    rows = []
    for mode in modes:
        s = summarise_launch_runs(results[mode])
        rows.append([MODE_TITLES[mode], fmt(s["loop_wall"], 3), slowdown(s["loop_wall"], base["loop_wall"]),
                     fmt(s["loop_cpu"], 3), slowdown(s["loop_cpu"], base["loop_cpu"]),
                     fmt(s["process_cpu"], 3), slowdown(s["process_cpu"], base["process_cpu"]),
                     fmt(s["us_per_launch"], 3), str(s["device_records"]), str(s["device_drops"]),
                     "<= 2 %" if mode == "cupti" else ""])
    for name, figure in PEER_FIGURES:
        rows.append([name, "", figure, "", "", "", "", "", "", "", ""])
    notes = [env_text(LAUNCH_BOUND_ENV) + "; loop = the launch loop timed inside the program "
             "(what the job feels); process CPU includes start-up and the exit flush."]
    notes += launch_estimates(runner)
    print_table(f"2. Launch-bound workload on devsim ({args.launches} launches of a 0.5 us kernel, "
                f"sync every {args.sync_every}, host cost model on; median of {args.launch_runs} runs)",
                ["mode", "loop wall s", "slowdown", "loop CPU s", "slowdown", "process CPU s",
                 "slowdown", "us/launch", "device records", "dropped", "target"], rows, notes)


def launch_estimates(runner):
    """Slowdown predicted from section 1's instruction counts, which load does not distort:
    the agent's instructions per launch at the absent run's ns per instruction, over a launch
    that costs devsim's measured CPU plus the modelled 3 us of a hardware launch."""
    absent_ir, absent_ns = runner.instructions.get(("launch", "absent")), runner.absent_cpu_ns.get("launch")
    if not absent_ir or not absent_ns:
        return []
    ns_per_ir, launch_ns = absent_ns / absent_ir["total"], 3000 + absent_ns
    notes = []
    for mode in ("host", "cupti"):
        counts = runner.instructions.get(("launch", mode))
        if not counts:
            continue
        agent_ns, cupti_ns = counts["agent"] * ns_per_ir, counts["cupti"] * ns_per_ir
        notes.append(f"estimate from instructions ({MODE_TITLES[mode]}): agent {counts['agent']:.0f} Ir "
                     f"x {ns_per_ir:.3f} ns/Ir = {agent_ns:.0f} ns per {launch_ns:.0f} ns launch = "
                     f"{agent_ns / launch_ns * 100:+.2f} %" +
                     (f"; with devsim's simulated CUPTI ({counts['cupti']:.0f} Ir) "
                      f"{(agent_ns + cupti_ns) / launch_ns * 100:+.2f} %" if counts["cupti"] else ""))
    return notes


def summarise_launch_runs(runs):
    return {"loop_wall": median([r["wall_ns"] / 1e9 for r in runs]),
            "loop_cpu": median([r["cpu_ns"] / 1e9 for r in runs]),
            "process_cpu": median([r["total_cpu_ns"] / 1e9 for r in runs]),
            "us_per_launch": median([r["wall_ns"] / r["calls"] / 1e3 for r in runs]),
            "device_records": max(r["device_records"] for r in runs),
            "device_drops": max(r["device_drops"] for r in runs)}


def slowdown(value, base):
    if not base or value != value:
        return "n/a"
    return f"{(value / base - 1) * 100:+.2f} %"


# ---- section 3 ------------------------------------------------------------------------------

def uftrace_run(runner, args):
    data = os.path.join(runner.args.work, "uftrace.data")
    shutil.rmtree(data, ignore_errors=True)
    wrapper = ["uftrace", "record", "--force", "--no-pager", "-d", data]
    result = runner.run("uftrace", "launch", args.uftrace_launches, args.sync_every,
                        extra=LAUNCH_BOUND_ENV, wrapper=wrapper)
    result["trace_bytes"] = directory_bytes(data, ".dat")  # the recorded data; + symbol files:
    result["dir_bytes"] = directory_bytes(data)
    result["trace_events"] = uftrace_recorded_calls(data, runner)
    return result


def directory_bytes(path, suffix=""):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path)
               for f in files if f.endswith(suffix))


def uftrace_recorded_calls(data, runner):
    """Sum of the Calls column of `uftrace report` (every recorded function call)."""
    report = subprocess.run(["uftrace", "report", "--no-pager", "-d", data, "-f", "call"],
                            capture_output=True, text=True, env=runner.env("absent", {}))
    calls = [int(m.group(1)) for m in re.finditer(r"^\s*([\d,]+)\s+\S", report.stdout, re.M)
             if m.group(1).replace(",", "").isdigit()]
    return sum(calls)


def section_uftrace(runner, args):
    if shutil.which("uftrace") is None:
        print_table("3. Side by side with uftrace", ["status"],
                    [["skipped: uftrace is not installed (scripts/setup.sh installs it)"]])
        return
    modes = ["absent", "host", "cupti", "uftrace"]
    results = {mode: [] for mode in modes}
    for _ in range(args.launch_runs):
        for mode in modes:
            if mode == "uftrace":
                results[mode].append(uftrace_run(runner, args))
            else:
                results[mode].append(runner.run(mode, "launch", args.uftrace_launches,
                                                args.sync_every, extra=LAUNCH_BOUND_ENV))
    base = uftrace_summary(results["absent"], args.uftrace_launches)
    summaries = {mode: uftrace_summary(results[mode], args.uftrace_launches) for mode in modes}
    rows = [uftrace_row(mode, summaries[mode], base) for mode in modes]
    print_table(f"3. Side by side with uftrace (the same program, {args.uftrace_launches} launches, "
                f"host cost model on; median of {args.launch_runs} runs)",
                ["tracer", "loop wall s", "added", "process wall s", "added", "process CPU s",
                 "added", "trace bytes", "all files", "events", "bytes/event", "bytes/launch"], rows,
                uftrace_notes(summaries, base))


def uftrace_summary(runs, launches):
    last = runs[-1]
    return {"loop_wall": median([r["wall_ns"] / 1e9 for r in runs]),
            "process_wall": median([r["process_wall_ns"] / 1e9 for r in runs]),
            "process_cpu": median([r["total_cpu_ns"] / 1e9 for r in runs]),
            "bytes": last["trace_bytes"], "events": last["trace_events"], "launches": launches,
            "all_bytes": last.get("dir_bytes", last["trace_bytes"])}


def uftrace_row(mode, s, base):
    per_event = s["bytes"] / s["events"] if s["events"] else None
    per_launch = s["bytes"] / s["launches"] if s["bytes"] else None
    return [MODE_TITLES[mode], fmt(s["loop_wall"], 3), plus(s["loop_wall"] - base["loop_wall"], mode),
            fmt(s["process_wall"], 3), plus(s["process_wall"] - base["process_wall"], mode),
            fmt(s["process_cpu"], 3), plus(s["process_cpu"] - base["process_cpu"], mode),
            str(s["bytes"]) if mode != "absent" else "", str(s["all_bytes"]) if mode != "absent" else "",
            str(s["events"]) if mode != "absent" else "",
            fmt(per_event), fmt(per_launch)]


def plus(value, mode):
    return "" if mode == "absent" else f"{value:+.3f}"


def uftrace_notes(s, base):
    def ratio(key, mode):
        ours, theirs = s[mode][key] - base[key], s["uftrace"][key] - base[key]
        return f"{ours / theirs:.2f}" if theirs > 0 else "n/a"
    def per_event(mode):
        return s[mode]["bytes"] / s[mode]["events"] if s[mode]["events"] else float("nan")
    notes = []
    for mode in ("host", "cupti"):
        notes.append(f"profagent {MODE_TITLES[mode]} / uftrace: added loop wall {ratio('loop_wall', mode)}, "
                     f"added process wall {ratio('process_wall', mode)}, added process CPU "
                     f"{ratio('process_cpu', mode)}, trace bytes/event "
                     f"{per_event(mode) / per_event('uftrace'):.2f}" if s["uftrace"]["events"] else "n/a")
    notes.append("uftrace: `uftrace record --force` (PLT hooks of the program: cudaLaunchKernel, "
                 "__cudaPushCallConfiguration, __cudaPopCallConfiguration, ...), events = sum of "
                 "`uftrace report` Calls (scheduler events included), trace bytes = the *.dat files of "
                 "uftrace.data (binary), all files = with its symbol tables and maps.")
    notes.append("profagent: events = trace.json events (API calls, kernels, flows, metadata), "
                 "bytes = trace.json (text JSON that Perfetto opens directly); in memory a host "
                 "event is 48 bytes.")
    return notes


# ---- section 4 ------------------------------------------------------------------------------

def section_trace_writing(runner, args):
    extra = {"DEVSIM_HOST_COST_SCALE": "0"}
    launches = max(args.flush_events // 2, 1)
    rows = [flush_row(mode, CALLS["profiler"], median_flush(runner, args, mode, "profiler", args.flush_events, 0, extra))
            for mode in ("host", "cupti")]
    rows.append(flush_row("cupti", CALLS["launch"],
                          median_flush(runner, args, "cupti", "launch", launches, args.sync_every, extra)))
    print_table(f"4. Trace writing at exit (the whole exit flush of the agent: freeze, join, "
                f"trace.json, tables, summary; median of {args.flush_runs} runs by flush CPU)",
                ["calls", "mode", "host ev", "device ev", "trace events", "flush wall s",
                 "flush CPU s", "events/s (wall)", "events/s (CPU)", "trace B/event",
                 "buffer B/host ev", "peak RSS MB"], rows,
                ["flush = from the end of main to the end of the process, minus the same for "
                 "the agent absent (run just before each agent run); events = trace.json events "
                 "written; events/s = trace events / flush time, end to end.",
                 "flush CPU is user + system time: on a VM, first-touch page faults and page-cache "
                 "pages for trace.json are a large, noisy share of it"
                 + (" (outputs kept: --flush-keep-outputs)." if args.flush_keep_outputs
                    else "; each run's outputs are deleted once read, so their pages are recycled."),
                 "buffer B/host ev = VmRSS growth during the loop / host events buffered "
                 "(HostEvent is 48 bytes; chunks are prefaulted as a whole).",
                 "peak RSS MB = the process's peak resident memory (wait4 ru_maxrss): the "
                 "recording buffer, the joined window and the writers at exit together.",
                 "targets: >= 3,000,000 events/s written, <= 48 bytes of buffer per "
                 "host event.",
                 "per trace format (json, json.gz, perfetto), pinned to one core, with system time, "
                 "page faults and instructions by phase: tests/bench/flush_bench.py."])
    for row in rows:
        print(f"  end-to-end exit flush, {row[0]} {row[1]}: {row[4]} events in {row[6]} s CPU "
              f"= {row[8]} events/s (CPU), {row[7]} events/s (wall)")
    flush_instructions(runner, args, extra)
    component_benchmarks(args)


def flush_instructions(runner, args, extra):
    """Instructions per trace event of the exit flush (freeze, join, trace.json, tables,
    summary), counted by callgrind: the figure a loaded machine does not blur."""
    if shutil.which("valgrind") is None:
        print("  exit flush instructions: skipped (valgrind is not installed)")
        return
    cases = (("host", "profiler", args.flush_cg_calls, 0),
             ("cupti", "launch", max(args.flush_cg_calls // 2, 1), args.sync_every))
    for mode, call, calls, sync_every in cases:
        out_file = os.path.join(runner.args.work, f"callgrind.flush.{mode}.{call}.out")
        wrapper = ["valgrind", "--tool=callgrind", "--toggle-collect=profagent::agent::flush_all*",
                   f"--callgrind-out-file={out_file}"]
        r = runner.run(mode, call, calls, sync_every, extra=extra, wrapper=wrapper)
        total = sum(callgrind_self_cost_by_object(out_file).values())
        events = r["trace_events"]
        print(f"  exit flush instructions, {CALLS[call]} {MODE_TITLES[mode]} (callgrind, {events} trace "
              f"events): {total / events:,.0f} per event" if events else "  exit flush: no events")
        if not args.flush_keep_outputs:
            shutil.rmtree(r["out_dir"], ignore_errors=True)


def median_flush(runner, args, mode, call, calls, sync_every, extra):
    """Runs the agent `flush_runs` times, each after an absent run; returns the median sample."""
    samples = []
    for _ in range(max(args.flush_runs, 1)):
        absent = runner.run("absent", call, calls, sync_every, extra=extra)
        r = runner.run(mode, call, calls, sync_every, extra=extra)
        samples.append(flush_sample(r, absent, calls))
        if not args.flush_keep_outputs:
            # Hundreds of MB per run. Kept, every run's trace.json needs page-cache pages the
            # VM has never backed, whose first touch costs far more than the writing itself.
            shutil.rmtree(r["out_dir"], ignore_errors=True)
    samples.sort(key=lambda sample: sample["cpu"])
    return samples[len(samples) // 2]


def flush_sample(r, absent, calls):
    wall = (r["end_ns"] - r["main_end_ns"] - (absent["end_ns"] - absent["main_end_ns"])) / 1e9
    cpu = ((r["total_cpu_ns"] - r["proc_cpu_ns"]) - (absent["total_cpu_ns"] - absent["proc_cpu_ns"])) / 1e9
    rss = (r["rss_after_kb"] - r["rss_before_kb"]) - (absent["rss_after_kb"] - absent["rss_before_kb"])
    return {"r": r, "wall": wall, "cpu": cpu, "rss": rss, "calls": calls}


def peak_rss_mb(sample):
    """The process's peak RSS (its exit flush included), from wait4's ru_maxrss."""
    return sample["r"]["peak_rss_kb"] / 1024


def flush_row(mode, call, sample):
    r, wall, cpu, rss = sample["r"], sample["wall"], sample["cpu"], sample["rss"]
    host = r["host_records"] or sample["calls"]
    events = r["trace_events"]
    return [call, MODE_TITLES[mode], str(r["host_records"]), str(r["device_records"]), str(events),
            fmt(wall, 3), fmt(cpu, 3), fmt(events / wall if wall > 0 else None, 0),
            fmt(events / cpu if cpu > 0 else None, 0),
            fmt(r["trace_bytes"] / events if events else None),
            fmt(rss * 1024 / host if host else None), fmt(peak_rss_mb(sample), 0)]


def component_benchmarks(args):
    for label, program, argv in (("collector_bench", args.collector_bench, [str(args.component_events)]),
                                 ("exporter_bench", args.exporter_bench,
                                  [str(args.component_events), args.work])):
        if not program:
            continue
        result = subprocess.run([program] + argv, capture_output=True, text=True)
        print(f"\n  {label} (component figures, {args.component_events} events):")
        for line in (result.stdout + result.stderr).strip().splitlines():
            print("    " + line)
        if result.returncode != 0:
            raise BenchError(f"{label} exited with {result.returncode}")


# ---- main -----------------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--program", required=True, help="bench_calls")
    p.add_argument("--agent", required=True, help="libprofagent.so")
    p.add_argument("--devsim", required=True, help="folder of the simulated libcudart/libcupti")
    p.add_argument("--work", required=True, help="scratch folder (outputs, callgrind, uftrace data)")
    p.add_argument("--exporter-bench", default="")
    p.add_argument("--collector-bench", default="")
    p.add_argument("--smoke", action="store_true", help="tiny N: only checks everything runs")
    p.add_argument("--sections", default="1,2,3,4")
    p.add_argument("--runs", type=int, default=5, help="section 1 runs per mode")
    p.add_argument("--calls", type=int, default=200_000, help="section 1 calls per run")
    p.add_argument("--cg-calls", type=int, default=20_000, help="calls under callgrind")
    p.add_argument("--launches", type=int, default=1_000_000, help="section 2 launches")
    p.add_argument("--launch-runs", type=int, default=3, help="sections 2 and 3 runs per mode")
    p.add_argument("--uftrace-launches", type=int, default=200_000, help="section 3 launches")
    p.add_argument("--sync-every", type=int, default=1000)
    p.add_argument("--flush-events", type=int, default=1_000_000, help="section 4 host events")
    p.add_argument("--flush-runs", type=int, default=5, help="section 4 runs per mode (median)")
    p.add_argument("--flush-cg-calls", type=int, default=100_000,
                   help="section 4 calls under callgrind (instructions per event of the exit flush)")
    p.add_argument("--flush-keep-outputs", action="store_true",
                   help="section 4: keep each run's output files (default: deleted once read)")
    p.add_argument("--component-events", type=int, default=500_000)
    p.add_argument("--calls-kinds", dest="call_kinds", default="profiler,launch")
    args = p.parse_args()
    args.call_kinds = args.call_kinds.split(",")
    if args.smoke:
        args.runs, args.calls, args.cg_calls, args.launches, args.launch_runs = 1, 2000, 300, 3000, 1
        args.uftrace_launches, args.flush_events, args.component_events = 1000, 3000, 2000
        args.flush_cg_calls = 1000
        args.flush_runs = 1
        args.sync_every = 100
    for key in ("work", "program", "agent", "devsim", "exporter_bench", "collector_bench"):
        if getattr(args, key):
            setattr(args, key, os.path.abspath(getattr(args, key)))
    os.makedirs(args.work, exist_ok=True)
    return args


def main():
    args = parse_args()
    runner = Runner(args)
    sections = {"1": section_per_call, "2": section_launch_bound, "3": section_uftrace,
                "4": section_trace_writing}
    print(f"profagent overhead benchmarks — {time.strftime('%Y-%m-%d %H:%M:%S')}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
          + (" (smoke run: tiny N, figures meaningless)" if args.smoke else ""))
    failed = []
    for key in args.sections.split(","):
        started = time.monotonic()
        try:
            sections[key](runner, args)
        except (BenchError, OSError) as error:
            failed.append(key)
            print(f"\nsection {key} FAILED: {error}")
        print(f"  (section {key}: {time.monotonic() - started:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
