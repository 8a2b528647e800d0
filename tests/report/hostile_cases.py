#!/usr/bin/python3
"""`profagent report` on hostile-but-legal traces: each case writes the trace, runs the real
command, and checks its output the way a user or a consumer reads it (the JSON parsed, the CSV
loaded by Debian's pandas, the text scanned byte by byte, the exit status, one stderr line).

    hostile_cases.py --profagent build/bin/profagent --work DIR CASE
    hostile_cases.py --list

Cases: deep_nesting (20,000 operators inside each other, --op-detail), gzip_bomb (a small
.json.gz that expands far beyond its size), huge_name (one event whose name is most of a big
file, on one line), one_line (whole traces on one line, as json.dump writes them), bad_times (negative, huge and out-of-range times, a lone surrogate escape),
control_chars (ESC/BEL/CR/C1 in names and paths), async_gpu (kernels running past their step's
end), all_rows (machine formats keep every row), csv_pandas (pure CSV that pandas reads).
"""
import argparse
import csv
import gzip
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
from test_output import remove_output_of_passed_case  # noqa: E402

PID = 4242


class Failed(Exception):
    pass


def expect(ok, what):
    if not ok:
        raise Failed(what)


def us(ns):
    return ns / 1000.0


def x(cat, name, start, end, tid=1, pid=PID, **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": us(start), "dur": us(end - start)}
    if args:
        e["args"] = args
    return e


def step(number, start, end):
    return x("user_annotation", "ProfilerStep#%d" % number, start, end)


def launch(kernel, start, corr, kstart, kend, device=0):
    """A cudaLaunchKernel call at `start` (100 ns long) and the kernel it issued."""
    return [x("cuda_runtime", "cudaLaunchKernel", start, start + 100, correlation=corr),
            x("kernel", kernel, kstart, kend, tid=7, pid=device, device=device, stream=7, correlation=corr)]


def write_json(path, events, **meta):
    doc = dict(meta, schemaVersion=1, traceEvents=events)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


class Run:
    """One `profagent report` run: exit status, stdout (bytes), stderr (text), peak RSS in bytes."""

    def __init__(self, profagent, args, work, name):
        out_path = os.path.join(work, name + ".stdout")
        with open(out_path, "wb") as out, open(out_path + ".err", "wb") as err:
            p = subprocess.Popen([profagent, "report"] + args, stdout=out, stderr=err)
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
        self.status = p.returncode
        self.peak_rss = usage.ru_maxrss * 1024
        with open(out_path, "rb") as f:
            self.stdout = f.read()
        with open(out_path + ".err", "rb") as f:
            self.stderr = f.read().decode("utf-8", "replace")
        self.args = args

    def ok(self):
        expect(self.status == 0, "profagent report %s exited %d: %s" % (" ".join(self.args)[:200], self.status,
                                                                         self.stderr[:500]))
        return self

    def json(self):
        self.ok()
        return json.loads(self.stdout.decode("utf-8"))

    def one_error_line(self, *words):
        expect(self.status == 2, "exit status %d, expected 2 (stderr: %s)" % (self.status, self.stderr[:300]))
        lines = self.stderr.splitlines()
        expect(len(lines) == 1, "expected one stderr line, got %d: %r" % (len(lines), self.stderr[:500]))
        for w in words:
            expect(w in lines[0], "the line does not say %r: %s" % (w, lines[0]))
        return lines[0]


def summaries(doc, i=0):
    return doc["traces"][i]["summaries"]


# ---- deep nesting ------------------------------------------------------------------------------

DEPTH = 20000
KERNEL_NS = 500


def deep_trace(path, depth=DEPTH):
    """`depth` operators, each inside the previous one (10 ns in on each side), the innermost
    launching one kernel: every operator's GPU time is that kernel's."""
    end = 1000 + 20 * depth + 2000
    events = [step(1, 0, end + 5000)]
    events += [x("cpu_op", "aten::nested", 1000 + 10 * k, end - 10 * k) for k in range(depth)]
    inner = 1000 + 10 * (depth - 1)
    events += launch("deep_kernel", inner + 100, 1, end + 100, end + 100 + KERNEL_NS)
    return write_json(path, events)


def case_deep_nesting(a):
    path = deep_trace(os.path.join(a.work, "deep.json"))
    doc = Run(a.profagent, ["--format", "json", "--op-detail", "--summary", "operator,op_type,key_averages", path],
              a.work, "deep_json").json()
    rows = summaries(doc)["operator"]["threads"][0]["rows"]
    ops = [r for r in rows if r.get("kind") == "operator"]
    expect(len(ops) == DEPTH, "%d operator rows, expected %d" % (len(ops), DEPTH))
    expect([r["depth"] for r in ops] == list(range(DEPTH)), "operator rows are not one per nesting level in order")
    wrong = [r["depth"] for r in ops if r["gpu"]["total_ns"] != KERNEL_NS]
    expect(not wrong, "%d operators lack the kernel's GPU time (first at depth %s)" % (len(wrong), wrong[:1]))
    kernels = [r for r in rows if r.get("kind") == "kernel"]
    expect(len(kernels) == 1 and kernels[0]["depth"] == DEPTH, "the kernel row is not under the innermost operator")
    table = {r["name"]: r for r in summaries(doc)["key_averages"]["rows"]}
    nested = table["aten::nested"]
    expect(nested["count"] == DEPTH, "key_averages count %d" % nested["count"])
    expect(nested["cuda_total_ns"] == DEPTH * KERNEL_NS,
           "key_averages CUDA total %d ns, expected %d (every level holds the kernel)" % (nested["cuda_total_ns"],
                                                                                         DEPTH * KERNEL_NS))
    expect(nested["self_cuda_ns"] == KERNEL_NS, "key_averages self CUDA %d ns" % nested["self_cuda_ns"])
    text = Run(a.profagent, ["--op-detail", path], a.work, "deep_text").ok().stdout
    widest = max(len(line) for line in text.split(b"\n"))
    expect(widest < 400, "a text line is %d bytes wide (indentation grows with the nesting)" % widest)
    expect(b"[depth %d] aten::nested" % (DEPTH - 1) in text, "the innermost operator row does not say its depth")
    return "%d nested operators: %d rows, every level's GPU time right, widest text line %d bytes" % (
        DEPTH, len(rows), widest)


# ---- gzip bomb ---------------------------------------------------------------------------------

def gzip_bomb(path, expanded_bytes):
    """A valid trace whose events are one small event repeated: gzip shrinks it ~1000 times."""
    event = json.dumps(x("cpu_op", "aten::add", 1000, 2000)).encode() + b",\n"
    count = max(1, expanded_bytes // len(event))
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9) as f:
        f.write(b'{"traceEvents": [\n')
        block = event * 10000
        for _ in range(count // 10000):
            f.write(block)
        f.write(event * (count % 10000))
        f.write(json.dumps(step(1, 0, 10000)).encode() + b"\n]}\n")
    return path, count + 1


def case_gzip_bomb(a):
    path, events = gzip_bomb(os.path.join(a.work, "bomb.json.gz"), 256 << 20)
    size = os.path.getsize(path)
    refused = Run(a.profagent, ["--summary", "overview", path], a.work, "bomb")
    line = refused.one_error_line(path, "--max-gzip-ratio")
    expect(refused.stdout == b"", "output printed for a refused file")
    expect(refused.peak_rss < 64 << 20, "refusing it took %.1f MB" % (refused.peak_rss / 1e6))
    small, small_events = gzip_bomb(os.path.join(a.work, "small_bomb.json.gz"), 64 << 20)
    raised = Run(a.profagent, ["--max-gzip-ratio", "0", "--format", "json", "--summary", "overview", small],
                 a.work, "bomb_raised")
    calls = {r["type"]: r["calls"] for r in summaries(raised.json())["overview"]["cpu"]}
    operators = calls.get("Operator", 0) + calls.get("OperatorInner", 0)  # identical events nest
    expect(operators == small_events - 1, "overview counts %d operators, the file has %d" % (operators, small_events - 1))
    limit = max(2 * (64 << 20), BYTES_PER_EVENT * small_events) + BASE_RSS
    expect(raised.peak_rss <= limit, "reading 64 MiB of events took %.1f MB (bound %.1f MB)" % (
        raised.peak_rss / 1e6, limit / 1e6))
    return "%d-byte gzip of %d events refused (%s; %.1f MB peak); 64 MiB read with the limit off: %.1f MB peak" % (
        size, events, line, refused.peak_rss / 1e6, raised.peak_rss / 1e6)


# ---- one huge line -----------------------------------------------------------------------------

def huge_name_trace(path, name_bytes):
    """The whole trace on one line, most of it one operator's name."""
    with open(path, "w") as f:
        f.write('{"traceEvents": [')
        f.write(json.dumps(step(1, 0, 100000)) + ", ")
        f.write('{"ph": "X", "cat": "cpu_op", "name": "big_')
        chunk = "abcdefghij" * 100000
        for _ in range(name_bytes // len(chunk)):
            f.write(chunk)
        f.write('", "pid": 4242, "tid": 1, "ts": 1, "dur": 2}, ')
        f.write(json.dumps(x("cpu_op", "aten::small", 5000, 6000)) + "]}")
    return path


BASE_RSS = 16 << 20  # what `profagent report` holds before any trace (code, read buffers)
BYTES_PER_EVENT = 300  # what the report keeps per event: its record and the summaries' tables


def case_huge_name(a):
    """The reader holds no copy of its own: the event's text and its record, nothing more."""
    path = huge_name_trace(os.path.join(a.work, "huge_name.json"), 100 << 20)
    size = os.path.getsize(path)
    run = Run(a.profagent, ["--summary", "kernel,overview,model,distributed,perf", "--output", "/dev/null", path],
              a.work, "huge_read").ok()
    expect(run.peak_rss <= 2 * size + BASE_RSS, "reading it took %.1f MB for a %.1f MB file (more than 2x)" % (
        run.peak_rss / 1e6, size / 1e6))
    text = Run(a.profagent, ["--output", os.path.join(a.work, "huge.txt"), path], a.work, "huge_text").ok()
    expect(text.peak_rss <= 6 * size, "--format text took %.1f MB" % (text.peak_rss / 1e6))
    widest = max(len(line) for line in open(os.path.join(a.work, "huge.txt"), "rb"))
    expect(widest < 400, "a text line is %d bytes wide" % widest)
    out = os.path.join(a.work, "huge.json")
    Run(a.profagent, ["--format", "json", "--summary", "operator", "--output", out, path], a.work, "huge_json").ok()
    with open(out, "rb") as f:
        doc = json.load(f)
    names = [r["name"] for r in summaries(doc)["operator"]["threads"][0]["rows"]]
    expect(any(n.startswith("big_") and len(n) == 4 + (100 << 20) // 1000000 * 1000000 for n in names),
           "the big name is not in the JSON whole")
    return "%.1f MB name on one line: read with %.1f MB peak (%.2fx), every summary as text %.1f MB, widest line %d" % (
        size / 1e6, run.peak_rss / 1e6, run.peak_rss / size, text.peak_rss / 1e6, widest)


def one_line_trace(path, steps, per_step, kineto_args):
    """A trace as json.dump writes it: everything on one line. Written event by event: the
    measured child's peak RSS includes this process's size at fork."""
    count, corr = 0, 0
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [')
        for s in range(steps):
            base = s * 10 ** 7
            events = [step(s + 1, base, base + 10 ** 7 - 1)]
            for k in range(per_step):
                start = base + 1000 + k * 400
                if not kineto_args:
                    events.append(x("cpu_op", "aten::add", start, start + 300))
                    continue
                corr += 1
                events.append(x("cpu_op", "aten::add", start, start + 300, **{
                    "External id": corr, "Record function id": 0, "Ev Idx": corr, "Sequence number": corr}))
                events += launch("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>",
                                 start + 100, corr, base + 5 * 10 ** 6 + k * 400, base + 5 * 10 ** 6 + k * 400 + 200)
            f.write((", " if count else "") + ", ".join(json.dumps(e) for e in events))
            count += len(events)
        f.write("]}")
    return path, count


def case_one_line(a):
    """Whole traces on one line: memory is what the report keeps per event, whatever the layout."""
    said = []
    for name, steps, per_step, kineto in (("kineto_like", 40, 1500, True), ("minimal", 40, 15000, False)):
        path, events = one_line_trace(os.path.join(a.work, name + ".json"), steps, per_step, kineto)
        size = os.path.getsize(path)
        run = Run(a.profagent, ["--summary", "all", "--output", "/dev/null", path], a.work, name).ok()
        bound = max(2 * size, BYTES_PER_EVENT * events) + BASE_RSS
        expect(run.peak_rss <= bound, "%s: %.1f MB for %.1f MB, %d events (bound %.1f MB)" % (
            name, run.peak_rss / 1e6, size / 1e6, events, bound / 1e6))
        said.append("%s %.1f MB / %d events: %.1f MB (%.2fx, %.0f B/event)" % (
            name, size / 1e6, events, run.peak_rss / 1e6, run.peak_rss / size, run.peak_rss / events))
    return "; ".join(said)


# ---- times and escapes -------------------------------------------------------------------------

BASE_EVENTS = [step(1, 1000, 9000), x("cpu_op", "aten::mm", 2000, 3000)]


def raw_trace(path, event_text):
    """BASE_EVENTS and one event written as given (to control its exact JSON)."""
    with open(path, "w") as f:
        f.write('{"traceEvents": [%s, %s]}' % (", ".join(json.dumps(e) for e in BASE_EVENTS), event_text))
    return path


def case_bad_times(a):
    refused = {
        "negative_ts": ('{"ph": "X", "cat": "cpu_op", "name": "early", "pid": 1, "tid": 1, "ts": -5, "dur": 1}',
                        '"ts" is negative'),
        "ts_1e308": ('{"ph": "X", "cat": "cpu_op", "name": "far", "pid": 1, "tid": 1, "ts": 1e308, "dur": 1}',
                     '"ts" is out of range'),
        "ts_9.3e15": ('{"ph": "X", "cat": "cpu_op", "name": "far", "pid": 1, "tid": 1, "ts": 9300000000000000,'
                      ' "dur": 1}', '"ts" is out of range'),
        "dur_1e308": ('{"ph": "X", "cat": "cpu_op", "name": "long", "pid": 1, "tid": 1, "ts": 5, "dur": 1e308}',
                      '"dur" is out of range'),
        "instant_negative": ('{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": -1, "s": "t"}',
                             '"ts" is negative'),
    }
    said = []
    for name, (event, words) in refused.items():
        path = raw_trace(os.path.join(a.work, name + ".json"), event)
        said.append(Run(a.profagent, [path], a.work, name).one_error_line(path, "event 2", words))
    # Far but representable (4e15 us = 4e18 ns): placed after the step, not in it.
    path = raw_trace(os.path.join(a.work, "late.json"),
                     '{"ph": "X", "cat": "cpu_op", "name": "late", "pid": 1, "tid": 1, "ts": 4e15, "dur": 1}')
    doc = Run(a.profagent, ["--format", "json", "--summary", "overview,operator", path], a.work, "late").json()
    trace = doc["traces"][0]
    expect(trace["outside_steps"]["host"] == 1, "the late event is not left out of the step: %r" % trace["outside_steps"])
    names = [r["name"] for r in summaries(doc)["operator"]["threads"][0]["rows"]]
    expect(names == ["aten::mm"], "operator rows %r" % names)
    # A lone surrogate is read as U+FFFD (as Python's json reads it, then encodes it replaced).
    path = raw_trace(os.path.join(a.work, "surrogate.json"),
                     '{"ph": "X", "cat": "cpu_op", "name": "op\\ud800x\\udc00y\\ud83d\\ude00", "pid": 4242,'
                     ' "tid": 1, "ts": 4, "dur": 0.5}')
    doc = Run(a.profagent, ["--format", "json", "--summary", "operator", path], a.work, "surrogate").json()
    names = sorted(r["name"] for r in summaries(doc)["operator"]["threads"][0]["rows"])
    expect(names == ["aten::mm", "op\ufffdx\ufffdy\U0001F600"], "names read %r" % names)
    return "refused with one line each: " + " | ".join(said) + "; 4e15 us placed outside the step; \\ud800 read as U+FFFD"


# ---- control characters ------------------------------------------------------------------------

HOSTILE = "evil\x1b[2J\x1b]0;pwned\x07\r\x9b31m\x7fname"


def control_trace(path):
    events = [step(1, 0, 100000), x("cpu_op", HOSTILE, 1000, 5000),
              x("user_annotation", "range\x1b[31m", 1200, 1300), x("cpu_op", "aten::fine", 6000, 7000)]
    events += launch("kernel\x07\x1b[5m", 1500, 1, 2000, 3000)
    return write_json(path, events)


def terminal_safe(data):
    """No byte a terminal would obey: no C0 control but newline, no DEL, no C1 (U+0080-U+009F)."""
    text = data.decode("utf-8")
    bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f]
    return not bad, bad[:5]


def case_control_chars(a):
    folder = os.path.join(a.work, "dir\x1b[1m")
    os.makedirs(folder, exist_ok=True)
    path = control_trace(os.path.join(folder, "ctrl.json"))
    text = Run(a.profagent, ["--summary", "all", "--op-detail", "--thread-sep", path], a.work, "ctrl_text").ok()
    ok, bad = terminal_safe(text.stdout)
    expect(ok, "the text output carries control characters %r" % bad)
    expect(b"evil\\x1b[2J\\x1b]0;pwned\\x07\\r\\u009b31m\\x7fname" in text.stdout, "the escaped name is not shown")
    bad_file = os.path.join(folder, "bad\x07.json")
    with open(bad_file, "w") as f:
        f.write('{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "x\\u001b[2J", "pid": 1, "tid": 1, "ts": 1}]}')
    err = Run(a.profagent, [bad_file], a.work, "ctrl_err")
    line = err.one_error_line("no \"dur\"")
    ok, bad = terminal_safe(err.stderr.encode())
    expect(ok and "\\x07" in line and "x\\x1b[2J" in line, "the error line is not escaped: %r" % line)
    doc = Run(a.profagent, ["--format", "json", "--summary", "operator,kernel,user_defined", path], a.work,
              "ctrl_json").json()
    names = {r["name"] for r in summaries(doc)["operator"]["threads"][0]["rows"]}
    expect(HOSTILE in names, "JSON does not keep the exact name: %r" % names)
    csv_dir = os.path.join(a.work, "ctrl_csv")
    Run(a.profagent, ["--format", "csv", "--summary", "operator,kernel", "--output", csv_dir, path], a.work,
        "ctrl_csv").ok()
    with open(os.path.join(csv_dir, "operator.csv"), newline="", encoding="utf-8") as f:
        names = {row["Name"] for row in csv.DictReader(f)}
    expect(HOSTILE in names, "CSV does not keep the exact name: %r" % names)
    return "text and stderr escaped (no C0/DEL/C1 byte), JSON and CSV exact"


# ---- GPU utilisation of an asynchronous trace --------------------------------------------------

def case_async_gpu(a):
    """Two steps of 10 us whose kernels run 6 us past each step's end (the host runs ahead)."""
    events = []
    for k, start in enumerate((0, 10000)):
        events.append(step(k + 1, start, start + 10000))
        events += launch("gemm", start + 1000, 10 + k, start + 5000, start + 16000)
    path = write_json(os.path.join(a.work, "async.json"), events)
    doc = Run(a.profagent, ["--format", "json", "--summary", "device", path], a.work, "async").json()
    gpu = [r for r in summaries(doc)["device"]["rows"] if r["name"] == "GPU0"]
    # Busy [5000, 26000) = 21 us; the steps widened to their kernels: [0, 26000) = 26 us.
    expect(len(gpu) == 1 and abs(gpu[0]["utilization"] - 100.0 * 21 / 26) < 1e-9,
           "GPU0 utilisation %r, expected %.4f" % (gpu, 100.0 * 21 / 26))
    check = subprocess.run([sys.executable, os.path.join(HERE, "recompute.py"), "--profagent", a.profagent,
                            "--quick", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
    expect(check.returncode == 0, "recompute.py disagrees:\n" + check.stdout[-3000:])
    return "GPU0 %.2f%% (busy 21 us over the steps' 26 us with their kernels; 105%% under the old definition)" % (
        gpu[0]["utilization"])


# ---- machine formats: every row, pure CSV ------------------------------------------------------

KERNELS = 194


def many_kernels_trace(path):
    events = [step(1, 0, 10 ** 7)]
    for i in range(KERNELS):
        events += launch("kernel_%03d" % i, 1000 + 200 * i, 100 + i, 200000 + 1000 * i, 200000 + 1000 * i + 1 + i)
    return write_json(path, events)


def case_all_rows(a):
    path = many_kernels_trace(os.path.join(a.work, "kernels.json"))
    doc = Run(a.profagent, ["--format", "json", "--summary", "kernel", path], a.work, "rows_json").json()
    kernel = summaries(doc)["kernel"]
    expect(len(kernel["rows"]) == KERNELS and kernel.get("rows_total") == KERNELS,
           "JSON has %d kernel rows (total %r), expected all %d" % (len(kernel["rows"]), kernel.get("rows_total"),
                                                                    KERNELS))
    doc = Run(a.profagent, ["--format", "json", "--summary", "kernel", "--row-limit", "50", path], a.work,
              "rows_json50").json()
    kernel = summaries(doc)["kernel"]
    expect(len(kernel["rows"]) == 50 and kernel.get("rows_total") == KERNELS,
           "--row-limit 50: %d rows, rows_total %r" % (len(kernel["rows"]), kernel.get("rows_total")))
    text = Run(a.profagent, ["--summary", "kernel", path], a.work, "rows_text").ok().stdout.decode()
    shown = sum(1 for line in text.splitlines() if line.startswith("kernel_"))
    expect(shown == 100, "text shows %d kernel rows, expected the default 100" % shown)
    expect("100 of 194 rows shown" in text, "the text does not say that rows were left out")
    return "JSON: all %d kernel rows (rows_total %d); --row-limit 50 keeps 50; text: 100 and says so" % (
        KERNELS, KERNELS)


def case_csv_pandas(a):
    import pandas  # Debian's python3-pandas (scripts/setup.sh)
    path = many_kernels_trace(os.path.join(a.work, "kernels.json"))
    out = os.path.join(a.work, "csv")
    Run(a.profagent, ["--format", "csv", "--output", out, path, path], a.work, "csv_all").ok()
    doc = Run(a.profagent, ["--format", "json", path], a.work, "csv_json").json()
    names = sorted(f[:-4] for f in os.listdir(out) if f.endswith(".csv"))
    expect(names == sorted(summaries(doc).keys()), "CSV files %r, summaries %r" % (names, sorted(summaries(doc))))
    for name in names:
        frame = pandas.read_csv(os.path.join(out, name + ".csv"))
        expect(list(frame.columns)[:1] == ["Trace"], "%s.csv: first column %r" % (name, list(frame.columns)[:1]))
        expect(set(frame["Trace"]) <= {path}, "%s.csv: Trace column %r" % (name, set(frame["Trace"])))
    kernel = pandas.read_csv(os.path.join(out, "kernel.csv"))
    expect(len(kernel) == 2 * KERNELS, "kernel.csv has %d rows for two traces of %d kernels" % (len(kernel), KERNELS))
    rows = {r["name"]: r for r in summaries(doc)["kernel"]["rows"]}
    first = kernel.iloc[0]
    expect(abs(first["GPU Total (ms)"] * 1e6 - rows[first["Name"]]["gpu"]["total_ns"]) < 1,
           "kernel.csv %s GPU Total %r ms, JSON %r ns" % (first["Name"], first["GPU Total (ms)"],
                                                          rows[first["Name"]]["gpu"]["total_ns"]))
    one = Run(a.profagent, ["--format", "csv", "--summary", "kernel", path], a.work, "csv_stdout").ok()
    frame = pandas.read_csv(io.BytesIO(one.stdout))
    expect(len(frame) == KERNELS, "one summary to stdout: %d rows" % len(frame))
    several = Run(a.profagent, ["--format", "csv", path], a.work, "csv_several")
    several.one_error_line("--output")
    return "%d summaries, one CSV file each, read by pandas %s; kernel.csv %d rows" % (
        len(names), pandas.__version__, len(kernel))


CASES = {
    "deep_nesting": case_deep_nesting,
    "gzip_bomb": case_gzip_bomb,
    "huge_name": case_huge_name,
    "one_line": case_one_line,
    "bad_times": case_bad_times,
    "control_chars": case_control_chars,
    "async_gpu": case_async_gpu,
    "all_rows": case_all_rows,
    "csv_pandas": case_csv_pandas,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--profagent")
    ap.add_argument("--work", default="hostile_cases_out")
    a = ap.parse_args()
    if a.list:
        print("\n".join(CASES))
        return 0
    a.work = os.path.join(a.work, a.case)
    os.makedirs(a.work, exist_ok=True)
    try:
        print("%s: ok: %s" % (a.case, CASES[a.case](a)))
        remove_output_of_passed_case(a.work)
        return 0
    except Failed as e:
        print("%s: FAILED: %s" % (a.case, e))
        return 1


if __name__ == "__main__":
    sys.exit(main())
