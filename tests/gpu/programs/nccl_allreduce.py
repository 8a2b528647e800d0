"""torch.distributed with the NCCL backend and one rank (init through a file:// store in the
folder given): 5 all-reduces with SUM and 5 with AVG of a 1 Mi-element tensor. With one rank
NCCL may skip an in-place SUM on the device entirely, while AVG scales on the device, so what
NCCL launches is learnt from torch.profiler's own trace of the same program
(--torch-profiler DIR). Prints one JSON line: {"all_reduces": N, "correct": true, "nccl_version": "..."}.

    nccl_allreduce.py STORE_DIR [--torch-profiler DIR]
"""
import contextlib
import json
import os
import sys

import torch
import torch.distributed as dist

ALL_REDUCES = 10


def profiled(folder):
    if folder is None:
        return contextlib.nullcontext()
    from torch.profiler import ProfilerActivity, profile
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "torch_profiler.trace.json")
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                   on_trace_ready=lambda p: p.export_chrome_trace(path))


def main():
    store = os.path.join(sys.argv[1], "nccl_store")
    folder = sys.argv[sys.argv.index("--torch-profiler") + 1] if "--torch-profiler" in sys.argv else None
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", init_method=f"file://{store}", rank=0, world_size=1)
    with profiled(folder):
        tensor = torch.ones(1 << 20, device="cuda")
        for i in range(ALL_REDUCES):
            dist.all_reduce(tensor, op=dist.ReduceOp.SUM if i % 2 == 0 else dist.ReduceOp.AVG)
        torch.cuda.synchronize()
    correct = bool(torch.all(tensor == 1.0))  # one rank: the sum and the mean of one tensor are itself
    version = torch.cuda.nccl.version()
    version = ".".join(str(part) for part in version) if isinstance(version, tuple) else str(version)
    dist.destroy_process_group()
    print(json.dumps({"all_reduces": ALL_REDUCES, "correct": correct, "nccl_version": version}))
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
