"""Call stacks of a streamed window (collector/stack_symbols.h StreamedStacks): the devsim threads
program streamed in segments with PROFAGENT_WITH_STACK=1, PROFAGENT_GROUP_BY=stack_n:2 and the
three trace formats. Checked the way a reader reads them:
- the trace's events carry the stacks a whole window gives them: the same program run again,
  not streamed, has event for event (per thread, in order) the same calls with the same frames
  (stackFrames + sf; a frame without symbol is its address, which differs between runs and is
  compared by module); the json.gz trace's events carry the JSON trace's frames, and `profagent
  report` reads the same folded stacks and stack-grouped table from the Perfetto trace;
- <stem>.self_cpu_time_total.folded and .self_cuda_time_total.folded, folded while the window
  streamed, equal `profagent report --folded` of the trace joined whole (a wrong --folded is
  one line and exit status 2);
- the stack-grouped table (stderr and <stem>.table.txt) equals `profagent report --summary
  key_averages --group-by stack_n:2` of the trace, its rows split by source line;
- no stack is lost or truncated (profagent_drops).
"""
import collections
import glob
import gzip
import json
import os
import re
import subprocess

import checkers as C
from streamed_checks import profagent_cli, remove_trace_of_passed_check, table_block

HOST_CATEGORIES = ("cuda_runtime", "user_annotation")
FOLDED = ("self_cpu_time_total", "self_cuda_time_total")
ADDRESS = re.compile(r"^0x[0-9a-f]+ \(")  # a frame without a symbol: "0x7f... (libstdc++.so.6)"


def frames_of(document, sf):
    """The frame labels of stack `sf`, innermost first, addresses left out (kept: the module)."""
    table = document.get("stackFrames", {})
    names = []
    while sf:
        C.expect(str(sf) in table, f"sf {sf} names no node of the trace's stackFrames ({len(table)} nodes)")
        frame = table[str(sf)]
        names.append(ADDRESS.sub("(", frame["name"]))
        sf = int(frame.get("parent", 0))
    return tuple(names)


def stacks_by_thread(document):
    """Per thread, its host events in order as (category, name, frames); the threads sorted, so
    two runs of one program are compared thread for thread whatever their thread ids."""
    threads = collections.defaultdict(list)
    for e in document["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") in HOST_CATEGORIES:
            threads[(e["pid"], e["tid"])].append((e["ts"], e["cat"], e["name"], frames_of(document, e.get("sf", 0))))
    return sorted([tuple(event[1:] for event in sorted(events)) for events in threads.values()])


def report(context, *args):
    result = subprocess.run([profagent_cli(context), "report", *args], capture_output=True, text=True,
                            check=False, timeout=120)
    C.expect(result.returncode == 0, f"profagent report {' '.join(args[:-1])} failed: {result.stderr[-500:]}")
    return result.stdout


def whole_window_run(context):
    """The same command, not streamed (the default threshold is far above this run), into a
    folder of its own; its JSON trace."""
    out = os.path.join(context.out_dir, "whole")
    os.makedirs(out, exist_ok=True)
    command = [a for a in context.run.command if not a.startswith(("PROFAGENT_STREAM_AFTER_MB=", "PROFAGENT_TRACE_FORMAT="))]
    command = [f"PROFAGENT_OUTPUT_DIR={out}" if a.startswith("PROFAGENT_OUTPUT_DIR=") else a for a in command]
    run = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    C.expect(run.returncode == 0, f"the run without streaming exited with {run.returncode}: {run.stderr[-500:]}")
    document = C.load_trace(C.only_file(out, "*.trace.json"))
    C.expect("profagent_streamed" not in document, "the run meant to be joined whole was streamed")
    return document


def check_same_stacks(streamed, whole):
    got, wanted = stacks_by_thread(streamed), stacks_by_thread(whole)
    C.expect(len(got) == len(wanted), f"{len(got)} threads streamed, {len(wanted)} joined whole")
    with_stack = sum(1 for thread in wanted for event in thread if event[2])
    C.expect(with_stack > 10000, f"only {with_stack} events have a stack in the window joined whole")
    for thread_got, thread_wanted in zip(got, wanted):
        C.expect(len(thread_got) == len(thread_wanted),
                 f"a thread has {len(thread_got)} events streamed, {len(thread_wanted)} joined whole")
        differing = [(i, a, b) for i, (a, b) in enumerate(zip(thread_got, thread_wanted)) if a != b]
        C.expect(not differing, f"{len(differing)} events differ from the window joined whole, "
                                f"e.g. event {differing[:1]}")
    return with_stack


def check_gzip_stacks(context, streamed):
    """The json.gz trace's events carry the JSON trace's frames, event for event."""
    with gzip.open(C.only_file(context.out_dir, "*.trace.json.gz"), "rt", encoding="utf-8") as f:
        compressed = json.load(f)
    C.expect(stacks_by_thread(compressed) == stacks_by_thread(streamed),
             "the json.gz trace's events carry other stacks than the JSON trace's")


def check_folded_files(context, traces):
    for metric in FOLDED:
        with open(C.only_file(context.out_dir, f"*.{metric}.folded"), encoding="utf-8") as f:
            written = f.read()
        C.expect(written.count("\n") >= 3, f"{metric}.folded has {written.count(chr(10))} lines")
        for trace in traces:
            reported = report(context, "--folded", metric, trace)
            C.expect(written == reported, f"{metric}.folded differs from `profagent report --folded` of "
                                          f"{os.path.basename(trace)}: {written[:300]!r} / {reported[:300]!r}")


def check_folded_option_errors(context, trace):
    """A wrong --folded answers with one line and exit status 2."""
    for args, needle in ((["--folded", "self_time"], "--folded is self_cuda_time_total or self_cpu_time_total"),
                         (["--folded", "self_cpu_time_total", "--format", "json"], "--folded prints text only")):
        bad = subprocess.run([profagent_cli(context), "report", *args, trace], capture_output=True, text=True,
                             check=False, timeout=60)
        lines = bad.stderr.strip().splitlines()
        C.expect(bad.returncode == 2 and len(lines) == 1 and needle in lines[0] and not bad.stdout,
                 f"profagent report {' '.join(args)}: exit {bad.returncode}, stderr {lines}")


def check_stack_table(context, traces):
    """The table printed and written, grouped by stack_n:2, equals `profagent report`'s of each trace."""
    with open(C.only_file(context.out_dir, "*.table.txt"), encoding="utf-8") as f:
        written = table_block(f.read().splitlines())
    printed = table_block([line[len("[profagent] "):] for line in C.profagent_lines(context.run.stderr)])
    C.expect(printed == written, "the table printed on stderr differs from <stem>.table.txt")
    C.expect(sum(1 for line in written if "preload_threads.cu(" in line) >= 4,
             f"the table's rows are not split by source line: {written[:8]}")
    for trace in traces:
        reported = table_block(report(context, "--summary", "key_averages", "--group-by", "stack_n:2",
                                      trace).splitlines()[2:])
        differing = [(a, b) for a, b in zip(written, reported) if a != b]
        C.expect(len(written) == len(reported) and not differing,
                 f"the stack-grouped table differs from `profagent report`'s of {os.path.basename(trace)} "
                 f"({len(written)} and {len(reported)} lines): {differing[:2]}")
    return len(written)


def check_streamed_stacks_run(context):
    C.expect(context.run.returncode == 0, f"the program exited with {context.run.returncode}")
    C.check_last_line(context)
    json_trace = C.only_file(context.out_dir, "*.trace.json")
    streamed = C.load_trace(json_trace)
    segments = streamed.get("profagent_streamed", {}).get("segments", 0)
    C.expect(segments >= 2, f"the window was not streamed in segments: {streamed.get('profagent_streamed')}")
    drops = streamed["profagent_drops"]
    C.expect(drops["stacks_lost"] == 0 and drops["stacks_truncated"] == 0, f"stacks dropped: {drops}")
    check_gzip_stacks(context, streamed)
    traces = [json_trace, C.only_file(context.out_dir, "*.pftrace")]
    check_folded_files(context, traces)
    check_folded_option_errors(context, json_trace)
    rows = check_stack_table(context, traces)
    # Last: the run joined whole writes into a folder inside this one (only_file searches it too).
    with_stack = check_same_stacks(streamed, whole_window_run(context))
    remove_trace_of_passed_check(context)
    for path in glob.glob(os.path.join(context.out_dir, "whole", "*.trace.json")) + \
            glob.glob(os.path.join(context.out_dir, "*.trace.json.gz")) + glob.glob(os.path.join(context.out_dir, "*.pftrace")):
        os.remove(path)
    context.summary = (f"{segments} segments, {with_stack} events with stacks equal to the whole window's, "
                       f"folded files and a {rows}-line stack table equal to the report's")
