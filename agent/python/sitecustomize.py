"""profagent's Python start-up hook (every `profagent run`, unless --no-python-hook).

The launcher puts this directory first on PYTHONPATH, so Python imports this file at start-up
instead of the system's sitecustomize, which is then run too (chained), so nothing changes for
the program. When libprofagent.so is loaded it marks the training phases of a torch program
with the agent's user ranges (profagent_range_push/pop through ctypes), under the names torch's
own profiler annotations use, so the summaries find Dataloader, Forward, Backward and
Optimization without a line of profiler code in the script:

    enumerate(DataLoader)#<Iter>.__next__     each DataLoader iteration
    nn.Module: <Class>                        the outermost Module call (the forward pass)
    autograd.backward#Tensor.backward         loss.backward()
    autograd.backward#torch.autograd.backward torch.autograd.backward() called directly
    Optimizer.step#<Class>.step               optimizer.step()
    Optimizer.zero_grad#<Class>.zero_grad     optimizer.zero_grad()

With `--step-on python` (PROFAGENT_STEP_ON has `python`) the end of every outermost
Optimizer.step() also marks one profagent step, after its range closed, so the optimizer
step belongs to the step it ends.

torch is never imported here: each class is patched when the program itself imports the
module defining it. A patched call returns what the original returns and raises what it
raises (its range closed first). Without the agent nothing is patched.
"""
import ctypes
import functools
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))


class _Agent:
    """The agent's exported functions, resolved once; None when the agent is not loaded."""

    def __init__(self, library):
        self.step = library.profagent_step
        self.push = library.profagent_range_push
        self.pop = library.profagent_range_pop
        self.push.argtypes, self.push.restype = [ctypes.c_char_p], None
        self.pop.argtypes, self.pop.restype = [], None
        self.step.argtypes, self.step.restype = [], None

    @staticmethod
    def load():
        try:
            return _Agent(ctypes.CDLL(None))
        except (AttributeError, OSError):
            return None


def _steps_on_python():
    items = os.environ.get("PROFAGENT_STEP_ON", "").split(",")
    return any(item.strip() == "python" for item in items)


_agent = _Agent.load()
_mark_steps = _steps_on_python()
_depth = threading.local()  # per thread: how many calls of each kind are open


def _enter(kind):
    """Counts one more open call of `kind` on this thread; True if it is the outermost."""
    depth = getattr(_depth, kind, 0)
    setattr(_depth, kind, depth + 1)
    return depth == 0


def _leave(kind):
    setattr(_depth, kind, getattr(_depth, kind) - 1)


def _ranged(function, kind, name_of, after=None):
    """`function` inside a range named name_of(args), when it is the outermost call of `kind`
    on its thread (`kind` None: always). `after` runs once the outermost call returned (not
    when it raised), its range closed."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        outermost = kind is None or _enter(kind)
        try:
            if not outermost:
                return function(*args, **kwargs)
            _agent.push(name_of(args))
            try:
                result = function(*args, **kwargs)
            finally:
                _agent.pop()
        finally:
            if kind is not None:
                _leave(kind)
        if after is not None:
            after()
        return result

    wrapper._profagent = True
    return wrapper


def _class_name(prefix, suffix=""):
    """A name function "<prefix><class of args[0]><suffix>", encoded once per class."""
    cache = {}

    def name_of(args):
        cls = type(args[0])
        name = cache.get(cls)
        if name is None:
            name = cache[cls] = f"{prefix}{cls.__name__}{suffix}".encode()
        return name

    return name_of


def _fixed(name):
    encoded = name.encode()
    return lambda _args: encoded


def _wrap_attribute(owner, attribute, kind, name_of, after=None):
    function = owner.__dict__.get(attribute)
    if function is None or getattr(function, "_profagent", False):
        return
    setattr(owner, attribute, _ranged(function, kind, name_of, after))


# ---- the patches, one per module that defines a patched class ---------------------------------

def _patch_optimizer(module):
    """Optimizer.zero_grad directly; each optimizer class's own step() (and zero_grad()
    override) when its first instance is made, as torch wraps step() itself."""
    optimizer = module.Optimizer
    step_name = _class_name("Optimizer.step#", ".step")
    zero_grad_name = _class_name("Optimizer.zero_grad#", ".zero_grad")
    after_step = _agent.step if _mark_steps else None
    _wrap_attribute(optimizer, "zero_grad", "zero_grad", zero_grad_name)
    original_init = optimizer.__init__

    @functools.wraps(original_init)
    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        for cls in type(self).__mro__:
            if cls is optimizer:
                break
            _wrap_attribute(cls, "step", "step", step_name, after_step)
            _wrap_attribute(cls, "zero_grad", "zero_grad", zero_grad_name)
        _wrap_attribute(optimizer, "step", "step", step_name, after_step)

    optimizer.__init__ = __init__


def _patch_dataloader(module):
    _wrap_attribute(module._BaseDataLoaderIter, "__next__", None,
                    _class_name("enumerate(DataLoader)#", ".__next__"))


def _patch_autograd(module):
    # Tensor.backward calls torch.autograd.backward: the "backward" depth keeps that inner
    # call from opening a second range.
    module.backward = _ranged(module.backward, "backward", _fixed("autograd.backward#torch.autograd.backward"))


def _patch_tensor(module):
    _wrap_attribute(module.Tensor, "backward", "backward", _fixed("autograd.backward#Tensor.backward"))


def _patch_module(module):
    _wrap_attribute(module.Module, "__call__", "module", _class_name("nn.Module: "))


_PATCHES = {
    "torch.optim.optimizer": _patch_optimizer,
    "torch.utils.data.dataloader": _patch_dataloader,
    "torch.autograd": _patch_autograd,
    "torch._tensor": _patch_tensor,
    "torch.nn.modules.module": _patch_module,
}


# ---- applying a patch when its module is imported --------------------------------------------

class _PatchingLoader(importlib.abc.Loader):
    """The module's own loader, then the patch. Everything else (get_source for tracebacks,
    resource readers) is the original loader's."""

    def __init__(self, loader, patch):
        self._loader = loader
        self._patch = patch

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        try:
            self._patch(module)
        except Exception as error:  # never break the program
            sys.stderr.write(f"[profagent] python hook not installed in {module.__name__}: {error}\n")


class _PatchFinder(importlib.abc.MetaPathFinder):
    """Finds each patched module once through the other finders and hands it a patching loader."""

    def __init__(self, patches):
        self._patches = dict(patches)

    def find_spec(self, name, path, target=None):
        patch = self._patches.get(name)
        if patch is None:
            return None
        spec = self._find_elsewhere(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        del self._patches[name]
        if not self._patches:
            sys.meta_path.remove(self)
        spec.loader = _PatchingLoader(spec.loader, patch)
        return spec

    def _find_elsewhere(self, name, path, target):
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                return spec
        return None


def _run_chained_sitecustomize():
    """The sitecustomize this file hides (e.g. Debian's), found on the rest of sys.path."""
    others = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


if _agent is not None:
    sys.meta_path.insert(0, _PatchFinder(_PATCHES))
_run_chained_sitecustomize()
