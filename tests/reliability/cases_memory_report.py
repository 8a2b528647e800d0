"""`profagent report` of a memory trace prints the memory summary the agent wrote for that
window (`<stem>.summary.txt`): everything that summary says is in the trace file, so the reader
rebuilds it — the frees of memory made in the same step, the call sites with
PROFAGENT_WITH_STACK=1, leaks, failed allocations and refused calls, driver-level and graph
memory. Each program runs with and without the agent (unchanged), then the CLI reads its trace.
"""
import difflib
import glob
import os
import subprocess

import reliability as R

SCHEDULE = "skip_first=1,active=2,repeat=1"
RUNS = [
    # (name, program, arguments, extra environment)
    ("churn", "memory_app", ["churn", "6"], {}),
    ("sequence", "memory_app", ["sequence", str(128 << 20)], {"PROFAGENT_SCHEDULE": SCHEDULE, "DEVSIM_MEMORY_MB": "64"}),
    ("library", "memory_app", ["library", str(1 << 20)], {}),
    ("refused", "memory_edges_app", ["register", "65536"], {}),
    ("graph", "memory_edges_app", ["graph", str(1 << 20)], {}),
]


def memory_block(text):
    """The "Memory Summary" block: from its title line to the next title or the end."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip("-") == "Memory Summary"), None)
    R.expect(start is not None, f"no Memory Summary in:\n{text[-1500:]}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("---") and lines[i].strip("-")), len(lines))
    return "\n".join(lines[start:end]).strip()


def launcher(env):
    return os.path.join(os.path.dirname(os.path.dirname(env.agent)), "bin", "profagent")


def compare(env, name, program, arguments, extra):
    out = env.out("memory_report_" + name)
    command = [os.path.join(os.path.dirname(env.app), program)] + arguments
    variables = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_PROFILE_MEMORY": "1", "PROFAGENT_WITH_STACK": "1", **extra}
    agent, plain = R.both(env, command, variables)
    R.expect_unchanged(agent, plain, f"{name}: ")
    trace = R.traces(out)
    R.expect(len(trace) == 1, f"{name}: traces {os.listdir(out)}")
    with open(trace[0][: -len(".trace.json")] + ".summary.txt") as f:
        written = memory_block(f.read())
    done = subprocess.run([launcher(env), "report", "--summary", "memory", trace[0]], capture_output=True, text=True,
                          timeout=120)
    R.expect(done.returncode == 0, f"{name}: profagent report exited {done.returncode}: {done.stderr[-600:]}")
    printed = memory_block(done.stdout)
    if printed != written:
        diff = "".join(difflib.unified_diff(written.splitlines(True), printed.splitlines(True), "summary.txt",
                                            "profagent report"))
        raise R.Failed(f"{name}: the report's memory summary differs from the window's:\n{diff[:3000]}")
    return written


def case_report_equals_summary(env):
    said = {}
    for name, program, arguments, extra in RUNS:
        said[name] = compare(env, name, program, arguments, extra)
    # What the cases are about is in the compared text (the comparison is not of empty blocks).
    R.expect("freed in the step they were made" in said["churn"], f"churn: {said['churn']}")
    R.expect(", at " in said["churn"] and ", at " in said["sequence"], "no call site in the memory summaries")
    R.expect("failed allocation" in said["sequence"] and "by cudaMalloc" in said["sequence"], said["sequence"])
    R.expect("returned error 712" in said["refused"], said["refused"])
    return f"profagent report prints each of {len(RUNS)} windows' memory summary exactly"


CASES = {
    "memory_report_equals_summary": case_report_equals_summary,
}
