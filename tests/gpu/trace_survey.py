"""What a trace holds, per category, in a form two runs can be compared by: the shape of real
CUPTI records as profagent writes them (and as torch.profiler writes them) on a GPU, next to
the same survey of a devsim run, so that every difference between NVIDIA's CUPTI and the
simulated one can be found and devsim corrected. Standard library only.

survey(document) -> dict; `trace_survey.py TRACE...` prints the surveys as JSON.
"""
import collections
import json
import sys

DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
SAMPLES_PER_CATEGORY = 2


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def category_survey(events):
    args = collections.Counter()
    for e in events:
        args.update((e.get("args") or {}).keys())
    names = list(dict.fromkeys(str(e.get("name")) for e in events))
    return {"count": len(events),
            "phases": sorted({str(e.get("ph")) for e in events}),
            "args": {key: count for key, count in sorted(args.items())},
            "names": names[:8], "distinct_names": len(names),
            "samples": [json.dumps(e, sort_keys=True)[:700] for e in events[:SAMPLES_PER_CATEGORY]]}


def stream_survey(device):
    """Per (device, stream): records out of start order, overlapping on one stream, zero or
    negative durations."""
    by_stream = collections.defaultdict(list)
    for e in device:
        by_stream[(e.get("pid"), e.get("tid"))].append(e)
    out_of_order = overlapping = 0
    for records in by_stream.values():
        starts = [float(e["ts"]) for e in records]
        out_of_order += sum(1 for a, b in zip(starts, starts[1:]) if b < a)
        ordered = sorted(records, key=lambda e: float(e["ts"]))
        overlapping += sum(1 for a, b in zip(ordered, ordered[1:])
                           if float(b["ts"]) < float(a["ts"]) + float(a["dur"]))
    return {"streams": len(by_stream), "records_out_of_start_order_in_file": out_of_order,
            "overlapping_on_one_stream": overlapping,
            "zero_duration": sum(1 for e in device if float(e["dur"]) == 0),
            "negative_duration": sum(1 for e in device if float(e["dur"]) < 0)}


def correlation_survey(complete, device):
    calls = {}
    for e in complete:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in (e.get("args") or {}):
            calls.setdefault(e["args"]["correlation"], e)
    delays = []
    unmatched = 0
    for e in device:
        call = calls.get((e.get("args") or {}).get("correlation"))
        if call is None:
            unmatched += 1
        else:
            delays.append(float(e["ts"]) - float(call["ts"]))
    issued = collections.Counter((e.get("args") or {}).get("correlation") for e in device)
    return {"device_records_without_their_call": unmatched,
            "calls_with_several_device_records": sum(1 for n in issued.values() if n > 1),
            "launch_to_start_us": {"min": percentile(delays, 0), "p50": percentile(delays, 0.5),
                                   "p99": percentile(delays, 0.99), "negative": sum(1 for d in delays if d < 0)}}


def survey(document):
    events = [e for e in document.get("traceEvents", []) if isinstance(e, dict)]
    complete = [e for e in events if e.get("ph") == "X" and "ts" in e and "dur" in e]
    device = [e for e in complete if e.get("cat") in DEVICE_CATEGORIES]
    by_category = collections.defaultdict(list)
    for e in events:
        by_category[str(e.get("cat", "(none)")) + ("" if e.get("ph") != "M" else " (metadata)")].append(e)
    return {"top_level_keys": sorted(k for k in document if k != "traceEvents"),
            "metadata": {k: document[k] for k in ("cupti_version", "cuda_runtime_version", "cuda_driver_version",
                                                   "deviceProperties", "profagent_drops") if k in document},
            "categories": {cat: category_survey(found) for cat, found in sorted(by_category.items())},
            "streams": stream_survey(device),
            "correlation": correlation_survey(complete, device),
            "flows": collections.Counter(e.get("ph") for e in events if e.get("cat") == "ac2g")}


def summary_line(result):
    """One line for the log: device record counts per category and the main anomalies."""
    counts = {cat: result["categories"][cat]["count"] for cat in DEVICE_CATEGORIES if cat in result["categories"]}
    return (f"{counts}, {result['streams']['streams']} streams, "
            f"{result['correlation']['device_records_without_their_call']} device records without their call, "
            f"launch->start p50 {result['correlation']['launch_to_start_us']['p50']} us")


def main(paths):
    import trace_compare
    print(json.dumps({path: survey(trace_compare.load(path)) for path in paths}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
