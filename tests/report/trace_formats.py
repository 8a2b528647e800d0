#!/usr/bin/python3
"""PROFAGENT_TRACE_FORMAT=json,json.gz,perfetto on a real run on devsim: the three files of one
window hold the same trace, read the way their consumers read them, and `profagent report` of each
prints the same report.

- json.gz: one gzip member (Python's zlib/gzip), the same JSON document as the .trace.json (but
  its traceName), and it passes the project's trace checks (tests/preload: Kineto's fields, every
  device record linked to its call); `profagent report` knows it by its bytes, also under a name
  without .gz.
- perfetto: `protoc --decode_raw` decodes it (the wire format is well-formed) into as many packets
  as the tests' decoder (tests/lib/perfetto_reader.py) reads; that decoder's events equal the
  JSON's event by event: slices (category, name, row, ts, dur), their args, flows, instants,
  counters; the tracks carry the JSON's row names; a cut file is refused in one line.
- report: the output of `profagent report --summary all` is the same for the three files.

    trace_formats.py CASE --profagent BIN --lib DIR --devsim DIR --work DIR [--nvtx-app BIN] [--threads-app BIN]
Cases: diopi (the DIOPI demo: memory, stacks, shapes), nvtx (marks, start/end ranges, named rows),
streamed (four threads' calls, ranges and kernels under PROFAGENT_STREAM_AFTER_MB=1: the window is
written in segments while it is recorded, in each format; the JSON says how many, and no partial or
swap file is left; run again with json.gz,perfetto only: those two are written, no JSON, and each
holds as many host events as its profagent_streamed says).
"""
import argparse
import collections
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "tests", "preload"))
from perfetto_reader import read_perfetto  # noqa: E402
import checkers  # noqa: E402
import kineto_checks  # noqa: E402

PY = "/usr/bin/python3"
CASES = ("diopi", "nvtx", "streamed")
FORMATS = "json,json.gz,perfetto"
# Args the Perfetto trace keeps (the rest the JSON writer derives: cbid, occupancy, bandwidth, ...).
KEPT = {"External id", "correlation", "entry point", "cuda_error", "captured", "bytes", "kernel", "step",
        "context", "stream", "queued", "registers per thread", "shared memory", "grid", "block", "graph id",
        "graph node id", "cuda_sync_kind", "wait_on_cuda_event_id", "Total Reserved", "Total Allocated", "Bytes",
        "Addr", "Device Id", "Device Type", "Kind", "Allocated ts", "Error", "Call site", "Input Dims", "Input type",
        "Record function id", "Sequence number", "Fwd thread id", "Input op ids", "domain", "category",
        "category name", "color", "payload", "start thread"}
JSON_TEXT = {"grid", "block", "Input Dims", "Input type", "domain", "category name", "color", "payload", "Input op ids"}
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"}
STREAM_ZERO_TID = 2000000


def fail(message):
    raise SystemExit("trace_formats: " + message)


def sh(cmd, env=None, ok=True):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if ok and p.returncode != 0:
        fail("%s exited %d\n%s\n%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:].decode(errors="replace"),
                                       p.stderr[-2000:].decode(errors="replace")))
    return p


def run_workload(a):
    out = os.path.join(a.work, "out")
    env = dict(os.environ, LD_LIBRARY_PATH=a.devsim, LD_PRELOAD=os.path.join(a.lib, "libprofagent.so"),
               PROFAGENT_OUTPUT_DIR=out, PROFAGENT_TRACE_FORMAT=FORMATS)
    if a.case == "diopi":
        env.update(PROFAGENT_PROFILE_MEMORY="1", PROFAGENT_WITH_STACK="1", PROFAGENT_RECORD_SHAPES="1")
        sh([PY, os.path.join(ROOT, "tests", "vendorsim", "train.py"), "--framework",
            os.path.join(a.lib, "libframeworksim.so"), "--steps", "4"], env=env)
    elif a.case == "streamed":
        env.update(PROFAGENT_STREAM_AFTER_MB="1")
        sh([a.threads_app, "4", "3000", "outer"], env=env)
    else:
        sh([a.nvtx_app, "3"], env=env)
    traces = glob.glob(os.path.join(out, "*.trace.json"))
    if len(traces) != 1:
        fail("expected one trace in %s, found %s" % (out, sorted(os.listdir(out))))
    stem = traces[0][:-len(".trace.json")]
    for suffix in (".trace.json.gz", ".pftrace"):
        if not os.path.isfile(stem + suffix):
            fail("no %s beside %s: %s" % (suffix, traces[0], sorted(os.listdir(out))))
    if a.case == "streamed":
        check_streamed(out, traces[0])
    return stem


def check_streamed(out, trace):
    with open(trace) as f:
        streamed = json.load(f).get("profagent_streamed")
    if not streamed or streamed["segments"] < 2:
        fail("the window was not streamed in segments: profagent_streamed %r" % (streamed,))
    left = [n for n in os.listdir(out) if n.endswith((".partial", ".swap"))]
    if left:
        fail("partial files left: %s" % left)
    print("streamed: %d segments, %d host events before the tail" % (streamed["segments"], streamed["host_events"]))


def ns(us):
    return checkers.ns(us)


def check_streamed_without_json(a):
    out = os.path.join(a.work, "out_without_json")
    env = dict(os.environ, LD_LIBRARY_PATH=a.devsim, LD_PRELOAD=os.path.join(a.lib, "libprofagent.so"),
               PROFAGENT_OUTPUT_DIR=out, PROFAGENT_TRACE_FORMAT="json.gz,perfetto", PROFAGENT_STREAM_AFTER_MB="1")
    sh([a.threads_app, "4", "3000", "outer"], env=env)
    # the folded table, summaries and summary rows beside them
    names = sorted(n for n in os.listdir(out) if not n.endswith((".table.txt", ".summary.txt", ".summary.ndjson")))
    if len(names) != 2 or not names[0].endswith(".pftrace") or not names[1].endswith(".trace.json.gz"):
        fail("json.gz,perfetto streamed: %s written" % names)
    gz = json.load(gzip.open(os.path.join(out, names[1]), "rt"))
    pf = read_perfetto(os.path.join(out, names[0]))
    counts = []
    for doc, events in ((gz, gz["traceEvents"]), (pf["metadata"], pf["traceEvents"])):
        streamed = doc["profagent_streamed"]
        host = sum(1 for e in events if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver", "user_annotation"))
        if streamed["segments"] < 2 or host != streamed["host_events"] + streamed["tail_host_events"]:
            fail("json.gz,perfetto streamed: %d host events, profagent_streamed %r" % (host, streamed))
        counts.append(host)
    if counts[0] != counts[1]:
        fail("json.gz,perfetto streamed: %d host events in the json.gz, %d in the Perfetto trace" % tuple(counts))
    for name in names:
        sh([a.profagent, "report", os.path.join(out, name)])
    print("streamed without json: %s, %d host events each, both reported" % (", ".join(names), counts[0]))


# ---- json.gz --------------------------------------------------------------------------------------

def check_gzip(a, stem, doc):
    path = stem + ".trace.json.gz"
    data = open(path, "rb").read()
    if data[:2] != b"\x1f\x8b":
        fail(path + " does not start with the gzip magic")
    d = zlib.decompressobj(31)
    plain = d.decompress(data)
    if not d.eof or d.unused_data:
        fail("%s is not exactly one gzip member (%d bytes after the first)" % (path, len(d.unused_data)))
    gz = json.loads(plain)
    with gzip.open(path, "rt") as f:
        if json.load(f) != gz:
            fail("Python's gzip reads %s differently from zlib" % path)
    if gz.pop("traceName") != os.path.basename(path) or doc.pop("traceName") != os.path.basename(stem) + ".trace.json":
        fail("traceName is not each file's own name")
    if gz != doc:
        fail("%s holds another trace than %s.trace.json" % (path, stem))
    trace = checkers.Trace(path)
    # Counters ('C') have a pid and no tid, as in Kineto's traces: check_ids() is about rows.
    trace.document["traceEvents"] = [e for e in trace.document["traceEvents"] if e["ph"] != "C"]
    if a.case == "diopi":
        what = kineto_checks.check_kineto_fields(trace)
    else:  # NVTX ranges are scopes Kineto's annotation check does not model: ids and links only
        kineto_checks.check_ids(trace)
        what = "ids within 32 bits"
    checkers.check_links(trace)
    print("json.gz: one gzip member of %d bytes (%.1fx smaller), the JSON trace's %d events; %s; %d device records linked"
          % (len(data), len(plain) / len(data), len(gz["traceEvents"]), what, len(trace.device)))


# ---- perfetto -------------------------------------------------------------------------------------

def check_decode_raw(path, packets):
    try:
        with open(path, "rb") as f:
            p = subprocess.run(["protoc", "--decode_raw"], stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError:
        fail("protoc is not installed: `scripts/setup.sh tests` installs it (Debian protobuf-compiler)")
    if p.returncode != 0:
        fail("protoc --decode_raw cannot decode %s: %s" % (path, p.stderr.decode(errors="replace")[-500:]))
    top = sum(1 for line in p.stdout.decode(errors="replace").splitlines() if line == "1 {")
    if top != packets:
        fail("protoc --decode_raw finds %d packets, the decoder %d" % (top, packets))
    return top


def count_packets(path):
    from perfetto_reader import fields
    return sum(1 for _ in fields(open(path, "rb").read()))


def json_value(name, value, base):
    if name in JSON_TEXT and isinstance(value, str):
        return json.loads(value)
    if name == "Allocated ts":
        return round((value - base) / 1000.0, 3)
    return value


def same_number(a, b):
    return a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) < 1e-6)


class Implied:
    """What the Perfetto writer may leave out of an event's args, decided from the JSON trace alone:
    a call's External id when it is the call's own (no operator or range encloses the call), a device
    record's when its launching call (the ac2g flow's start) has the same."""

    def __init__(self, jevents):
        self.scopes = collections.defaultdict(list)
        for e in jevents:
            if e["ph"] == "X" and e.get("cat") in ("cpu_op", "user_annotation"):
                self.scopes[(e["pid"], e["tid"])].append(e)
        starts = {e["id"]: e for e in jevents if e["ph"] == "s" and e.get("cat") == "ac2g"}
        ends = {(e["pid"], e["tid"], e["ts_ns"]): e["id"] for e in jevents if e["ph"] == "f" and e.get("cat") == "ac2g"}
        calls = {(e["pid"], e["tid"], e["ts_ns"]): e for e in jevents
                 if e["ph"] == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")}
        self.launcher = {}
        for key, fid in ends.items():
            s = starts.get(fid)
            if s is not None:
                self.launcher[key] = calls.get((s["pid"], s["tid"], s["ts_ns"]))

    def external_id(self, je):
        if je.get("cat") in ("cuda_runtime", "cuda_driver"):
            return not any(s["ts_ns"] <= je["ts_ns"] and je["ts_ns"] + je["dur_ns"] <= s["ts_ns"] + s["dur_ns"]
                           for s in self.scopes[(je["pid"], je["tid"])])
        call = self.launcher.get((je["pid"], je["tid"], je["ts_ns"]))
        return call is not None and call.get("args", {}).get("External id") == je["args"]["External id"]


def check_args(je, pe, base, flows_here, implied):
    """The Perfetto event's annotations equal the JSON args; what it leaves out is implied or derived."""
    jargs, pargs = je.get("args", {}), dict(pe.get("args", {}))
    sf = pargs.pop("sf", None)
    if sf != je.get("sf"):
        fail("%s %r: sf %r, JSON %r" % (je["ph"], je["name"], sf, je.get("sf")))
    for name, value in pargs.items():
        if not same_number(json_value(name, value, base), jargs.get(name)):
            fail("%s %r: arg %r is %r, JSON %r" % (je["ph"], je["name"], name, value, jargs.get(name)))
    for name, value in jargs.items():
        if name in pargs or name not in KEPT:
            continue
        if name == "correlation" and flows_here and flows_here[0] == value:
            continue  # the first flow's id
        if name == "stream" and je.get("cat") in DEVICE_CATS and value == (0 if je["tid"] == STREAM_ZERO_TID else je["tid"]):
            continue  # the row's
        if name == "External id" and implied.external_id(je):
            continue
        if value in (0, "", None) and name in ("context", "queued", "registers per thread", "shared memory", "graph id",
                                               "graph node id"):
            continue  # zero: left out
        fail("%s %r: the Perfetto trace lost arg %r = %r" % (je["ph"], je["name"], name, value))


def slice_key(e):
    return (e["cat"], e["name"], e["pid"], e["tid"], e["ts_ns"], e["dur_ns"])


def check_perfetto(a, stem, doc):
    path = stem + ".pftrace"
    pf = read_perfetto(path)
    packets = check_decode_raw(path, count_packets(path))
    base = doc["baseTimeNanoseconds"]
    meta = dict(doc, traceEvents=[])
    got_meta = dict(pf["metadata"])
    if got_meta.pop("traceName") != os.path.basename(path) or meta.pop("traceName") is None:
        fail("the Perfetto metadata's traceName is not its file's name")
    if got_meta != meta:
        fail("the Perfetto trace's metadata differs from the JSON's top-level keys")
    jevents = [dict(e, ts_ns=ns(e["ts"]), dur_ns=ns(e["dur"]) if "dur" in e else None) for e in doc["traceEvents"]]
    pevents = pf["traceEvents"]
    implied = Implied(jevents)
    by_ph = lambda evs, ph: [e for e in evs if e["ph"] == ph]  # noqa: E731

    # slices, and the flows bound to them
    flow_ids = collections.defaultdict(list)  # (ph, pid, tid, ts) -> ids, in file order
    for e in pevents:
        if e["ph"] in "sf":
            flow_ids[(e["ph"], e["pid"], e["tid"], e["ts_ns"])].append(e["id"])
    json_slices = collections.defaultdict(list)
    for e in by_ph(jevents, "X"):
        json_slices[slice_key(e)].append(e)
    pslices = by_ph(pevents, "X")
    if len(pslices) != sum(len(v) for v in json_slices.values()):
        fail("%d slices in the Perfetto trace, %d in the JSON" % (len(pslices), len(by_ph(jevents, "X"))))
    for e in pslices:
        candidates = json_slices.get(slice_key(e))
        if not candidates:
            fail("Perfetto slice %r has no JSON twin" % (slice_key(e),))
        je = candidates.pop(0)
        device = e["cat"] in DEVICE_CATS
        check_args(je, e, base, flow_ids.get(("f" if device else "s", e["pid"], e["tid"], e["ts_ns"]), []), implied)
    for ph in "sf":
        key = lambda e: (e["cat"], e["id"], e["pid"], e["tid"], e["ts_ns"])  # noqa: E731
        if sorted(map(key, by_ph(jevents, ph))) != sorted(map(key, by_ph(pevents, ph))):
            fail("the '%s' flow events differ" % ph)
    # instants: NVTX marks, [memory], the window's end
    ikey = lambda e: (e.get("cat") or "", e["name"], e["pid"], e["tid"], e["ts_ns"])  # noqa: E731
    jinst = sorted(by_ph(jevents, "i"), key=ikey)
    pinst = sorted(by_ph(pevents, "i"), key=ikey)
    if list(map(ikey, jinst)) != list(map(ikey, pinst)):
        fail("the instants differ")
    for je, pe in zip(jinst, pinst):
        check_args(je, pe, base, [], implied)
    # NVTX start/end ranges: 'b' on the thread that started them, 'e' where they ended
    bkey = lambda e: (e["ph"], e["name"], e["pid"], e["ts_ns"])  # noqa: E731
    if sorted(map(bkey, by_ph(jevents, "b") + by_ph(jevents, "e"))) != sorted(map(bkey, by_ph(pevents, "b") + by_ph(pevents, "e"))):
        fail("the NVTX start/end ranges differ")
    # memory counters
    ckey = lambda e: (e["name"], e["ts_ns"], e["args"]["Allocated"], e["args"]["Reserved"])  # noqa: E731
    if sorted(map(ckey, by_ph(jevents, "C"))) != sorted(map(ckey, by_ph(pevents, "C"))):
        fail("the memory counters differ")
    # tracks: the JSON's row names on the rows, lanes named as their row
    tracks = pf["tracks"]
    threads = {(t["pid"], t["tid"]): t["name"] for t in tracks.values() if t["kind"] == "thread"}
    if len(threads) != sum(1 for t in tracks.values() if t["kind"] == "thread"):
        fail("two thread tracks for one row")
    for e in by_ph(jevents, "M"):
        if e["name"] == "thread_name" and threads.get((e["pid"], e["tid"])) != e["args"]["name"]:
            fail("row %s/%s is %r, JSON %r" % (e["pid"], e["tid"], threads.get((e["pid"], e["tid"])), e["args"]["name"]))
        if e["name"] == "process_name" and not any(t["kind"] == "process" and t["pid"] == e["pid"] and t["name"] == e["args"]["name"]
                                                   for t in tracks.values()):
            fail("no process track %r for pid %s" % (e["args"]["name"], e["pid"]))
    lanes = [t for t in tracks.values() if t["kind"] == "child" and tracks[t["parent"]]["kind"] == "thread"]
    for t in lanes:
        if t["name"] != tracks[t["parent"]]["name"]:
            fail("lane %r under row %r" % (t["name"], tracks[t["parent"]]["name"]))
    json_count = len(jevents) - len(by_ph(jevents, "M"))
    size = os.path.getsize(path)
    print("perfetto: %d bytes, %d packets (protoc --decode_raw agrees), %d sequences, %d tracks (%d lanes); %d slices, "
          "%d flows, %d instants, %d counters equal the JSON's %d events" % (
              size, packets, pf["sequences"], len(tracks), len(lanes), len(pslices), len(by_ph(pevents, "s")) +
              len(by_ph(pevents, "f")), len(pinst), len(by_ph(pevents, "C")), json_count))
    cut = os.path.join(a.work, "cut.pftrace")
    with open(cut, "wb") as f:
        f.write(open(path, "rb").read()[:size * 2 // 3])
    p = sh([a.profagent, "report", cut], ok=False)
    err = p.stderr.decode(errors="replace").strip()
    if p.returncode == 0 or len(err.splitlines()) != 1 or "cut.pftrace" not in err:
        fail("a cut Perfetto trace: rc %d, stderr %r" % (p.returncode, err))
    print("a cut Perfetto trace: " + err)
    check_damaged(a, path)


def check_damaged(a, path, files=60):
    """Damaged copies of the Perfetto trace (bytes changed, cut short; a fixed seed): each is read or
    refused with one line naming the file; never a crash, a hang or a second line."""
    import random
    rng = random.Random(26)
    data = open(path, "rb").read()
    damaged = os.path.join(a.work, "damaged.pftrace")
    refused = 0
    for _ in range(files):
        b = bytearray(data)
        for _ in range(rng.randint(1, 12)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        if rng.random() < 0.3:
            b = b[:rng.randrange(len(b))]
        with open(damaged, "wb") as f:
            f.write(b)
        try:
            p = subprocess.run([a.profagent, "report", damaged], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        except subprocess.TimeoutExpired:
            fail("profagent report hangs on a damaged Perfetto trace (kept: %s)" % damaged)
        err = p.stderr.decode(errors="replace").strip().splitlines()
        if p.returncode == 0 and not err:
            continue
        if p.returncode != 2 or len(err) != 1 or "damaged.pftrace" not in err[0]:
            fail("a damaged Perfetto trace: rc %d, stderr %r (kept: %s)" % (p.returncode, err[:3], damaged))
        refused += 1
    print("%d damaged Perfetto traces: %d refused with one line, %d read" % (files, refused, files - refused))


# ---- report ---------------------------------------------------------------------------------------

def report_text(a, path, options):
    text = sh([a.profagent, "report"] + options + [path]).stdout.decode()
    return text.replace(path, "TRACE")


def check_reports(a, stem):
    unnamed = os.path.join(a.work, "gzip_without_its_suffix.trace.json")
    shutil.copyfile(stem + ".trace.json.gz", unnamed)
    # every summary; key_averages per input shape and per call site (the shapes and stacks kept)
    for options in (["--summary", "all"], ["--summary", "key_averages", "--group-by", "input_shape"],
                    ["--summary", "key_averages", "--group-by", "stack_n:3"]):
        json_text = report_text(a, stem + ".trace.json", options)
        for path in (stem + ".trace.json.gz", stem + ".pftrace", unnamed):
            text = report_text(a, path, options)
            if text != json_text:
                import difflib
                diff = "".join(list(difflib.unified_diff(json_text.splitlines(True), text.splitlines(True), "json",
                                                         path))[:60])
                fail("profagent report %s of %s differs from the JSON's:\n%s" % (" ".join(options), path, diff))
        print("report %s: the same %d lines for .trace.json, .trace.json.gz (also without .gz) and .pftrace"
              % (" ".join(options), len(json_text.splitlines())))
    # the folder holding the three: the window once (from its JSON)
    folder = sh([a.profagent, "report", "--summary", "all", os.path.dirname(stem)]).stdout.decode()
    if folder != sh([a.profagent, "report", "--summary", "all", stem + ".trace.json"]).stdout.decode():
        fail("profagent report of the folder is not the report of its one window:\n" + folder[:600])
    print("report of the folder: the window once")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=CASES)
    for opt in ("--profagent", "--lib", "--devsim", "--work", "--nvtx-app", "--threads-app"):
        ap.add_argument(opt)
    a = ap.parse_args()
    if os.path.isdir(a.work):
        shutil.rmtree(a.work)
    os.makedirs(a.work)
    stem = run_workload(a)
    with open(stem + ".trace.json") as f:
        doc = json.load(f)
    check_gzip(a, stem, json.loads(json.dumps(doc)))
    check_perfetto(a, stem, doc)
    check_reports(a, stem)
    if a.case == "streamed":
        check_streamed_without_json(a)
    print("trace_formats %s: ok" % a.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
