"""Call stacks (PROFAGENT_WITH_STACK=1): every recorded call made from a known call chain carries
that chain, innermost first with the calls' source lines, in the trace (stackFrames + sf, the
Call site arg), in the table grouped by stack (PROFAGENT_GROUP_BY=stack_n:N) and in the folded
flame graph files; and unwinding never crashes or hangs the program: 64 threads, a signal
handler making CUDA calls, fork, frames without unwind info and JIT code.
Programs: programs/stacks.cmake (stacks_app, built with -g)."""
import glob
import os
import re

import reliability as R

FILE = "stacks_app.cpp"
NS = "(anonymous namespace)::"


def app(env):
    return os.path.join(os.path.dirname(env.app), "stacks_app")


def stacks_env(out, **extra):
    return dict({"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_WITH_STACK": "1"}, **extra)


def frames_of(document, sf):
    """The frame names of stack `sf`, innermost first, from the trace's stackFrames tree."""
    table = document.get("stackFrames", {})
    names = []
    while sf:
        frame = table[str(sf)]
        names.append(frame["name"])
        sf = int(frame.get("parent", 0))
    return names


def function(name):
    """'stacks_app.cpp(42): (anonymous namespace)::layer(int)' -> 'layer'."""
    text = name.split(": ", 1)[-1]
    return text.replace(NS, "").split("(")[0].split(" ")[0]


def expect_chain(frames, chain, lines, what):
    """`chain` (innermost first) are the stack's first frames, each at its source line when given."""
    got = [function(f) for f in frames[:len(chain)]]
    R.expect(got == chain, f"{what}: stack starts {got}, expected {chain} (stack {frames})")
    for frame, line in zip(frames, lines):
        if line:
            R.expect(frame.startswith(f"{FILE}({line}): "), f"{what}: frame {frame!r}, expected line {line}")


def stack_events(document, name):
    found = R.events(document, name)
    R.expect(found, f"no {name} events")
    missing = [e for e in found if "sf" not in e]
    R.expect(not missing, f"{len(missing)} of {len(found)} {name} events have no stack: {missing[:1]}")
    return found


def check_agent_frames_removed(document):
    agent = [f for f in document["stackFrames"].values() if f.get("category") == "libprofagent.so"]
    R.expect(not agent, f"agent frames in the stacks: {agent[:3]}")


def kernel_chain(document, launches_by_external):
    """Kernels carry the stack of the launch that issued them."""
    for kernel in [e for e in R.events(document) if e.get("cat") == "kernel"]:
        launch = launches_by_external.get(kernel["args"].get("External id"))
        R.expect(launch is not None and kernel.get("sf") == launch["sf"],
                 f"kernel {kernel['name']} sf {kernel.get('sf')} is not its launch's {launch and launch['sf']}")


def table_groups(table_text):
    """(name, count, [source location lines]) per row of a stack-grouped table."""
    rows, current = [], None
    for line in table_text.splitlines():
        match = re.match(r"^\s+(\S.*?)\s{2,}(?:\S+\s+){9,11}(\d+)\s{2}(\S.*?)\s*$", line)
        if match and "Name" not in line:
            current = (match.group(1), int(match.group(2)), [match.group(3)])
            rows.append(current)
        elif current and line.strip() and not line.startswith("-") and line.startswith(" " * 40):
            current[2].append(line.strip())
        elif not line.strip():
            current = None
    return rows


def folded(out, metric):
    found = glob.glob(os.path.join(out, f"*.{metric}.folded"))
    R.expect(len(found) == 1, f"{metric} folded files: {found}")
    lines = {}
    for line in open(found[0]).read().splitlines():
        frames, value = line.rsplit(" ", 1)
        lines[frames] = int(value)
    return lines


def case_chains(env):
    """main -> run_steps -> step -> layer|update -> cudaLaunchKernel, 50 steps."""
    out = env.out("stacks_chains")
    extra = stacks_env(out, PROFAGENT_GROUP_BY="stack_n:5")
    agent, plain = R.both(env, [app(env), "chains", "50"], extra)
    R.expect_unchanged(agent, plain)
    want = R.expected(agent.stdout)
    document = R.one_valid_trace(out, {"cudaLaunchKernel": want["cudaLaunchKernel"]})
    check_agent_frames_removed(document)
    lines = {"layer": want["layer_line"], "update": want["update_line"]}
    by_leaf = {"layer": 0, "update": 0}
    launches = stack_events(document, "cudaLaunchKernel")
    for launch in launches:
        frames = frames_of(document, launch["sf"])
        leaf = function(frames[0])
        R.expect(leaf in by_leaf, f"launch from {frames[0]!r}")
        expect_chain(frames, [leaf, "step", "run_steps", "chains", "main"], [lines[leaf]], "launch")
        R.expect(launch["args"]["Call site"] == frames[0], f"Call site {launch['args']['Call site']!r}")
        by_leaf[leaf] += 1
    R.expect(by_leaf == {"layer": 50, "update": 50}, f"launches by chain {by_leaf}")
    kernel_chain(document, {e["args"]["External id"]: e for e in launches})
    R.expect(document["profagent_drops"]["stacks_truncated"] == 0, f"drops {document['profagent_drops']}")
    table = open(glob.glob(os.path.join(out, "*.table.txt"))[0]).read()
    rows = [r for r in table_groups(table) if r[0] == "cudaLaunchKernel"]
    chains = sorted((r[1], [function(f) for f in r[2]], r[2][0]) for r in rows)
    R.expect(chains == sorted([(50, ["layer", "step", "run_steps", "chains", "main"], f"{FILE}({lines['layer']}): {NS}layer(int)"),
                               (50, ["update", "step", "run_steps", "chains", "main"], f"{FILE}({lines['update']}): {NS}update(int)")]),
             f"table rows for cudaLaunchKernel: {chains}\n{table[:3000]}")
    kernels = sum(e["dur"] for e in R.events(document) if e.get("cat") == "kernel")
    for metric in ("self_cuda_time_total", "self_cpu_time_total"):
        lines_ = folded(out, metric)
        for leaf in ("layer", "update"):
            found = [v for k, v in lines_.items() if k.endswith(f"{NS}step(int);{FILE}({lines[leaf]}): {NS}{leaf}(int);cudaLaunchKernel")
                     and "): main;" in k and f"{NS}run_steps(long);" in k]
            R.expect(len(found) == 1 and found[0] > 0, f"{metric}: {leaf} chain lines {found} in {list(lines_)[:4]}")
        if metric == "self_cuda_time_total":
            total = sum(lines_.values())
            R.expect(abs(total - kernels) <= len(lines_), f"folded device time {total} us, kernels {kernels} us")
    return (f"{len(launches)} launches, each with its chain at lines {lines}; table rows {[(c[0], c[1][0]) for c in chains]}; "
            f"folded files per metric")


def case_threads(env):
    """64 threads at once, each running the chains: every launch has its whole chain."""
    out = env.out("stacks_threads")
    agent, plain = R.both(env, [app(env), "threads", "64", "20"], stacks_env(out), timeout=300)
    R.expect_unchanged(agent, plain)
    want = R.expected(agent.stdout)
    document = R.one_valid_trace(out, {"cudaLaunchKernel": want["cudaLaunchKernel"]})
    tids = set()
    for launch in stack_events(document, "cudaLaunchKernel"):
        frames = frames_of(document, launch["sf"])
        leaf = function(frames[0])
        expect_chain(frames, [leaf, "step", "run_steps", "thread_main"], [], "thread launch")
        tids.add(launch["tid"])
    R.expect(len(tids) == 64, f"launches from {len(tids)} threads")
    R.expect(document["profagent_drops"]["stacks_truncated"] == 0, f"drops {document['profagent_drops']}")
    return f"{want['cudaLaunchKernel']} launches from 64 threads, every one with its chain"


def case_signal_handler(env):
    """A timer signal every 100 us: its handler opens a range (the agent unwinds inside the handler,
    also while the interrupted launch was being unwound) and makes CUDA calls."""
    out = env.out("stacks_signal")
    agent = R.run([app(env), "signal", "3000"], stacks_env(out), env.agent, env.devsim, timeout=300)
    R.expect(agent.returncode == 0, f"status {agent.returncode}: {agent.stderr[-400:]!r}")
    want = R.expected(agent.stdout)
    R.expect(want["failures"] == 0 and want["other"] >= 50, f"program {want}")
    document = R.one_valid_trace(out, {"cudaLaunchKernel": want["cudaLaunchKernel"],
                                       "cudaMemsetAsync": want["other"]})
    for call in stack_events(document, "cudaMemsetAsync"):
        frames = frames_of(document, call["sf"])
        expect_chain(frames, ["on_alarm"], [want["signal_line"]], "handler call")
        R.expect(any(function(f) == "signal_calls" for f in frames), f"handler stack misses the interrupted frames: {frames}")
    ranges = [e for e in R.events(document, "in_handler")]
    with_stack = [e for e in ranges if "sf" in e]
    R.expect(ranges and all(function(frames_of(document, e["sf"])[0]) == "on_alarm" for e in with_stack),
             f"handler ranges {len(ranges)}, with stacks {len(with_stack)}")
    truncated = document["profagent_drops"]["stacks_truncated"]
    R.expect(len(ranges) - len(with_stack) <= truncated, f"{len(ranges) - len(with_stack)} ranges without a stack, {truncated} counted")
    return (f"{want['cudaLaunchKernel']} launches, {want['other']} handler CUDA calls and {len(ranges)} handler ranges; "
            f"{len(ranges) - len(with_stack)} nested unwinds given up and counted ({truncated} truncated)")


def case_fork(env):
    """A forked child records its own launches with their stacks, into its own files."""
    out = env.out("stacks_fork")
    agent, plain = R.both(env, [app(env), "fork", "10"], stacks_env(out))
    R.expect_unchanged(agent, plain)
    want = R.expected(agent.stdout)
    R.expect(want["other"] == 0, f"child status {want['other']}")
    found = R.traces(out)
    R.expect(len(found) == 2, f"traces {found}")
    for path in found:
        document = R.load(path)
        launches = stack_events(document, "cudaLaunchKernel")
        R.expect(len(launches) == 20, f"{os.path.basename(path)}: {len(launches)} launches")
        for launch in launches:
            frames = frames_of(document, launch["sf"])
            expect_chain(frames, [function(frames[0]), "step"], [], "launch")
            R.expect(any(function(f) == "fork_chains" for f in frames), f"stack {frames}")
    return "parent and child: 20 launches each with their chain"


def case_no_unwind_info(env):
    """Launches from under a frame without unwind info (its frame pointer garbage) and from code
    on an anonymous page (as JIT code): the frames found are kept, the cut is counted."""
    out = env.out("stacks_no_unwind")
    agent, plain = R.both(env, [app(env), "no_unwind", "20"], stacks_env(out))
    R.expect_unchanged(agent, plain)
    want = R.expected(agent.stdout)
    document = R.one_valid_trace(out, {"cudaLaunchKernel": want["cudaLaunchKernel"]})
    outer = set()
    for launch in stack_events(document, "cudaLaunchKernel"):
        frames = frames_of(document, launch["sf"])
        expect_chain(frames, ["launch_under_no_cfi"], [want["no_unwind_line"]], "launch")
        outer.add(frames[1].split(" ")[0] if frames[1].startswith("0x") else function(frames[1]))
    R.expect("no_cfi_call" in outer and any(o.startswith("0x") for o in outer), f"callers {outer}")
    truncated = document["profagent_drops"]["stacks_truncated"]
    R.expect(truncated >= want["cudaLaunchKernel"], f"{truncated} truncated stacks counted for {want['cudaLaunchKernel']}")
    said = [line for line in agent.agent_lines() if "call stacks:" in line]
    R.expect(len(said) == 1, f"lines about it: {said}")
    return f"{want['cudaLaunchKernel']} launches kept their innermost frames; {truncated} truncated, said once"


def case_off(env):
    """Without PROFAGENT_WITH_STACK nothing of this exists: no stackFrames, no sf, no Call site,
    no folded files, and the same events as with stacks (the stack tags never reach the trace)."""
    runs = {}
    for label, extra in (("off", {}), ("on", {"PROFAGENT_WITH_STACK": "1"})):
        out = env.out(f"stacks_{label}")
        agent = R.run([app(env), "chains", "20"], dict(extra, PROFAGENT_OUTPUT_DIR=out), env.agent, env.devsim)
        R.expect(agent.returncode == 0, f"{label}: status {agent.returncode}")
        document = R.one_valid_trace(out)
        events = R.events(document)
        runs[label] = (document, events, sorted(os.listdir(out)))
    document, events, files = runs["off"]
    R.expect("stackFrames" not in document, "stackFrames without stacks")
    R.expect(not [e for e in events if "sf" in e or "Call site" in e.get("args", {})], "stack fields without stacks")
    R.expect(not [f for f in files if f.endswith(".folded")], f"folded files without stacks: {files}")
    names = lambda evs: sorted(e["name"] for e in evs)
    R.expect(names(events) == names(runs["on"][1]), "stacks on and off recorded different events")
    R.expect(len([f for f in runs["on"][2] if f.endswith(".folded")]) == 2, f"with stacks: {runs['on'][2]}")
    return f"{len(events)} events either way; stack fields and folded files only with stacks"


CASES = {
    "stacks_off": case_off,
    "stacks_chains": case_chains,
    "stacks_threads_64": case_threads,
    "stacks_signal_handler": case_signal_handler,
    "stacks_fork": case_fork,
    "stacks_no_unwind_info": case_no_unwind_info,
}
