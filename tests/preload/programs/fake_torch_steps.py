"""Steps of a training loop on the stand-in CUDA torch (programs/fake_cuda_torch): each step one
forward pass and profagent_step(); with `profiler`, the program starts its own torch profiler in
step 3. Prints each step's number before its forward pass, so the checker sees in which step the
hook turned torch's operator ranges on and off.

    fake_torch_steps.py STEPS [profiler]
"""
import sys

import torch
import ctypes  # after torch: the hook patches torch's modules at the next import

steps = int(sys.argv[1])
own_profiler = len(sys.argv) > 2 and sys.argv[2] == "profiler"
mark = getattr(ctypes.CDLL(None), "profagent_step", None)


class Model(torch.nn.Module):
    def forward(self, x):
        return x + 1


model = Model()
for step in range(steps):
    print(f"step {step}")
    if own_profiler and step == 3:
        with torch.autograd.profiler.profile():
            model(step)
    else:
        model(step)
    if mark is not None:
        mark()
print("done")
