#!/usr/bin/python3
"""A manual check (not a CTest: HolisticTraceAnalysis is not installed by scripts/setup.sh):
how HTA reads profagent's traces. Runs HTA's kernel and temporal breakdowns on a folder of
profagent traces with HTA's defaults and with the two settings docs/report.md recommends, and
compares the kernel time with `profagent report`'s.

    hta_check.py --hta DIR --profagent build/bin/profagent TRACE_DIR
    hta_check.py --hta DIR --operators TRACE_DIR

--operators: HTA's operator analyses on a trace with operators (torch's, from NVTX: the trace
of tests/preload/programs/torch_nvtx_app.cu): get_aten_op_kernels_and_delay, which needs
operators as cpu_op events around their launches, and critical_path_analysis of the first
ProfilerStep (needs Debian's python3-networkx); prints what each returned.

DIR holds HTA's `hta` package (a checkout of facebookresearch/HolisticTraceAnalysis). Debian's
python3-pandas, numpy and yaml are used; plotly, networkx and pydot (plots and critical paths
only) are replaced by empty modules when they are not installed.
"""
import argparse
import json
import os
import subprocess
import sys
import types

CONFIGS = [("HTA defaults", {}, False), ("HTA_DISABLE_NS_ROUNDING=1", {"HTA_DISABLE_NS_ROUNDING": "1"}, False),
           ("include_last_profiler_step=True", {}, True),
           ("both", {"HTA_DISABLE_NS_ROUNDING": "1"}, True)]


def stub_missing(*names):
    """Stand-ins for the plotting and graph libraries the breakdowns never call: any attribute
    is an empty class (HTA derives a class from networkx.DiGraph at import)."""
    for name in names:
        try:
            __import__(name)
        except ImportError:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                module = types.ModuleType(".".join(parts[:i]))
                module.__path__ = []
                module.__getattr__ = stand_in
                sys.modules.setdefault(".".join(parts[:i]), module)


def stand_in(attr):
    if attr.startswith("__"):
        raise AttributeError(attr)
    return type(attr, (), {})


def child(a):
    """In a fresh process (HTA reads its environment once): the figures of one configuration."""
    stub_missing("plotly.express", "plotly.graph_objects", "plotly.subplots", "networkx", "pydot")
    sys.path.insert(0, a.hta)
    from hta.trace_analysis import TraceAnalysis
    analysis = TraceAnalysis(trace_dir=a.traces, include_last_profiler_step=a.include_last)
    types_df, _ = analysis.get_gpu_kernel_breakdown(visualize=False)
    temporal = analysis.get_temporal_breakdown(visualize=False)
    compute = types_df[types_df["kernel_type"] == "COMPUTATION"]["sum"].sum()
    print(json.dumps({"computation_us": float(compute),
                      "compute_time_us": float(temporal["compute_time(us)"].sum()),
                      "idle_time_us": float(temporal["idle_time(us)"].sum())}))


def operators_child(a):
    """HTA's aten-op launch statistics and the critical path of the first step, as figures."""
    stub_missing("plotly.express", "plotly.graph_objects", "plotly.subplots", "pydot")
    sys.path.insert(0, a.hta)
    from hta.analyzers.cuda_kernel_analysis import CudaKernelAnalysis
    from hta.trace_analysis import TraceAnalysis
    CudaKernelAnalysis.visualize_aten_op_kernels_and_overhead = classmethod(lambda *args, **kwargs: None)  # plotly
    analysis = TraceAnalysis(trace_dir=a.traces)
    stats = analysis.get_aten_op_kernels_and_delay()[0]
    graph, ok = analysis.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=0)
    path = graph.get_critical_path_breakdown() if ok else None
    print(json.dumps({"aten_ops": sorted(stats["aten_op_name"].unique().tolist()),
                      "launches": int(stats["occurrence_count"].sum()),
                      "critical_path_ok": bool(ok),
                      "critical_path_edges": 0 if path is None else int(len(path))}))


def profagent_kernel_us(a):
    """The Kernel Summary's total (summed kernel time of the steps) of every trace, in us."""
    total = 0
    for name in sorted(os.listdir(a.traces)):
        if not name.endswith(".trace.json"):
            continue
        out = subprocess.run([a.profagent, "report", "--format", "json", "--summary", "kernel",
                              os.path.join(a.traces, name)], stdout=subprocess.PIPE, check=True)
        for trace in json.loads(out.stdout)["traces"]:
            total += sum(r["gpu"]["total_ns"] for r in trace["summaries"]["kernel"]["rows"])
    return total / 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("traces")
    ap.add_argument("--hta", required=True)
    ap.add_argument("--profagent")
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--include-last", action="store_true")
    ap.add_argument("--operators", action="store_true")
    a = ap.parse_args()
    if a.operators:
        return operators_child(a)
    if a.child:
        return child(a)
    reference = profagent_kernel_us(a)
    print("profagent report: kernel time %.1f us" % reference)
    for title, env, include_last in CONFIGS:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--hta", a.hta, a.traces]
        if include_last:
            cmd.append("--include-last")
        out = subprocess.run(cmd, env=dict(os.environ, **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True)
        if out.returncode != 0:
            print("%s: HTA failed:\n%s" % (title, out.stderr[-3000:]))
            continue
        got = json.loads(out.stdout.strip().splitlines()[-1])
        print("%-34s computation kernels %.1f us (%+.1f%% vs profagent), compute time %.1f us, idle %.1f us" % (
            title, got["computation_us"], 100.0 * (got["computation_us"] - reference) / reference,
            got["compute_time_us"], got["idle_time_us"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
