"""A CPU torch training loop that knows nothing of profagent, for `profagent run --step-on
python` (tests/preload/windows_tests.cmake). Each iteration k opens and closes a user range
"work_<k>" when the agent is loaded (the witness the checker reads back), so the windows can be
checked step by step; the loop itself is a plain torch loop.

    train_steps.py [iterations=10]
"""
import ctypes
import sys

import torch

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 10
agent = ctypes.CDLL(None)
push = getattr(agent, "profagent_range_push", None)
pop = getattr(agent, "profagent_range_pop", None)

torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data, target = torch.randn(32, 8), torch.randn(32, 1)
for k in range(iterations):
    if push is not None:
        push(f"work_{k}".encode())
        pop()
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(data), target)
    loss.backward()
    optimizer.step()
print(f"trained {iterations} iterations, loss {loss.item():.4f}")
