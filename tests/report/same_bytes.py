#!/usr/bin/python3
"""The files a window's end writes and `profagent report` of that window's trace are the same bytes:
one summary engine (exporters/summaries/) for both. A real run on devsim (the DIOPI demo, memory
profiled, call stacks and input shapes recorded) per case, then:

- <stem>.summary.txt (PROFAGENT_SUMMARIES=all: every summary, key_averages and memory included)
  equals `profagent report --summary all` with the run's --sort-by and --group-by;
- <stem>.table.txt is the report's key_averages block, then its memory block (each the text below
  the block's title line), then the overhead line the report ends with, and nothing else (the
  demo marks no step: no step lines);
- with stacks on, the memory summary names call sites ("at <frame>") in both.

    same_bytes.py --list
    same_bytes.py CASE --profagent BIN --lib DIR --devsim DIR --work DIR

Cases: sort_<key> for each of torch's sort keys PROFAGENT_SORT_BY takes, group_input_shape and
group_stack_n (rows per input shapes, per their 3 innermost frames).
"""
import argparse
import difflib
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3"
SORT_KEYS = ["cpu_time", "cuda_time", "cpu_time_total", "cuda_time_total", "self_cpu_time_total",
             "self_cuda_time_total", "count", "device_time_total", "self_device_time_total", "cpu_memory_usage",
             "self_cpu_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage"]
CASES = {"sort_" + k: (k, "none") for k in SORT_KEYS}
CASES["group_input_shape"] = ("cuda_time_total", "input_shape")
CASES["group_stack_n"] = ("self_cpu_time_total", "stack_n:3")


def sh(cmd, env=None):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise SystemExit("same_bytes: %s exited %d\n%s\n%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:],
                                                              p.stderr[-2000:]))
    return p.stdout


def run_workload(a, sort_by, group_by):
    out = os.path.join(a.work, "out")
    env = dict(os.environ, LD_LIBRARY_PATH=a.devsim, LD_PRELOAD=os.path.join(a.lib, "libprofagent.so"),
               PROFAGENT_OUTPUT_DIR=out, PROFAGENT_PROFILE_MEMORY="1", PROFAGENT_WITH_STACK="1",
               PROFAGENT_RECORD_SHAPES="1", PROFAGENT_SUMMARIES="all", PROFAGENT_SORT_BY=sort_by,
               PROFAGENT_GROUP_BY=group_by, PROFAGENT_ROW_LIMIT="12")
    sh([PY, os.path.join(ROOT, "tests", "vendorsim", "train.py"), "--framework",
        os.path.join(a.lib, "libframeworksim.so"), "--steps", "4"], env=env)
    traces = sorted(glob.glob(os.path.join(out, "*.trace.json")))
    if len(traces) != 1:
        raise SystemExit("same_bytes: expected one trace in %s, found %s" % (out, traces))
    return traces[0][:-len(".trace.json")]


def report(a, trace, summaries, sort_by, group_by):
    text = sh([a.profagent, "report", "--summary", summaries, "--sort-by", sort_by, "--group-by", group_by,
               "--row-limit", "12", trace])
    first, _, rest = text.partition("\n")
    if not first.startswith("==> "):
        raise SystemExit("same_bytes: the report does not start with its header line:\n" + text[:500])
    return rest


def overhead_line(text):
    """The report's last line, what profagent cost (the table file ends with it too)."""
    last = text.rstrip("\n").rpartition("\n")[2]
    if not last.startswith("profagent overhead: "):
        raise SystemExit("same_bytes: the report does not end with the overhead line:\n" + text[-500:])
    return last + "\n"


def block_body(a, trace, name, sort_by, group_by):
    """One summary's text as the report prints it, without its title line, the blank line after
    it and the overhead line."""
    text = report(a, trace, name, sort_by, group_by)
    text = text[: -len(overhead_line(text))]
    title, _, body = text.partition("\n")
    if not title.startswith("-") or not body.endswith("\n\n"):
        raise SystemExit("same_bytes: the %s block is not a title line and a body:\n%s" % (name, text[:800]))
    return body[:-1]


def expect_same(what, written, printed):
    if written == printed:
        return
    diff = "".join(list(difflib.unified_diff(written.splitlines(True), printed.splitlines(True), what,
                                             "profagent report"))[:80])
    raise SystemExit("same_bytes: %s differs from profagent report:\n%s" % (what, diff))


def check(a, sort_by, group_by):
    stem = run_workload(a, sort_by, group_by)
    trace = stem + ".trace.json"
    with open(stem + ".summary.txt") as f:
        summary = f.read()
    expect_same("summary.txt", summary, report(a, trace, "all", sort_by, group_by))
    table = block_body(a, trace, "key_averages", sort_by, group_by)
    memory = block_body(a, trace, "memory", sort_by, group_by)
    with open(stem + ".table.txt") as f:
        written = f.read()
    expect_same("table.txt (table and memory summary)", written[:len(table + memory)], table + memory)
    line = overhead_line(summary)
    expect_same("table.txt (the overhead line)", written[len(table + memory):][:len(line)], line)
    steps = written[len(table + memory + line):]  # the demo marks no step: nothing follows
    if steps:
        raise SystemExit("same_bytes: table.txt goes on after the memory summary of a trace without steps:\n"
                         + steps[:500])
    if ", at " not in memory:
        raise SystemExit("same_bytes: with stacks on, the memory summary names no call site:\n" + memory[:1500])
    if group_by == "input_shape" and "Input Shapes" not in table:
        raise SystemExit("same_bytes: --group-by input_shape shows no Input Shapes column:\n" + table[:1500])
    if group_by.startswith("stack_n") and "Source Location" not in table:
        raise SystemExit("same_bytes: --group-by %s shows no Source Location column:\n%s" % (group_by, table[:1500]))
    if "12 of " not in table:
        raise SystemExit("same_bytes: the row limit 12 did not cut the table (the note is part of the test):\n"
                         + table[-800:])
    print("same_bytes: sort %s, group %s: summary.txt (%d bytes) and table.txt (%d + %d bytes) equal the report's"
          % (sort_by, group_by, len(summary), len(table), len(memory)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?")
    ap.add_argument("--list", action="store_true")
    for opt in ("--profagent", "--lib", "--devsim", "--work"):
        ap.add_argument(opt)
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    if os.path.isdir(a.work):
        subprocess.run(["rm", "-rf", a.work], check=True)
    os.makedirs(a.work)
    check(a, *CASES[a.case])
    print("same_bytes %s: ok" % a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
