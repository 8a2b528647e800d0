"""Python frames in call stacks on the GPU machine's Python (3.12 there; CI runs 3.11): run
under plain LD_PRELOAD with PROFAGENT_WITH_STACK=1, it synchronises the device from a known
function, whose frame the recorded cudaDeviceSynchronize must carry, and prints the Python
version, file, line and function of that call as its result line.
"""
import json
import os
import sys

import torch


def known_call():
    torch.cuda.synchronize()  # the call whose stack is checked


def main():
    x = torch.ones(1 << 20, device="cuda")
    for _ in range(3):
        x = x * 2
        known_call()
    print(json.dumps({"python": sys.version.split()[0], "file": os.path.basename(__file__),
                      "line": known_call.__code__.co_firstlineno + 1, "function": "known_call",
                      "correct": bool(x[0].item() == 8)}))


main()
