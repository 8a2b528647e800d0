"""What a torch program can see of profagent's Python hook (tests/reliability/cases_launcher.py):
run under `profagent run` with and without the hook, it must print the same. It prints the
tracebacks of errors raised inside each patched call (its own formatted output), introspection
of the patched functions, the loaders of the patched modules, which sitecustomize it imports,
its environment and two children's (/usr/bin/env and a Python), sys.path and sys.modules, how often its own import finder was
asked for the patched modules; it trains two steps (the phase ranges the hook records) and ends
with an uncaught error from inside a forward pass (Python's own traceback on stderr, status 1).
"""
import os
import subprocess
import sys
import traceback

PATCHED = ("torch.optim.optimizer", "torch.utils.data.dataloader", "torch.autograd", "torch._tensor",
           "torch.nn.modules.module")
asked = {name: 0 for name in PATCHED}


class CountingFinder:
    """The program's own import finder, first on sys.meta_path: counts, finds nothing."""

    def find_spec(self, name, path=None, target=None):
        if name in asked:
            asked[name] += 1
        return None


sys.meta_path.insert(0, CountingFinder())

import inspect  # noqa: E402

import torch  # noqa: E402
from torch.utils.data import DataLoader, Dataset, TensorDataset  # noqa: E402


def show(title, value):
    print(f"{title}: {value}")


def show_traceback(title, action):
    try:
        action()
    except Exception:
        print(f"--- {title}\n{traceback.format_exc()}---")


class Refuses(torch.nn.Module):
    def forward(self, x):
        raise ValueError("refused on purpose")


class BadDataset(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        raise KeyError(f"no item {index}")


def backward_without_grad():
    torch.zeros(2).sum().backward()


def autograd_without_grad():
    torch.autograd.backward(torch.zeros(2).sum())


def step_with_bad_closure():
    parameter = torch.nn.Parameter(torch.zeros(2))
    optimizer = torch.optim.SGD([parameter], lr=0.1)
    optimizer.step(closure=lambda: 1 / 0)


show_traceback("forward", lambda: Refuses()(torch.zeros(1)))
show_traceback("optimizer without parameters", lambda: torch.optim.SGD([], lr=0.1))
show_traceback("dataloader", lambda: next(iter(DataLoader(BadDataset(), batch_size=2))))
show_traceback("Tensor.backward", backward_without_grad)
show_traceback("torch.autograd.backward", autograd_without_grad)
show_traceback("optimizer step", step_with_bad_closure)

module = torch.nn.Module
show("Module.__call__ is _call_impl", module.__call__ is module._call_impl)
for function in (module.__call__, torch.optim.Optimizer.zero_grad, torch.optim.Optimizer.__init__,
                 torch.autograd.backward, torch.Tensor.backward,
                 torch.utils.data.dataloader._BaseDataLoaderIter.__next__):
    show(f"introspection of {function.__qualname__}",
         (function.__name__, function.__module__, inspect.isfunction(function), str(inspect.signature(function)),
          len(inspect.getsource(function)), function.__code__.co_firstlineno))
for name in PATCHED:
    show(f"loader of {name}", type(sys.modules[name].__loader__).__name__)
show("import finder asked", asked)

import sitecustomize  # noqa: E402

show("sitecustomize", getattr(sitecustomize, "__file__", None))
show("PYTHONPATH", os.environ.get("PYTHONPATH"))
show("environment", sorted(os.environ.items()))
show("child environment", subprocess.run(["/usr/bin/env"], capture_output=True, text=True).stdout.splitlines())
show("python child environment", subprocess.run([sys.executable, "-c", "import os; print(sorted(os.environ.items()))"],
                                                capture_output=True, text=True).stdout.strip())
show("sys.path", sys.path)
show("sys.modules", sorted(sys.modules))

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
data = TensorDataset(torch.randn(8, 4), torch.randn(8, 1))
for x, y in DataLoader(data, batch_size=4):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    show("loss", f"{loss.item():.6f}")
sys.stdout.flush()
Refuses()(torch.zeros(1))
