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
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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
    p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
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
    env = dict(os.environ, LD_LIBRARY_PATH=a.devsim, PROFAGENT_OUTPUT_DIR=os.path.join(a.work, "out"), **extra)
    env["LD_PRELOAD"] = os.path.join(a.lib, "libprofagent.so")
    return env


def traces_of(a):
    found = sorted(glob.glob(os.path.join(a.work, "out", "*.trace.json")))
    if not found:
        raise SystemExit("accept: the run wrote no trace into %s/out" % a.work)
    return found


def case_diopi(a):
    sh([PY, os.path.join(ROOT, "tests", "vendorsim", "train.py"), "--framework",
        os.path.join(a.lib, "libframeworksim.so"), "--steps", "4"], env=agent_env(a, PROFAGENT_PROFILE_MEMORY="1"))
    (trace,) = traces_of(a)
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
        recompute(a, t, [])


CASES = {"torch": case_torch, "torch_gz": case_torch_gz, "torch_legacy": case_torch_legacy,
         "diopi": case_diopi, "windows": case_windows}


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
