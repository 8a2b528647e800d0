"""torch.cuda.graphs: a small model's forward pass captured once (torch.cuda.graph) and replayed
REPLAYS times. The captured launches run only inside the replays, so each replay's kernels must
come from its cudaGraphLaunch. Prints one JSON line: {"replays": N, "correct": true}."""
import json
import sys

import torch
from torch import nn

REPLAYS = 10


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256), nn.GELU()).cuda().eval()
    static_input = torch.randn(64, 256, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(side):  # warm-up on a side stream, as torch's docs do
        for _ in range(3):
            model(static_input)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_output = model(static_input)
    correct = True
    for i in range(REPLAYS):
        static_input.copy_(torch.full((64, 256), float(i), device="cuda"))
        graph.replay()
        with torch.no_grad():
            correct = correct and bool(torch.allclose(static_output, model(static_input), atol=1e-4))
    torch.cuda.synchronize()
    print(json.dumps({"replays": REPLAYS, "correct": correct}))
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
