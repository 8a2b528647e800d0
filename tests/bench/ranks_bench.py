#!/usr/bin/python3
"""The cross-rank report at scale: a synthetic job of RANKS per-rank tables (COLLECTIVES
collectives each) reduced locally and on a real Dask cluster of 1 and 2 workers on the loopback
address. Prints seconds, ranks/s per worker and the client's peak RSS (the partials are reduced
on the workers; the client holds the final partial only), and checks that every path prints the
same report. Figures, never pass/fail on time.

    ranks_bench.py PROFAGENT WORK_DIR [RANKS [COLLECTIVES]]"""
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ncclsim"))
from dask_cluster import LocalCluster  # noqa: E402
import synthetic_ranks  # noqa: E402

profagent, work = sys.argv[1:3]
ranks = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
collectives = int(sys.argv[4]) if len(sys.argv) > 4 else 200
folder = os.path.join(work, f"synthetic_{ranks}x{collectives}")
synthetic_ranks.write(folder, ranks=ranks, collectives=collectives, slow_rank=ranks // 3)
table_bytes = sum(os.path.getsize(os.path.join(folder, n)) for n in os.listdir(folder) if n.endswith(".rank.ndjson"))


def timed(*args):
    """Output, seconds and the child's peak RSS (MiB) of one `profagent report` run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.monotonic()
    r = subprocess.run([profagent, "report", *args, folder, "--format", "json"], capture_output=True, text=True,
                       env=dict(os.environ, PROFAGENT_PYTHON=sys.executable), check=True)
    seconds = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return r.stdout, seconds, (peak if peak > before else before) / 1024


print(f"{ranks} ranks x {collectives} collectives: rank tables {table_bytes / 2**20:.1f} MiB")
reference, seconds, rss = timed("--ranks")
print(f"local:       {seconds:7.2f} s  {ranks / seconds:8.0f} ranks/s            client peak RSS {rss:6.1f} MiB")
same = True
for workers in (1, 2):
    with LocalCluster(workers=workers) as cluster:
        out, seconds, rss = timed("--dask", cluster.address)
    same &= out == reference
    print(f"dask x{workers}:     {seconds:7.2f} s  {ranks / seconds:8.0f} ranks/s  "
          f"{ranks / seconds / workers:6.0f} per worker  client peak RSS {rss:6.1f} MiB")
print("same report on every path" if same else "FAILED: the Dask report differs from the local one")
sys.exit(0 if same else 1)
