"""Trace checks for programs that launch CUDA graphs (tests/workloads/graph_branches.cu)."""
import collections

from checkers import Trace, check_workload_unchanged, expect, only_file


def check_graph_launches_linked(context):
    """As workload_unchanged, and every kernel of a graph launch is linked (ac2g flow and
    correlation) to its cudaGraphLaunch call, carries its graph and node ids, and each launch
    ran the same nodes."""
    check_workload_unchanged(context)
    trace = Trace(only_file(context.out_dir, "*.trace.json"))
    launches = {e["args"]["correlation"]: e for e in trace.runtime if e["name"].startswith("cudaGraphLaunch")}
    expect(launches, "no cudaGraphLaunch in the trace")
    kernels = [e for e in trace.device if e.get("cat") == "kernel"]
    nodes_per_launch = collections.defaultdict(set)
    for k in kernels:
        args = k.get("args", {})
        corr = args.get("correlation")
        expect(corr in launches, f"kernel {k['name']} has correlation {corr}, no cudaGraphLaunch's")
        launcher = trace.launcher(k)
        expect(launcher is not None and launcher["name"].startswith("cudaGraphLaunch"),
               f"kernel {k['name']} is not linked by a flow to its cudaGraphLaunch")
        expect(args.get("graph id", 0) > 0 and args.get("graph node id", 0) > 0,
               f"kernel {k['name']} lacks its graph or node id: {args}")
        nodes_per_launch[corr].add(args["graph node id"])
    node_sets = {frozenset(v) for v in nodes_per_launch.values()}
    expect(len(nodes_per_launch) == len(launches) and len(node_sets) == 1,
           f"the {len(launches)} launches ran different kernel nodes: {sorted(map(sorted, node_sets))}")
    context.summary += (f"; {len(kernels)} graph kernels linked to {len(launches)} cudaGraphLaunch calls, "
                        f"{len(next(iter(node_sets)))} nodes each")
