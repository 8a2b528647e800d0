#!/usr/bin/python3
"""A manual check (HolisticTraceAnalysis is not installed by scripts/setup.sh): HTA's
communication/computation overlap and potential stragglers on a folder of profagent's per-rank
traces, beside `profagent report --ranks`'s figures.

    hta_ranks_check.py --hta DIR --profagent build/bin/profagent TRACE_DIR

DIR holds HTA's `hta` package (a checkout of facebookresearch/HolisticTraceAnalysis); plotting
and graph modules are stubbed as in tests/report/hta_check.py. HTA's straggler analysis only
looks at kernels named ncclKernel* (NCCL 2.18 and older): run the job with
DEVSIM_NCCL_KERNEL_NAMES=legacy for it, and it drops communication kernels shorter than a share
of the iteration — the straggler's own kernel, which does not wait, is one of them.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import hta_check  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("traces")
    ap.add_argument("--hta", required=True)
    ap.add_argument("--profagent", required=True)
    a = ap.parse_args()
    hta_check.stub_missing("plotly.express", "plotly.graph_objects", "plotly.subplots", "networkx", "pydot")
    sys.path.insert(0, a.hta)
    from hta.trace_analysis import TraceAnalysis
    analysis = TraceAnalysis(trace_dir=a.traces)
    overlap = analysis.get_comm_comp_overlap(visualize=False)
    ours = json.loads(subprocess.run([a.profagent, "report", "--ranks", a.traces, "--format", "json"],
                                     capture_output=True, text=True, check=True).stdout)
    for _, row in overlap.iterrows():
        mine = ours["ranks"][str(int(row["rank"]))]["overlap_pct_of_comm"]
        print(f"rank {int(row['rank'])}: HTA overlap {row['comp_comm_overlap_pctg']:.2f} % of communication, "
              f"profagent {mine:.2f} %")
    try:
        print("HTA potential_stragglers:", analysis.get_potential_stragglers(num_candidates=1),
              "profagent:", ours["straggler"])
    except ValueError as error:  # no kernel named ncclKernel*: HTA finds no candidate
        print(f"HTA potential_stragglers failed: {error} (profagent: {ours['straggler']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
