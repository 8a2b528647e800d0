#!/usr/bin/python3
"""Every ac2g arrow of a trace survives Chromium's legacy trace viewer (catapult):

    catapult_flows_check.py --catapult DIR --node NODE --chromium CHROMIUM --node-modules DIR TRACE_DIR

Turns the one *.trace.json of TRACE_DIR into a page with catapult's tracing/bin/trace2html,
opens it in headless Chromium (catapult_flows.mjs) and expects no import warning and as many
arrows as the trace has flow ends. Only the Python standard library is used.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    for option in ("--catapult", "--node", "--chromium", "--node-modules"):
        parser.add_argument(option, required=True)
    parser.add_argument("trace_dir")
    options = parser.parse_args()
    traces = glob.glob(os.path.join(options.trace_dir, "*.trace.json"))
    if len(traces) != 1:
        print(f"FAILED: expected one trace in {options.trace_dir}, found {traces}")
        return 1
    with open(traces[0], encoding="utf-8") as f:
        ends = sum(1 for e in json.load(f)["traceEvents"] if e.get("ph") == "f")
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "trace.html")
        subprocess.run([sys.executable, os.path.join(options.catapult, "tracing", "bin", "trace2html"), traces[0],
                        "--output", page], check=True, capture_output=True)
        shown = subprocess.run([options.node, os.path.join(HERE, "catapult_flows.mjs"), page, options.node_modules,
                                options.chromium], check=True, capture_output=True, text=True)
    got = json.loads(shown.stdout.strip().splitlines()[-1])
    if got["warnings"] != 0 or got["flows"] != ends:
        print(f"FAILED: catapult kept {got['flows']} of {ends} arrows with {got['warnings']} import warnings: {got['first']}")
        return 1
    print(f"passed: catapult shows all {ends} arrows, 0 import warnings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
