"""Checks that a trace carries what Kineto writes and what HolisticTraceAnalysis keys on
(pytorch/kineto libkineto/src/output_json.cpp and CuptiActivity.h; facebookresearch/
HolisticTraceAnalysis hta/analyzers/critical_path_analysis.py): a unique `correlation` and the
CUPTI `cbid` on every runtime/driver call, event waits naming the cudaEventRecord they wait
for, gpu_user_annotation slices spanning the device work of their scope, Kineto's occupancy
args on kernels, and every pid/tid/correlation/flow id within 32 bits.

Python standard library only. `check_kineto_fields(trace)` takes a checkers.Trace."""
import math
import os
import re

from checkers import expect, ns

CALL_CATEGORIES = ("cuda_runtime", "cuda_driver")
U32 = 1 << 32


def cuda_include():
    return os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")


def header_cbid(header, enumerator):
    with open(os.path.join(cuda_include(), header), encoding="utf-8") as f:
        match = re.search(r"\b" + enumerator + r"\s*=\s*(\d+)", f.read())
    expect(match, f"{enumerator} is not in {header}")
    return int(match.group(1))


# Names this check knows the CUPTI enumerator of (the newest form of each function).
KNOWN_CBIDS = {
    "cudaLaunchKernel": ("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000"),
    # <<<>>> (nvcc 13: __cudaLaunchKernel) is reported under cudaLaunchKernel's id, as NVIDIA's runtime does.
    "__cudaLaunchKernel": ("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000"),
    "cudaEventRecord": ("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020"),
    "cudaStreamWaitEvent": ("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020"),
    "cudaMemcpyAsync": ("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020"),
    "cudaMemcpyAsync_ptsz": ("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000"),
    "cuLaunchKernel": ("cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel"),
    "cudaGraphLaunch": ("cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000"),
}


def check_calls(calls):
    """Every call has a correlation of its own and a cbid; known names have the header's."""
    seen = {}
    for e in calls:
        args = e.get("args", {})
        corr = args.get("correlation")
        expect(isinstance(corr, int) and 0 < corr < U32, f"{e['name']} has correlation {corr!r}")
        expect(corr not in seen, f"{e['name']} and {seen.get(corr)} share correlation {corr}")
        seen[corr] = e["name"]
        expect(isinstance(args.get("cbid"), int), f"{e['name']} has no cbid")
    checked = 0
    for e in calls:
        entry = e["args"].get("entry point", e["name"])
        if entry in KNOWN_CBIDS:
            wanted = header_cbid(*KNOWN_CBIDS[entry])
            expect(e["args"]["cbid"] == wanted, f"{e['name']} has cbid {e['args']['cbid']}, the header says {wanted}")
            checked += 1
    expect(checked > 0, "no call with a known CUPTI cbid in the trace")
    check_launch_names(calls)
    return len(seen), checked


# The launch calls HolisticTraceAnalysis recognises (hta/common/trace_symbol_table.py,
# get_runtime_launch_events_mask); anything else launching a kernel is invisible to its launch
# statistics and critical path.
HTA_LAUNCH_NAMES = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
                    "cudaMemcpyAsync", "cudaMemsetAsync"}
PRIVATE_LAUNCH_ENTRIES = {"__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "cudaLaunchKernel_ptsz",
                          "cudaLaunchKernelExC_ptsz", "cuLaunchKernel_ptsz", "cuLaunchKernelEx_ptsz",
                          "cudaMemcpyAsync_ptsz", "cudaMemsetAsync_ptsz"}


def check_launch_names(calls):
    """Launches through nvcc's private entry or a _ptsz twin carry the public name HTA keys on."""
    for e in calls:
        expect(e["name"] not in PRIVATE_LAUNCH_ENTRIES, f"a call is named by its entry point {e['name']}")
        entry = e["args"].get("entry point")
        if entry is not None:
            expect(entry in PRIVATE_LAUNCH_ENTRIES and e["name"] in HTA_LAUNCH_NAMES,
                   f"entry point {entry} is named {e['name']}")


def check_event_waits(trace, calls):
    """Each event wait names the last cudaEventRecord of its event before the waiting call,
    and the stream that record was issued on. The programs record on the stream they launched
    on just before, so that launch's kernel stream is the recorded stream."""
    by_corr = {e["args"]["correlation"]: e for e in calls}
    kernel_stream = {e["args"]["correlation"]: e["args"]["stream"] for e in trace.device if e["cat"] == "kernel"}
    waits = [e for e in trace.complete if e.get("cat") == "cuda_sync"
             and e["name"] in ("Stream Wait Event", "Event Sync")]
    for w in waits:
        args = w["args"]
        caller = by_corr.get(args["correlation"])
        expect(caller is not None, f"{w['name']} has no runtime call with correlation {args['correlation']}")
        records = [e for e in calls if e["name"].startswith("cudaEventRecord") and e["start_ns"] <= caller["start_ns"]]
        expect(records, f"no cudaEventRecord before {caller['name']}")
        record = max(records, key=lambda e: e["start_ns"])
        expect(args.get("wait_on_cuda_event_record_corr_id") == record["args"]["correlation"],
               f"{w['name']} waits on record {args.get('wait_on_cuda_event_record_corr_id')}, "
               f"the last cudaEventRecord before it is {record['args']['correlation']}")
        launches = [e for e in calls if e["tid"] == record["tid"] and e["start_ns"] < record["start_ns"]
                    and e["args"]["correlation"] in kernel_stream]
        expect(launches, "no launch before the cudaEventRecord")
        launch = max(launches, key=lambda e: e["start_ns"])
        expect(args.get("wait_on_stream") == kernel_stream[launch["args"]["correlation"]],
               f"{w['name']} says the event was recorded on stream {args.get('wait_on_stream')}, "
               f"the launch before the record used {kernel_stream[launch['args']['correlation']]}")
    # A wait inside a stream capture is an edge of the graph: no synchronization record.
    waiting_calls = [e for e in calls if re.match(r"^(cudaStreamWaitEvent|cudaEventSynchronize)", e["name"])
                     and not e["args"].get("captured")]
    expect(len(waits) == len(waiting_calls),
           f"{len(waiting_calls)} event-waiting calls but {len(waits)} event-wait sync records")
    return len(waits)


def check_annotations(trace, calls):
    """Each gpu_user_annotation spans exactly the device work (on its row) issued by calls
    inside its scope on the scope's thread; every scope with device work has its slices."""
    scopes = {e["args"]["External id"]: e for e in trace.complete if e.get("cat") in ("user_annotation", "cpu_op")}
    by_corr = {e["args"]["correlation"]: e for e in calls}
    expected = {}
    for d in trace.device:
        call = by_corr.get(d["args"]["correlation"])
        expect(call is not None, f"device event {d['name']} has no call with its correlation")
        for ext, s in scopes.items():
            if s["tid"] == call["tid"] and s["start_ns"] <= call["start_ns"] and call["end_ns"] <= s["end_ns"]:
                span = expected.setdefault((ext, d["pid"], d["tid"]), [d["start_ns"], d["end_ns"]])
                span[0], span[1] = min(span[0], d["start_ns"]), max(span[1], d["end_ns"])
    annotations = [e for e in trace.complete if e.get("cat") == "gpu_user_annotation"]
    got = {}
    for a in annotations:
        key = (a["args"]["External id"], a["pid"], a["tid"])
        expect(key not in got, f"two gpu_user_annotation slices for {key}")
        got[key] = a
        expect(a["name"] == scopes[key[0]]["name"], f"annotation {a['name']} names scope {scopes[key[0]]['name']}")
    expect(set(got) == set(expected), f"annotations {sorted(set(got) ^ set(expected))[:4]} differ from the scopes' work")
    for key, (start, end) in expected.items():
        a = got[key]
        expect(abs(a["start_ns"] - start) <= 1 and abs(a["end_ns"] - end) <= 1,
               f"{a['name']} spans {a['start_ns']}..{a['end_ns']}, its work {start}..{end}")
    return len(annotations)


def check_ids(trace):
    for e in trace.document["traceEvents"]:
        for field in ("pid", "tid"):
            value = e.get(field)
            expect(isinstance(value, int) and 0 <= value < U32, f"{e.get('name')} has {field} {value!r}")
        if e.get("ph") in ("s", "f"):
            expect(0 < e["id"] < U32, f"flow id {e['id']} is not a 32-bit id")


def occupancy_percent(device, threads, registers, shared, blocks_per_sm):
    """The occupancy estimate for compute capability 7.x devices (devsim is 7.5), from the
    published rules: warp slots, registers in 256-register warp granules over 4 partitions,
    shared memory in 256-byte granules from the carveout, and 16 (7.5) or 32 blocks per SM."""
    expect(device["computeMajor"] == 7, "the occupancy check knows compute capability 7.x only")
    turing = device["computeMinor"] == 5
    warps = -(-threads // device["warpSize"])
    by_warps = device["maxThreadsPerMultiprocessor"] // device["warpSize"] // warps
    per_warp = -(-registers * device["warpSize"] // 256) * 256
    by_regs = 10 ** 9 if per_warp == 0 else (device["regsPerMultiprocessor"] // 4 // per_warp) * 4 // warps
    allocated = -(-shared // 256) * 256
    steps = [32, 64] if turing else [0, 8, 16, 32, 64, 96]
    carveout = next(k * 1024 for k in steps if device["sharedMemPerMultiprocessor"] <= k * 1024)
    if allocated > carveout:
        carveout = next(k * 1024 for k in steps if allocated <= k * 1024)
    by_smem = 10 ** 9 if allocated == 0 else carveout // allocated
    if allocated > device["sharedMemPerBlock"]:
        by_smem = 0
    active = min(by_warps, by_regs, by_smem, 16 if turing else 32)
    percent = min(active, blocks_per_sm) * threads / device["maxThreadsPerMultiprocessor"] * 100
    return math.floor(percent + 0.5)  # Kineto's lround: halves away from zero


def check_kernels(trace):
    devices = {d["id"]: d for d in trace.document["deviceProperties"]}
    kernels = [e for e in trace.device if e["cat"] == "kernel"]
    for k in kernels:
        args, device = k["args"], devices[k["args"]["device"]]
        for key in ("queued", "blocks per SM", "warps per SM", "est. achieved occupancy %"):
            expect(key in args, f"kernel {k['name']} has no {key!r}")
        grid, block = math.prod(args["grid"]), math.prod(args["block"])
        blocks_per_sm = grid / device["numSms"]
        expect(math.isclose(args["blocks per SM"], blocks_per_sm, rel_tol=1e-6), f"blocks per SM {args['blocks per SM']}")
        expect(math.isclose(args["warps per SM"], blocks_per_sm * block / 32, rel_tol=1e-6), f"warps per SM {args['warps per SM']}")
        wanted = occupancy_percent(device, block, args["registers per thread"], args["shared memory"], blocks_per_sm)
        expect(args["est. achieved occupancy %"] == wanted,
               f"{k['name']}: occupancy {args['est. achieved occupancy %']} %, recomputed {wanted} %")
    return len(kernels)


def check_kineto_fields(trace):
    calls = [e for e in trace.complete if e.get("cat") in CALL_CATEGORIES]
    check_ids(trace)
    unique, cbids = check_calls(calls)
    waits = check_event_waits(trace, calls)
    annotations = check_annotations(trace, calls)
    kernels = check_kernels(trace)
    return (f"{unique} unique call correlations ({cbids} cbids checked), {waits} event waits linked, "
            f"{annotations} gpu annotations, {kernels} kernels' occupancy recomputed")
