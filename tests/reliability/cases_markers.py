"""Issue 10, points 9-12: step markers that cannot hang or crash the program, warnings that
stay one line, the launcher forwarding signals, address-space limits, and a closing line
when a schedule or marker never let anything be recorded. Programs: programs/markers.cmake."""
import os
import re

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


CASES = {
    "markers_kernel_hostile": marker_case("kernel", "^train_step_end$"),
    "markers_range_hostile": marker_case("range", "^step_boundary$"),
    "markers_bad_items": case_markers_bad_items,
}
