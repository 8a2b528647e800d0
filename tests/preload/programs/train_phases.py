"""A CPU torch training loop with no profiler code, for the Python hook's phase ranges
(tests/preload/report_agent_checks.py). Each iteration reads a batch from a DataLoader, zeroes
the gradients, runs a model made of nested modules, goes backward and steps an SGD optimizer.
Odd iterations call torch.autograd.backward(loss) instead of loss.backward(). One forward pass
raises on purpose (caught here) to show a raising call leaves no range open. It prints every
loss, so a run under the agent can be compared with a plain run.

    train_phases.py [iterations=6]
"""
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 6


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.linear(x))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = torch.nn.Linear(8, 1)

    def forward(self, x):
        return self.head(self.block(x))


class Refuses(torch.nn.Module):
    def forward(self, x):
        raise ValueError("refused on purpose")


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data = TensorDataset(torch.randn(4 * iterations, 8), torch.randn(4 * iterations, 1))
loader = DataLoader(data, batch_size=4)
try:
    Refuses()(torch.zeros(1))
except ValueError as error:
    print(f"caught: {error}")
for k, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    if k % 2:
        torch.autograd.backward(loss)
    else:
        loss.backward()
    returned = optimizer.step()
    print(f"step {k} loss {loss.item():.6f} step returned {returned!r}")
