"""A job launched the way torchrun launches one, for `profagent run -- python nccl_ranks.py`:
this process (the launcher, which never touches CUDA and so writes no trace) starts RANKS
copies of itself with RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set; each rank
joins torch.distributed's NCCL backend (env://) on GPU LOCAL_RANK and runs 4 steps of an AVG
all-reduce and an all-gather. NCCL refuses two ranks of one communicator on one GPU, so a
one-GPU machine runs one rank. Prints one JSON line:
{"ranks": N, "all_reduces": per rank, "all_gathers": per rank, "correct": true}.

    nccl_ranks.py [--ranks N]
"""
import json
import os
import socket
import subprocess
import sys

STEPS = 4


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(ranks):
    env = dict(os.environ, WORLD_SIZE=str(ranks), LOCAL_WORLD_SIZE=str(ranks), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(free_port()))
    children = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--rank"], stdout=subprocess.PIPE,
                                 text=True, env=dict(env, RANK=str(r), LOCAL_RANK=str(r))) for r in range(ranks)]
    results = [json.loads(child.communicate()[0].strip().splitlines()[-1]) for child in children]
    correct = all(child.returncode == 0 for child in children) and all(r["correct"] for r in results)
    print(json.dumps({"ranks": ranks, "all_reduces": STEPS, "all_gathers": STEPS, "correct": correct}))
    return 0 if correct else 1


def rank():
    import torch
    import torch.distributed as dist
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    world = dist.get_world_size()
    tensor = torch.ones(1 << 20, device="cuda")
    gathered = torch.empty(world << 20, device="cuda")
    for _ in range(STEPS):
        dist.all_reduce(tensor, op=dist.ReduceOp.AVG)
        dist.all_gather_into_tensor(gathered, tensor)
    torch.cuda.synchronize()
    correct = bool(torch.all(tensor == 1.0)) and bool(torch.all(gathered == 1.0))
    dist.destroy_process_group()
    print(json.dumps({"correct": correct}))
    return 0 if correct else 1


if __name__ == "__main__":
    if "--rank" in sys.argv:
        sys.exit(rank())
    sys.exit(launch(int(sys.argv[sys.argv.index("--ranks") + 1]) if "--ranks" in sys.argv else 1))
