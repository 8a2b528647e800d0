"""Synthetic per-rank tables (exporters/rank_table.h's format) of a job of many ranks, for the
Dask test and benchmark: every rank runs the same collectives of one communicator; the slow
rank arrives `delay_ns` after the others, whose kernels wait for it; deterministic."""
import json
import os


def write(folder, ranks, collectives, slow_rank, delay_ns=2_000_000, transfer_ns=100_000, step_ns=10_000_000):
    os.makedirs(folder, exist_ok=True)
    base = 1_800_000_000_000_000_000
    for rank in range(ranks):
        rows, steps = [], []
        for seq in range(collectives):
            arrival = base + seq * step_ns + (rank * 1_000) % 50_000
            start = arrival + (delay_ns if rank == slow_rank else 0)
            end = base + seq * step_ns + 49_000 + delay_ns + transfer_ns
            rows.append([123456789, seq, "allreduce", 1 << 22, arrival - 20_000, start, end])
            steps.append([seq, base + seq * step_ns, base + (seq + 1) * step_ns])
        table = {"format": "profagent-rank", "version": 1, "host_name": f"node{rank // 8}", "pid": 1000 + rank,
                 "rank": rank, "local_rank": rank % 8, "world_size": ranks, "backend": "nccl", "window": 1,
                 "steps": steps, "distributed": {"span_ns": collectives * step_ns,
                                                 "communication_ns": sum(r[6] - r[5] for r in rows),
                                                 "computation_ns": collectives * 6_000_000, "overlap_ns": 0},
                 "collectives": rows}
        stem = os.path.join(folder, f"node{rank // 8}.{1000 + rank}.r{rank}.w1")
        with open(stem + ".rank.ndjson", "w") as f:
            json.dump(table, f)
        with open(stem + ".trace.json", "w") as f:  # a placeholder: the rank table is what is read
            json.dump({"distributedInfo": {"rank": rank, "world_size": ranks}, "traceEvents": []}, f)
