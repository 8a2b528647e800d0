"""A small CPU training loop for python_hook_bench.py: an MLP, AdamW, STEPS steps of forward,
backward and optimizer step; prints the loop's thread CPU time per step in ns.

    python_hook_train.py STEPS
"""
import sys
import time

import torch


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data, target = torch.randn(32, 64), torch.randint(0, 10, (32,))
    start = time.thread_time_ns()
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(data), target)
        loss.backward()
        optimizer.step()
    print(f"ns_per_step {(time.thread_time_ns() - start) / steps:.0f}")


if __name__ == "__main__":
    main()
