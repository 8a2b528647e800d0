#!/usr/bin/python3
"""`profagent report --dask tcp://SCHEDULER DIR` against a real scheduler and two workers on the
loopback address prints exactly what the single-machine `profagent report --ranks DIR` prints,
for the 4-rank job of ranks_checks.py (its output folder) and for a synthetic set of per-rank
tables.

    dask_checks.py PROFAGENT JOB_DIR WORK_DIR"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dask_cluster import LocalCluster  # noqa: E402
import synthetic_ranks  # noqa: E402

profagent, job, work = sys.argv[1:4]
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)


def report(*args):
    env = dict(os.environ, PROFAGENT_PYTHON=sys.executable)  # the Python that has Dask
    r = subprocess.run([profagent, "report", *args], capture_output=True, text=True, timeout=600, env=env)
    expect(r.returncode == 0, f"report {args} exited {r.returncode}: {r.stderr[-2000:]}")
    return r.stdout


synthetic = os.path.join(work, "synthetic")
synthetic_ranks.write(synthetic, ranks=64, collectives=50, slow_rank=5)
with LocalCluster(workers=2) as cluster:
    for folder in (job, synthetic):
        for fmt in ("json", "text"):
            local = report("--ranks", folder, "--format", fmt)
            remote = report("--dask", cluster.address, folder, "--format", fmt)
            expect(local == remote, f"{folder} ({fmt}): the Dask report differs from the local one")
        r = json.loads(report("--ranks", folder, "--format", "json"))
        expect(r["straggler"] == (2 if folder == job else 5), f"{folder}: straggler {r['straggler']}")

for failure in failures:
    print("FAILED:", failure)
print("passed" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
