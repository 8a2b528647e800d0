#!/usr/bin/python3
"""Golden outputs: the files of two small, deterministic devsim runs under the agent, with what
changes from run to run replaced (times, pids, tids, addresses, the host name, the output
directory), compared with the copies kept in tests/golden/expected/. A change of format (a
column, a key, a summary's line) shows as a diff in review; --update writes the new copies.

    golden.py --lib build/lib/libprofagent.so --devsim build/devsim --bin build/bin [--update]
    golden.py --normalise FILE          # print one file normalised (table, summary, trace)

The runs: demo_train 2 (memory profiled, every summary) gives table.txt, summary.txt and
summary.ndjson; vector_add gives trace.json (small: one event per line). As in uftrace's tests,
numbers that measure time are replaced, never the counts, names, bytes and ids the programs
fix (CUPTI's correlation ids, which the agent's own probe calls advance too, are renamed in order
of first sight). Only the Python standard library is used.
"""
import argparse
import difflib
import glob
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
from agent_run import agent_environment, run  # noqa: E402
from trace_reader import load_trace  # noqa: E402

EXPECTED = os.path.join(HERE, "expected")
RUNS = {  # program and arguments -> {output suffix: golden file}
    ("demo_train", "2"): {"table.txt": "table.txt", "summary.txt": "summary.txt",
                          "summary.ndjson": "summary.ndjson"},
    ("vector_add",): {"trace.json": "trace.json"},
}

# ---- text (the table and the summaries) ---------------------------------------------------
# A decimal, with its unit when it has one: 12.345us, 1.2ms, 47.38%, 0.83. Integers stay
# (calls, bytes, record counts).
DECIMAL = re.compile(r"-?\d+\.\d+(?:us|ms|ns|s|%| ms)?")


def normalise_text(text):
    lines = []
    for line in text.splitlines():
        line = DECIMAL.sub("<t>", line)
        line = re.sub(r"-{3,}", "---", line)  # column widths follow the widest (time) value
        line = re.sub(r" {2,}", "  ", line).rstrip()
        lines.append(line)
    return "\n".join(lines) + "\n"


# ---- JSON (summary.ndjson, the trace) -----------------------------------------------------
TIME_KEYS = {"ts", "dur", "Allocated ts", "baseTimeNanoseconds", "join_wait_ms", "ns", "process_ns",
             "system_busy_ns", "system_idle_ns", "cpus",
             # profagent_overhead: the measured record and CUPTI costs and the memory held vary as times do
             "record_cost_ps", "cupti_call_cost_ps", "memory_bytes"}
AGENT_TRACK_PID_OFFSET = 1 << 22  # the profagent track's pid is the process's plus this
# Agent work whose number depends on timing (a poll every 100 ms; the record and CUPTI costs
# measured on the poller or, in a short run, by the exit flush): left out of the golden trace, with the rows
# of the threads that did it. What stays is the window's join, once per window.
TIMED_AGENT_WORK = {"poll device", "measure record cost", "measure CUPTI cost"}
HOST_TIME_SUFFIXES = ("_ns", "unix_ns")


class Renamer:
    """Gives each distinct value (a pid, a tid, an address) a stable name in order of first
    sight, so that links (the same tid on two events) stay visible."""

    def __init__(self, label):
        self.label, self.names = label, {}

    def __call__(self, value):
        return self.names.setdefault(value, f"<{self.label}{len(self.names) + 1}>")


def normalise_json(value, pid, host, out_dir, renamers, key=None):
    if isinstance(value, dict):
        out = {k: normalise_json(v, pid, host, out_dir, renamers, k) for k, v in value.items()}
        if value.get("cat") == "ac2g" and isinstance(value.get("id"), int):  # a flow's id: its correlation id
            out["id"] = renamers["corr"](value["id"])
        return out
    if isinstance(value, list):
        return [normalise_json(v, pid, host, out_dir, renamers, key) for v in value]
    if key in TIME_KEYS or (key and key.endswith(HOST_TIME_SUFFIXES)):
        return "<t>" if isinstance(value, (int, float)) else value
    if key == "Addr":
        return renamers["addr"](value)
    # CUPTI's correlation ids count every traced call of the process, also the agent's own (the
    # probe measuring CUPTI's cost per call runs on the agent's thread, at no fixed point of the
    # program): renamed in order of first sight, so the links between events stay visible.
    if key in ("correlation", "wait_on_cuda_event_record_corr_id") and isinstance(value, int):
        return renamers["corr"](value)
    if key in ("pid", "tid", "sort_index") and value == pid:
        return "<pid>"
    if key == "pid" and pid is not None and value == pid + AGENT_TRACK_PID_OFFSET:
        return "<agent pid>"
    if key == "tid" and isinstance(value, int) and value > 1000:  # a host thread, not a stream
        return renamers["tid"](value)
    if isinstance(value, str):
        value = value.replace(out_dir, "<out>")
        value = re.sub(rf"\b{re.escape(host)}\.{pid}\b", "<host>.<pid>", value)
        value = re.sub(rf"\b{pid}\b", "<pid>", value)
        return "<host>" if value == host else value
    return value


def normalise_trace(path, out_dir):
    doc = load_trace(path)
    pid, host = process_of(doc), doc.get("host_name", "")
    renamers = {"addr": Renamer("addr"), "tid": Renamer("tid"), "corr": Renamer("corr")}
    doc = normalise_json(doc, pid, host, out_dir, renamers)
    events = without_timed_agent_work(doc.pop("traceEvents"))
    head = json.dumps(doc, indent=1, sort_keys=True)
    return head + "\n" + "".join(json.dumps(e, sort_keys=True) + "\n" for e in events)


def without_timed_agent_work(events):
    def timed(e):
        return e.get("cat") == "profagent" and e.get("name") in TIMED_AGENT_WORK
    kept_rows = {e.get("tid") for e in events if e.get("cat") == "profagent" and not timed(e)}
    return [e for e in events if not timed(e) and not (
        e.get("pid") == "<agent pid>" and e.get("ph") == "M" and e.get("tid") not in (0, *kept_rows))]


def process_of(doc):
    names = [e for e in doc["traceEvents"] if e.get("name") == "process_labels"
             and e.get("args", {}).get("labels") == "CPU"]
    return names[0]["pid"] if names else None


def normalise_ndjson(path, out_dir):
    lines = []
    for line in open(path, encoding="utf-8"):
        record = json.loads(line)
        pid, host = record.get("pid"), record.get("host_name", "")
        renamers = {"addr": Renamer("addr"), "tid": Renamer("tid"), "corr": Renamer("corr")}
        lines.append(json.dumps(normalise_json(record, pid, host, out_dir, renamers), indent=1,
                                sort_keys=True))
    return "\n".join(lines) + "\n"


def normalise(path, out_dir):
    if path.endswith(".trace.json") or path.endswith(".trace.json.gz"):
        return normalise_trace(path, out_dir)
    if path.endswith(".ndjson"):
        return normalise_ndjson(path, out_dir)
    return normalise_text(open(path, encoding="utf-8").read())


# ---- the runs -----------------------------------------------------------------------------
def run_program(options, program, out_dir):
    env = agent_environment(options.lib, options.devsim, PROFAGENT_OUTPUT_DIR=out_dir,
                            PROFAGENT_PROFILE_MEMORY="1", PROFAGENT_SUMMARIES="all")
    command = [os.path.join(options.bin, program[0]), *program[1:]]
    done = run(command, env)
    if done.returncode != 0:
        raise SystemExit(f"golden: {' '.join(command)} exited {done.returncode}\n{done.stderr[-2000:]}")


def produced(out_dir, suffix):
    found = glob.glob(os.path.join(out_dir, f"*.w1.{suffix}"))
    if len(found) != 1:
        raise SystemExit(f"golden: expected one *.w1.{suffix} in {out_dir}, found {found}")
    return found[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib")
    parser.add_argument("--devsim")
    parser.add_argument("--bin")
    parser.add_argument("--update", action="store_true")
    parser.add_argument("--normalise", metavar="FILE")
    options = parser.parse_args()
    if options.normalise:
        sys.stdout.write(normalise(options.normalise, os.path.dirname(os.path.abspath(options.normalise))))
        return 0
    if not (options.lib and options.devsim and options.bin):
        parser.error("--lib, --devsim and --bin are needed")
    differing = []
    with tempfile.TemporaryDirectory(prefix="profagent-golden-") as work:
        for program, files in RUNS.items():
            out_dir = os.path.join(work, program[0])
            run_program(options, program, out_dir)
            for suffix, golden in files.items():
                text = normalise(produced(out_dir, suffix), out_dir)
                expected_path = os.path.join(EXPECTED, golden)
                if options.update:
                    os.makedirs(EXPECTED, exist_ok=True)
                    with open(expected_path, "w", encoding="utf-8") as f:
                        f.write(text)
                    print(f"golden: wrote {expected_path}")
                    continue
                expected = open(expected_path, encoding="utf-8").read() if os.path.exists(expected_path) else ""
                if text != expected:
                    differing.append(golden)
                    sys.stdout.writelines(difflib.unified_diff(
                        expected.splitlines(True), text.splitlines(True), f"expected/{golden}", f"now/{golden}"))
    if differing:
        print(f"golden: {', '.join(differing)} differ from tests/golden/expected/ (a format change? "
              "if intended, rerun with --update and review the diff)")
        return 1
    if not options.update:
        print(f"golden: {sum(len(f) for f in RUNS.values())} files as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
