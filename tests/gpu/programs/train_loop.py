"""The GPU acceptance script's training loop: a small CNN and an MLP trained together on
synthetic images through a DataLoader, one AdamW over both, one optimizer step per step.

    train_loop.py --steps 30 [--workers N] [--batch 64] [--times FILE] [--device cpu]
                  [--torch-profiler DIR --skip-first S --warmup W --active A]

Without --torch-profiler it has no profiler code at all: `profagent run --step-on python`
marks its steps (each Optimizer.step). With --torch-profiler it runs the same steps inside
torch.profiler.profile with schedule(skip_first=S, wait=0, warmup=W, active=A, repeat=1),
calling prof.step() right after optimizer.step(), so both profilers cut the same steps, and
writes torch's own trace to DIR/torch_profiler.trace.json. --times writes each step's wall
time (after a device synchronisation) as JSON, for the overhead comparison. --device cpu
runs the same loop without a GPU (CTest gpu.train_loop_cpu checks the torch.profiler schedule
against the steps the comparison expects).
"""
import argparse
import json
import os
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class SmallCnn(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(64 * 8 * 8, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


class Mlp(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(3 * 32 * 32, 512), nn.ReLU(), nn.Linear(512, 256),
                                    nn.ReLU(), nn.Linear(256, classes))

    def forward(self, x):
        return self.layers(torch.flatten(x, 1))


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--times")
    parser.add_argument("--torch-profiler")
    parser.add_argument("--skip-first", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--active", type=int, default=1)
    parser.add_argument("--device", default="cuda")
    return parser.parse_args()


def loader(steps, batch, workers, pin_memory):
    generator = torch.Generator().manual_seed(0)
    images = torch.randn(steps * batch, 3, 32, 32, generator=generator)
    labels = torch.randint(0, 10, (steps * batch,), generator=generator)
    return DataLoader(TensorDataset(images, labels), batch_size=batch, shuffle=False,
                      num_workers=workers, pin_memory=pin_memory, drop_last=True)


def main():
    options = parse()
    torch.manual_seed(0)
    device = torch.device(options.device)
    synchronize = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    cnn, mlp = SmallCnn().to(device), Mlp().to(device)
    optimizer = torch.optim.AdamW(list(cnn.parameters()) + list(mlp.parameters()), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    profiler = None
    if options.torch_profiler:
        from torch.profiler import ProfilerActivity, profile, schedule
        os.makedirs(options.torch_profiler, exist_ok=True)
        path = os.path.join(options.torch_profiler, "torch_profiler.trace.json")
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        profiler = profile(activities=activities,
                           schedule=schedule(skip_first=options.skip_first, wait=0,
                                             warmup=options.warmup, active=options.active, repeat=1),
                           on_trace_ready=lambda p: p.export_chrome_trace(path))
        profiler.start()
    times = []
    steps = 0
    for images, labels in loader(options.steps, options.batch, options.workers, device.type == "cuda"):
        begin = time.perf_counter()
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        loss = loss_fn(cnn(images), labels) + loss_fn(mlp(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if profiler is not None:
            profiler.step()
        synchronize()
        times.append(time.perf_counter() - begin)
        steps += 1
    if profiler is not None:
        profiler.stop()
    # The loss is real here (a GPU runs the kernels): printed once, as a sanity line.
    print(f"train_loop: {steps} steps, last loss {loss.item():.4f}, "
          f"median step {sorted(times)[len(times) // 2] * 1e3:.3f} ms")
    if options.times:
        with open(options.times, "w") as f:
            json.dump({"step_seconds": times}, f)
    return 0 if steps == options.steps else 1


if __name__ == "__main__":
    sys.exit(main())
