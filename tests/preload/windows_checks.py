#!/usr/bin/python3
"""Step window tests: runs a command (usually `profagent run ...`) whose step structure is
known by construction, then checks exactly which steps landed in which window's files.

    windows_checks.py --out DIR --expect SPEC [--loose] [--kernels] [--launcher] -- CMD...

SPEC (no quotes, so CMake passes it as is): windows separated by '/', each
W:A-B:WORK[:ANNOTATED] — window number, step range ('-' for a whole-run window), the steps whose
work it must hold, and optionally the ProfilerStep numbers expected (default A..B); "none": no
window at all. e.g. "1:3-4:3,4/2:7-8:7,8".
A step k of the programs leaves a user range "work_<k>" (and, with --kernels, a step_kernel
launch with k+1 blocks) in the window that recorded it. Each expected window must exist as
<host>.<pid>.w<N>[.steps<a>-<b>].trace.json holding exactly the witnesses of "work" (none from
idle or warmup steps) and one ProfilerStep#N annotation per step of its range, which together hold
every work_<k> range of the window (when it has steps); no other window
may exist. --loose (time:MS markers) checks only that windows are consistent and disjoint.
A process that wrote windows says no "wrote nothing" line at exit.
--launcher: the launcher's closing lines list every trace written. --count NAME=N: every window
holds exactly N complete events named NAME (operators, whose steps carry no work_<k> range).
Only the Python standard library is used.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from trace_reader import complete_events, load_trace  # noqa: E402

NAME = re.compile(r"\.w(\d+)(?:\.steps(\d+)-(\d+))?\.trace\.json$")


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def read_window(path):
    trace = load_trace(path)
    drops = trace["profagent_drops"]
    complete = complete_events(trace)
    names = [e["name"] for e in complete if e.get("cat") == "user_annotation"]
    work = sorted(int(m.group(1)) for m in (re.fullmatch(r"work_(\d+)", n) for n in names) if m)
    steps = sorted(int(n[len("ProfilerStep#"):]) for n in names if n.startswith("ProfilerStep#"))
    kernels = sorted(e["args"]["grid"][0] - 1 for e in complete
                     if e.get("cat") == "kernel" and e["name"].startswith("step_kernel"))
    stray = drops["late_device_records"] + drops["unmatched_device_records"]
    step_spans = [(e["ts"], e["ts"] + e["dur"]) for e in complete
                  if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    # The work_<k> ranges no ProfilerStep of the window holds (a step cut short, or misplaced).
    outside = sorted(n for e in complete if re.fullmatch(r"work_\d+", n := e["name"])
                     and e.get("cat") == "user_annotation"
                     and not any(a <= e["ts"] and e["ts"] + e["dur"] <= b for a, b in step_spans))
    return {"work": work, "steps": steps, "kernels": kernels, "stray_device_records": stray,
            "work_outside_steps": outside}


def windows_written(out_dir):
    found = {}
    for path in glob.glob(os.path.join(out_dir, "*.trace.json")):
        m = NAME.search(path)
        expect(m, f"unexpected trace file name {path}")
        steps = [int(m.group(2)), int(m.group(3))] if m.group(2) else None
        expect(int(m.group(1)) not in found, f"two traces for window {m.group(1)}")
        found[int(m.group(1))] = (path, steps)
    return found


def numbers(text):
    return [int(n) for n in text.split(",") if n]


def parse_expect(spec):
    if spec == "none":
        return []
    wanted = []
    for item in spec.split("/"):
        fields = item.split(":")
        steps = None if fields[1] == "-" else [int(n) for n in fields[1].split("-")]
        w = {"w": int(fields[0]), "steps": steps, "work": numbers(fields[2])}
        if len(fields) > 3:
            w["annotated"] = numbers(fields[3])
        wanted.append(w)
    return wanted


def check_exact(found, wanted, kernels):
    expect(sorted(found) == sorted(w["w"] for w in wanted),
           f"windows written {sorted(found)}, expected {[w['w'] for w in wanted]}: "
           f"{[os.path.basename(p) for p, _ in found.values()]}")
    for w in wanted:
        path, steps = found[w["w"]]
        expect(steps == w["steps"], f"window {w['w']} named with steps {steps}, expected {w['steps']}")
        content = read_window(path)
        expect(content["work"] == sorted(w["work"]),
               f"window {w['w']} holds the work of steps {content['work']}, expected {sorted(w['work'])}")
        if kernels:
            expect(content["kernels"] == sorted(w["work"]),
                   f"window {w['w']} holds step_kernel launches of steps {content['kernels']}")
            # CUPTI is paused outside warmup and active steps: no record of an idle step's
            # kernels reaches the agent to be thrown away as unmatched or late.
            expect(content["stray_device_records"] == 0,
                   f"window {w['w']} saw {content['stray_device_records']} device records of other steps")
        if steps is not None or "annotated" in w:
            wanted_steps = w.get("annotated") or list(range(steps[0], steps[1] + 1))
            expect(content["steps"] == wanted_steps,
                   f"window {w['w']} has ProfilerStep# {content['steps']}, expected {wanted_steps}")
        if content["steps"]:
            expect(not content["work_outside_steps"],
                   f"window {w['w']}: {content['work_outside_steps']} lie in none of its ProfilerStep# spans")
        expect(os.path.exists(path.replace(".trace.json", ".table.txt")), f"no table next to {path}")


def check_loose(found):
    expect(len(found) >= 1, "no window was written")
    seen = set()
    for number, (path, steps) in sorted(found.items()):
        content = read_window(path)
        expect(steps is not None, f"window {number} has no step range")
        expect(content["steps"] == list(range(steps[0], steps[1] + 1)),
               f"window {number}: ProfilerStep# {content['steps']} do not match its name {steps}")
        expect(not seen & set(content["work"]), f"window {number} repeats work of another window")
        seen |= set(content["work"])


def check_counts(found, counts):
    for spec in counts:
        name, wanted = spec.rsplit("=", 1)
        for number, (path, _) in sorted(found.items()):
            # The operators themselves, not their device-side gpu_user_annotation slices.
            seen = sum(1 for e in complete_events(load_trace(path))
                       if e.get("name") == name and e.get("cat") != "gpu_user_annotation")
            expect(seen == int(wanted), f"window {number} holds {seen} {name}, expected {wanted}")


def check_launcher_lines(stderr, found):
    listed = {line.strip() for line in stderr.splitlines() if line.startswith("  ")}
    for path, _ in found.values():
        expect(any(l.endswith(os.path.basename(path)) for l in listed),
               f"the launcher did not list {os.path.basename(path)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--expect", default="none")
    parser.add_argument("--loose", action="store_true")
    parser.add_argument("--kernels", action="store_true")
    parser.add_argument("--launcher", action="store_true")
    parser.add_argument("--count", action="append", default=[])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    shutil.rmtree(options.out, ignore_errors=True)
    os.makedirs(options.out)
    run = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=300)
    for suffix, text in (("stdout", run.stdout), ("stderr", run.stderr)):
        with open(os.path.join(options.out, "run." + suffix), "w") as f:
            f.write(text)
    try:
        expect(run.returncode == 0, f"the command exited with {run.returncode}")
        found = windows_written(options.out)
        if options.loose:
            check_loose(found)
        else:
            check_exact(found, parse_expect(options.expect), options.kernels)
        check_counts(found, options.count)
        # Once windows were written (and said so), the process has nothing to add at exit.
        nothing = [line for line in run.stderr.splitlines() if line.startswith("[profagent] wrote nothing")]
        expect(not (found and nothing), f"windows were written, yet the agent said {nothing}")
        if options.launcher:
            check_launcher_lines(run.stderr, found)
    except CheckFailed as failure:
        print(f"FAILED: {failure}\n--- command: {' '.join(command)}\n--- stderr:\n{run.stderr[-4000:]}")
        return 1
    print(f"passed: {len(found)} window(s): {sorted(os.path.basename(p) for p, _ in found.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
