#!/usr/bin/python3
"""Acceptance runs of `profagent report`: a real workload makes a trace, `profagent report`
prints every summary and the phases it found, and recompute.py agrees on every number.

    accept.py --list
    accept.py CASE --profagent BIN --lib DIR --bin DIR --devsim DIR --work DIR

Cases: torch (a torch.profiler run of a small model with a DataLoader, backward and SGD),
torch_gz (the same trace gzipped), torch_legacy (the file this torch's export_chrome_trace
writes), diopi (the DIOPI demo under LD_PRELOAD, memory profiled), windows (demo_train with
two step windows: each window's trace).
"""
import argparse
import glob
import shutil
import stat
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from agent_run import agent_environment, run  # noqa: E402
from recompute import NO_REPORT, SKIP  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = "/usr/bin/python3"
TITLES = ["Device Summary", "Overview Summary", "Model Summary", "Distributed Summary", "Operator Summary",
          "Kernel Summary", "Memory Manipulation Summary", "UserDefined Summary", "Perf Summary", "Step Trace",
          "Operator Type Statistics"]
TORCH_PHASES = ["Dataloader=enumerate(DataLoader)", "Forward=inferred", "Backward=evaluate_function",
                "Optimization=Optimizer"]
DIOPI_PHASES = ["Forward=inferred", "Backward=Backward", "Optimization=DIOPI"]


def sh(cmd, env=None, cwd=None):
    p = run(cmd, env, timeout=None, cwd=cwd)
    if NO_REPORT in p.stderr:
        print("accept: SKIPPED, %s has no report command yet" % cmd[0])
        sys.exit(SKIP)
    if p.returncode != 0:
        raise SystemExit("accept: %s exited %d\n%s\n%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:],
                                                          p.stderr[-2000:]))
    return p.stdout


def text_report(a, trace, phases):
    """The text report shows every summary title and names how each expected phase was found."""
    text = sh([a.profagent, "report", trace])
    missing = [t for t in TITLES if t not in text]
    if missing:
        raise SystemExit("accept: the text report of %s lacks %s\n%s" % (trace, missing, text[:3000]))
    for spec in phases:
        phase = spec.split("=")[0]
        if phase not in text:
            raise SystemExit("accept: the text report does not name the %s phase" % phase)
    print(text[:4000])


def recompute(a, trace, phases, *extra):
    cmd = [PY, os.path.join(HERE, "recompute.py"), "--profagent", a.profagent, trace, *extra]
    for p in phases:
        cmd += ["--expect-phase", p]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    print(p.stdout)
    if p.returncode == SKIP:
        sys.exit(SKIP)
    if p.returncode != 0:
        raise SystemExit("accept: recompute.py disagrees on %s %s" % (trace, " ".join(extra)))


def torch_trace(a):
    stem = os.path.join(a.work, "torch_train")
    sh([PY, os.path.join(HERE, "programs", "torch_train.py"), stem])
    return stem


def case_torch(a):
    trace = torch_trace(a) + ".json"
    text_report(a, trace, TORCH_PHASES)
    recompute(a, trace, TORCH_PHASES)
    recompute(a, trace, TORCH_PHASES, "--op-detail", "--thread-sep", "--quick")
    recompute(a, trace, TORCH_PHASES, "--steps", "3-4", "--quick")
    recompute(a, trace, TORCH_PHASES, "--sort-by", "CPUAvg", "--row-limit", "3", "--quick")


def case_torch_gz(a):
    recompute(a, torch_trace(a) + ".json.gz", TORCH_PHASES, "--quick")


def case_torch_legacy(a):
    recompute(a, torch_trace(a) + ".legacy.json", TORCH_PHASES, "--quick")


def agent_env(a, **extra):
    return agent_environment(os.path.join(a.lib, "libprofagent.so"), a.devsim, base=os.environ,
                             PROFAGENT_OUTPUT_DIR=os.path.join(a.work, "out"), **extra)


def traces_of(a):
    found = sorted(glob.glob(os.path.join(a.work, "out", "*.trace.json")))
    if not found:
        raise SystemExit("accept: the run wrote no trace into %s/out" % a.work)
    return found


AGENT_DEFAULT = "device,overview,model,distributed,operator,kernel,memory_manipulation,user_defined,perf," \
                "step_trace,op_type,memory"


def without_header(text):
    """The report's text without its "==> file (...) <==" line."""
    first, _, rest = text.partition("\n")
    if not first.startswith("==> "):
        raise SystemExit("accept: the text report does not start with its header line:\n" + text[:500])
    return rest


def same_as_agent(a, trace):
    """One implementation: the summary file and the table the agent wrote at the window's end are
    exactly what `profagent report` prints from the window's trace (same sort key and rows)."""
    stem = trace[:-len(".trace.json")]
    with open(stem + ".summary.txt") as f:
        written = f.read()
    printed = without_header(sh([a.profagent, "report", "--summary", AGENT_DEFAULT, "--sort-by", "cuda_time_total",
                                 trace]))
    if printed != written:
        import difflib
        diff = "".join(list(difflib.unified_diff(written.splitlines(True), printed.splitlines(True),
                                                 "summary.txt", "profagent report"))[:60])
        raise SystemExit("accept: %s.summary.txt differs from profagent report:\n%s" % (stem, diff))
    table = without_header(sh([a.profagent, "report", "--summary", "key_averages", "--sort-by", "cuda_time_total",
                               trace]))
    table = table.split("\n", 1)[1].rstrip("\n")  # below the "key_averages" title line
    overhead = table.rpartition("\n")[2]  # the report ends with the overhead line; so does table.txt
    if not overhead.startswith("profagent overhead: "):
        raise SystemExit("accept: the report of %s does not end with the overhead line:\n%s" % (trace, table[-500:]))
    table = table[: -len(overhead)].rstrip("\n")
    with open(stem + ".table.txt") as f:
        written_table = f.read()
        if not written_table.rstrip("\n").endswith(overhead):
            raise SystemExit("accept: %s.table.txt does not end with the report's overhead line %r" % (stem, overhead))
        if not written_table.startswith(table):
            raise SystemExit("accept: %s.table.txt does not start with the key_averages table of the report:\n%s"
                             % (stem, table[:1500]))
    print("accept: %s: summary.txt and table.txt equal profagent report's (%d + %d bytes)"
          % (os.path.basename(stem), len(written), len(table)))


def run_diopi_demo(a):
    sh([PY, os.path.join(ROOT, "tests", "vendorsim", "train.py"), "--framework",
        os.path.join(a.lib, "libframeworksim.so"), "--steps", "4"], env=agent_env(a, PROFAGENT_PROFILE_MEMORY="1"))
    (trace,) = traces_of(a)
    return trace


def case_html(a):
    """`--format html` of a real trace, opened in headless Chromium and checked against the JSON
    the same command writes (tests/report/html_check.mjs)."""
    trace = run_diopi_demo(a)
    page, data = os.path.join(a.work, "report.html"), os.path.join(a.work, "report.json")
    sh([a.profagent, "report", "--format", "json", "--output", data, trace])
    sh([a.profagent, "report", "--format", "html", "--output", page, trace])
    # An output that is not a regular file is written into, never renamed over.
    sh([a.profagent, "report", "--output", os.devnull, trace])
    if not stat.S_ISCHR(os.stat(os.devnull).st_mode):
        raise SystemExit("accept: --output %s replaced the device" % os.devnull)
    node_modules = os.path.join(a.bin, os.pardir, "node", "node_modules")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    sh([shutil.which("node"), os.path.join(HERE, "html_check.mjs"), "--html", page, "--json", data,
        "--screenshot", os.path.join(a.work, "report.png"), "--node-modules", node_modules, "--chromium", chromium])


def case_diopi(a):
    trace = run_diopi_demo(a)
    same_as_agent(a, trace)
    text_report(a, trace, DIOPI_PHASES)
    recompute(a, trace, DIOPI_PHASES)
    recompute(a, trace, DIOPI_PHASES, "--op-detail", "--sort-by", "GPUTotal", "--quick")


def case_windows(a):
    sh([os.path.join(a.bin, "demo_train"), "12"],
       env=agent_env(a, PROFAGENT_SCHEDULE="wait=1,warmup=1,active=2,repeat=2"))
    traces = traces_of(a)
    if len(traces) != 2:
        raise SystemExit("accept: expected 2 window traces, got %s" % traces)
    for t in traces:
        same_as_agent(a, t)
        recompute(a, t, [])


LAUNCHER_PHASES = ["Dataloader=enumerate(DataLoader)", "Forward=nn.Module", "Backward=autograd.backward",
                   "Optimization=Optimizer"]


def case_launcher(a):
    """A torch program with no profiler code under `profagent run --step-on python`: the
    launcher's Python hook gives the steps and every phase, and recompute.py agrees."""
    program = os.path.join(ROOT, "tests", "preload", "programs", "train_phases.py")
    out = os.path.join(a.work, "out")
    sh([a.profagent, "run", "--step-on", "python", "--output-dir", out, "--", PY, program, "6"],
       env=dict(os.environ, LD_LIBRARY_PATH=a.devsim))
    for trace in traces_of(a):
        text_report(a, trace, LAUNCHER_PHASES)
        recompute(a, trace, LAUNCHER_PHASES)
        same_as_agent(a, trace)


def case_bad_input(a):
    """Every kind of bad file: one stderr line naming it, exit status 2, the good file still
    reported, never a traceback or a crash."""
    good = os.path.join(a.work, "good.json")
    with open(good, "w") as f:
        f.write('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, '
                '"ts": 10, "dur": 5}]}')
    bad = {"not_json.json": b"hello", "truncated.json": b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1',
           "empty_events.json": b'{"traceEvents": []}', "no_events.json": b'{"schemaVersion": 1}',
           "missing_ts.json": b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "dur": 1, "pid": 1, "tid": 1}]}',
           "bad_utf8.json": b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a\xff\xfe", "ts": 1, "dur": 1, '
                            b'"pid": 1, "tid": 1}]}'}
    for name, data in bad.items():
        path = os.path.join(a.work, name)
        with open(path, "wb") as f:
            f.write(data)
        p = subprocess.run([a.profagent, "report", "--summary", "overview", good, path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, errors="replace")
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        if p.returncode != 2 or len(lines) != 1 or name not in lines[0] or "Overview Summary" not in p.stdout:
            raise SystemExit("accept: %s: exit %d, stderr %r, stdout has the good file: %s"
                             % (name, p.returncode, p.stderr, "Overview Summary" in p.stdout))
        print("accept: %s -> exit 2, %s" % (name, lines[0]))


CASES = {"torch": case_torch, "torch_gz": case_torch_gz, "torch_legacy": case_torch_legacy,
         "diopi": case_diopi, "windows": case_windows, "html": case_html,
         "launcher": case_launcher, "bad_input": case_bad_input}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?")
    ap.add_argument("--list", action="store_true")
    for opt in ("--profagent", "--lib", "--bin", "--devsim", "--work"):
        ap.add_argument(opt)
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    if os.path.isdir(a.work):
        subprocess.run(["rm", "-rf", a.work], check=True)
    os.makedirs(a.work)
    CASES[a.case](a)
    print("accept %s: ok" % a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
