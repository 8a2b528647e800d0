"""profagent's Python start-up hook (`profagent run --step-on python`).

The launcher puts this directory first on PYTHONPATH, so Python imports this file at start-up
instead of the system's sitecustomize, which is then run too (chained), so nothing changes for
the program. It marks one profagent step at the end of every torch.optim.Optimizer.step() —
after the step returned, so the optimizer step belongs to the step it ends — by calling the
agent's exported profagent_step() through ctypes. torch is not imported here: the patch is
applied when the program itself imports torch.optim.optimizer.
"""
import ctypes
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _agent_step_function():
    try:
        return ctypes.CDLL(None).profagent_step  # present when libprofagent.so is preloaded
    except (AttributeError, OSError):
        return None


_profagent_step = _agent_step_function()


def _mark_step(*_args, **_kwargs):
    _profagent_step()


def _patch_optimizer(module):
    """torch >= 2.0: a global post-step hook. torch 1.13: every optimizer's step() is wrapped
    by Optimizer._hook_for_profile to call _optimizer_step_code() after it returns (the entry
    point torch.profiler itself uses); that method is extended."""
    register = getattr(module, "register_optimizer_step_post_hook", None)
    if register is not None:
        register(_mark_step)
        return
    optimizer = module.Optimizer
    original = optimizer._optimizer_step_code

    def _optimizer_step_code(self):
        original(self)
        _profagent_step()

    optimizer._optimizer_step_code = _optimizer_step_code


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            _patch_optimizer(module)
        except Exception as error:  # never break the program
            sys.stderr.write(f"[profagent] python step hook not installed: {error}\n")


class _OptimizerFinder(importlib.abc.MetaPathFinder):
    """Waits for torch.optim.optimizer to be imported, then patches it once."""

    def find_spec(self, name, path, target=None):
        if name != "torch.optim.optimizer":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader)
        return spec


def _run_chained_sitecustomize():
    """The sitecustomize this file hides (e.g. Debian's), found on the rest of sys.path."""
    others = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


if _profagent_step is not None:
    sys.meta_path.insert(0, _OptimizerFinder())
_run_chained_sitecustomize()
