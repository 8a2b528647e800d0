#!/usr/bin/python3
"""Peak RSS of the ranks of a streamed NCCL job against the number of its collectives: a
2-rank job of the simulated NCCL (tests/ncclsim ranks_train, two all-reduces a step) streamed
in segments (PROFAGENT_STREAM_AFTER_MB=1) for each STEPS given. A streamed window's
<stem>.rank.ndjson rows go to a temporary file as the segments fold (exporters/rank_table_fold.h),
so each rank's peak RSS must not grow with its rows. Prints, per run: steps, rows per rank,
the table's bytes, segments, each rank's peak RSS (MiB, /usr/bin/time's %M) and the seconds.
Figures, never pass/fail on a figure; it fails only when a rank wrote no table or a row is missing.

    streamed_ranks_bench.py PROFAGENT RANKS_TRAIN LAUNCH_RANKS_SH DEVSIM_DIR WORK_DIR [STEPS...]

PROFAGENT: the launcher (`profagent run`), or a libprofagent.so preloaded as it is (LD_PRELOAD),
to set an older build's agent beside this one's (A/B)."""
import glob
import json
import os
import shutil
import subprocess
import sys
import time

profagent, program, launcher, devsim_dir, work = sys.argv[1:6]
steps_list = [int(s) for s in sys.argv[6:]] or [2000, 20000]
RANKS = 2
status = 0
print(f"{'steps':>7} {'rows/rank':>10} {'table KiB':>10} {'segments':>9} {'peak RSS MiB per rank':>24} {'seconds':>8}")
for steps in steps_list:
    out = os.path.join(work, f"steps_{steps}")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = dict(os.environ, LD_LIBRARY_PATH=devsim_dir, PROFAGENT_OUTPUT_DIR=out, PROFAGENT_STREAM_AFTER_MB="1",
               PROFAGENT_BUFFER_MB=os.environ.get("PROFAGENT_BUFFER_MB", "64"),
               NCCL_COMM_ID=f"streamed_ranks_bench_{os.getpid()}_{steps}")
    start = time.monotonic()
    job = [launcher, str(RANKS), "/usr/bin/time", "-f", "peak_rss_kib %M", program, str(steps)]
    if profagent.endswith(".so"):
        env["LD_PRELOAD"] = os.path.abspath(profagent)
    else:
        job = [profagent, "run", "--"] + job
    r = subprocess.run(job, env=env, capture_output=True, text=True, timeout=1200)
    seconds = time.monotonic() - start
    rss = [int(line.split()[1]) / 1024 for line in r.stderr.splitlines() if line.startswith("peak_rss_kib ")]
    tables = sorted(glob.glob(os.path.join(out, "*.rank.ndjson")))
    rows, size, segments = [], 0, []
    for path in tables:
        with open(path) as f:
            rows.append(len(json.load(f)["collectives"]))
        size += os.path.getsize(path)
    for path in glob.glob(os.path.join(out, "*.trace.json")):
        with open(path) as f:
            segments.append(json.load(f).get("profagent_streamed", {}).get("segments", 0))
    if r.returncode != 0 or (not profagent.endswith(".so") and (len(tables) != RANKS or any(n != 2 * steps for n in rows))):
        print(f"steps {steps}: exit {r.returncode}, tables {tables}, rows {rows}\n{r.stderr[-2000:]}")
        status = 1
    print(f"{steps:>7} {max(rows, default=0):>10} {size / RANKS / 1024:>10.0f} {min(segments, default=0):>9} "
          f"{' '.join(f'{m:.1f}' for m in rss):>24} {seconds:>8.1f}")
    shutil.rmtree(out, ignore_errors=True)
sys.exit(status)
