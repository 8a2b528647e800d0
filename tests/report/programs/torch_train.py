#!/usr/bin/python3
"""A small model trained on the CPU with a DataLoader, loss.backward() and SGD under
torch.profiler.profile(schedule=schedule(wait=1, warmup=1, active=3)) and prof.step(), as a
torch user profiles. Writes, for the one active window:
  OUT.legacy.json  what this torch's export_chrome_trace() writes (Debian's torch is built
                   without Kineto: a bare array of events without categories)
  OUT.json, OUT.json.gz  the same events in the layout Kineto-enabled torch writes: record_function
                   scopes (ProfilerStep#N, enumerate(DataLoader)#..., Optimizer.step#...) as
                   user_annotation, every other event as cpu_op, ts/dur in us with 3 decimals.

    torch_train.py OUT
"""
import gzip
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile, schedule

USER_SCOPE = 7  # at::RecordScope::USER_SCOPE: torch.profiler.record_function and the ranges torch itself opens


def kineto_layout(events, last_step):
    # This torch's event list names every step "ProfilerStep*"; Kineto writes ProfilerStep#N
    # with N the step number, so the window's steps are numbered back from the last one.
    steps = sorted((e for e in events if e.name == "ProfilerStep*"), key=lambda e: e.time_range.start)
    number = {id(e): last_step - len(steps) + 1 + i for i, e in enumerate(steps)}
    out = []
    for e in events:
        cat = "user_annotation" if e.scope == USER_SCOPE else "cpu_op"
        start, end = e.time_range.start, e.time_range.end
        name = "ProfilerStep#%d" % number[id(e)] if id(e) in number else e.name
        out.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": e.thread,
                    "ts": round(start, 3), "dur": round(end - start, 3), "args": {"External id": e.id}})
    return {"schemaVersion": 1, "traceEvents": out, "displayTimeUnit": "ms"}


def main(stem):
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=8)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()
    windows = []

    def ready(prof):
        windows.append(1)
        prof.export_chrome_trace(stem + ".legacy.json")
        doc = json.dumps(kineto_layout(prof.events(), prof.step_num - 1))  # step() has counted on
        with open(stem + ".json", "w") as f:
            f.write(doc)
        with gzip.open(stem + ".json.gz", "wt") as f:
            f.write(doc)

    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=3),
                 on_trace_ready=ready) as prof:
        for i, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            prof.step()
            if i >= 5:
                break
    if len(windows) != 1:
        sys.exit("torch_train: expected one profiled window, got %d" % len(windows))


if __name__ == "__main__":
    main(sys.argv[1])
