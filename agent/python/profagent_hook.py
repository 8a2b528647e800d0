"""profagent's Python hook: marks the training phases of a torch program with the agent's user
ranges, under the names torch's own profiler annotations use, so the summaries find Dataloader,
Forward, Backward and Optimization without a line of profiler code in the script:

    enumerate(DataLoader)#<Iter>.__next__     each DataLoader iteration
    nn.Module: <Class>                        the outermost Module call (the forward pass)
    autograd.backward#Tensor.backward         loss.backward()
    autograd.backward#torch.autograd.backward torch.autograd.backward() called directly
    Optimizer.step#<Class>.step               optimizer.step()
    Optimizer.zero_grad#<Class>.zero_grad     optimizer.zero_grad()

With `python` among PROFAGENT_STEP_ON's items, the end of every outermost Optimizer.step() also
marks one profagent step, after its range closed, so the optimizer step belongs to the step it
ends.

What the program sees does not change:
  - each patched function is replaced, in place on its class or module, by a wrapper written in
    C (_profagent_ranges, next to this file): no frame of its own in a traceback, the original's
    attributes for introspection, the same result and the same exception (the range closed
    first). Module.__call__ and Module._call_impl stay one object;
  - torch is never imported here, and no import finder or loader is added: each module is
    patched once the program's import of it has finished, seen from an audit hook
    (sys.addaudithook: the "import" event of any later import; torch imports hundreds of modules
    after these five). Audit hooks cannot be listed or removed, and the program's finders are
    asked once, as without the hook;
  - this module and its extension are loaded without entering sys.modules.
Without libprofagent.so in the process nothing is patched.

install() needs nothing but this directory: the launcher's sitecustomize.py calls it.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))

# Kinds of outermost call, one counter each per thread (in the C wrapper); -1: every call.
_MODULE, _BACKWARD, _STEP, _ZERO_GRAD, _ALWAYS = 0, 1, 2, 3, -1


def _load_extension(path):
    """The call wrapper, loaded without entering sys.modules (importlib's own frozen modules,
    always loaded, do the work: no module is imported for it)."""
    import _frozen_importlib_external as external
    name = os.path.basename(path).split(".")[0]
    loader = external.ExtensionFileLoader(name, path)
    module = loader.create_module(external.spec_from_file_location(name, path, loader=loader))
    loader.exec_module(module)
    return module


class _Probe:
    def method(self):
        pass


def _class_name(prefix, suffix=""):
    """A name function "<prefix><class of the first argument><suffix>", encoded once per class."""
    cache = {}

    def name_of(first):
        cls = type(first)
        name = cache.get(cls)
        if name is None:
            name = cache[cls] = f"{prefix}{cls.__name__}{suffix}".encode()
        return name

    return name_of


class _Patcher:
    def __init__(self, ranges, mark_steps):
        self._ranges = ranges
        self._operators = _TorchOperators(ranges)
        self._after_step = True if mark_steps else None
        self._pending = {
            "torch.optim.optimizer": self._patch_optimizer,
            "torch.utils.data.dataloader": self._patch_dataloader,
            "torch.autograd": self._patch_autograd,
            "torch._tensor": self._patch_tensor,
            "torch.nn.modules.module": self._patch_module,
            "torch.autograd.profiler": lambda module: self._operators.patch_profiler(self, module),
        }
        self._busy = False
        self._step_name = _class_name("Optimizer.step#", ".step")
        self._zero_grad_name = _class_name("Optimizer.zero_grad#", ".zero_grad")

    # ---- when: after the program's import of each module finished --------------------------

    def audit(self, event, _args):
        if event == "import" and self._pending and not self._busy:
            self.patch_loaded()

    def patch_loaded(self):
        self._busy = True
        try:
            for name in list(self._pending):
                module = sys.modules.get(name)
                spec = getattr(module, "__spec__", None)
                if module is None or getattr(spec, "_initializing", False):
                    continue  # not imported yet, or still running
                patch = self._pending.pop(name)
                try:
                    patch(module)
                except Exception as error:  # never break the program
                    sys.stderr.write(f"[profagent] python hook not installed in {name}: {error}\n")
        finally:
            self._busy = False

    # ---- what -------------------------------------------------------------------------------

    def _wrap(self, owner, attribute, kind, name, after=None, also=()):
        """owner.<attribute> (and owner.<each of also>, when it is the same object) replaced by one
        wrapper, unless it is one already or absent."""
        function = owner.__dict__.get(attribute)
        if function is None or self._ranges.is_wrapper(function):
            return
        wrapper = self._ranges.wrap(function, kind, name, after)
        for other in also:
            if owner.__dict__.get(other) is function:
                setattr(owner, other, wrapper)
        setattr(owner, attribute, wrapper)

    def _patch_optimizer(self, module):
        """Optimizer.zero_grad directly; each optimizer class's own step() (and zero_grad()
        override) once its first instance is made, after torch wrapped step() itself."""
        optimizer = module.Optimizer
        self._wrap(optimizer, "zero_grad", _ZERO_GRAD, self._zero_grad_name)

        def after_init(instance):
            for cls in type(instance).__mro__:
                if cls is optimizer:
                    break
                self._wrap(cls, "step", _STEP, self._step_name, self._after_step)
                self._wrap(cls, "zero_grad", _ZERO_GRAD, self._zero_grad_name)
            self._wrap(optimizer, "step", _STEP, self._step_name, self._after_step)

        self._wrap(optimizer, "__init__", _ALWAYS, None, after_init)

    def _patch_dataloader(self, module):
        self._wrap(module._BaseDataLoaderIter, "__next__", _ALWAYS,
                   _class_name("enumerate(DataLoader)#", ".__next__"))

    def _patch_autograd(self, module):
        # Tensor.backward calls torch.autograd.backward: the one kind keeps that inner call from
        # opening a second range.
        if not self._ranges.is_wrapper(module.backward):
            module.backward = self._ranges.wrap(module.backward, _BACKWARD,
                                                b"autograd.backward#torch.autograd.backward", None)

    def _patch_tensor(self, module):
        self._wrap(module.Tensor, "backward", _BACKWARD, b"autograd.backward#Tensor.backward")

    def _patch_module(self, module):
        self._wrap(module.Module, "__call__", _MODULE, self._operators.before(_class_name("nn.Module: ")),
                   also=("_call_impl",))


# ---- torch operators: torch's own NVTX ranges for the recorded steps ------------------------

def _flag(name):
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class _TorchOperators:
    """Has torch name its operators as NVTX ranges (torch.autograd.profiler.emit_nvtx, with
    record_shapes from PROFAGENT_RECORD_SHAPES) while the agent records, which the agent, being
    the process's NVTX injection, turns back into operators. Decided before each outermost
    forward pass (the nn.Module range's name function): on once the agent records (a recorded or
    warm-up step) and the program uses CUDA already, off once it stops (emit_nvtx synchronises
    the device on both: twice per window, never per step). emit_nvtx holds for the thread that
    entered it and the autograd threads it starts. Steps aside for good, saying why once, with a
    torch that cannot (a CPU build, no CUDA device, emit_nvtx refused) or when the program runs
    its own torch profiler (both on one thread would make torch refuse the program's)."""

    def __init__(self, ranges):
        self._ranges = ranges
        self._context = None   # the entered emit_nvtx
        self._thread = None    # the thread that entered it
        self._off = False      # stepped aside for good
        self._record_shapes = _flag("PROFAGENT_RECORD_SHAPES")

    def before(self, name_of):
        """The forward pass's range name function, following the agent's state first."""
        def name(first):
            if not self._off:
                self.sync()
            return name_of(first)
        return name

    def sync(self):
        want = self._ranges.recording() != 0
        if want == (self._context is not None):
            return
        try:
            self._enter() if want else self._exit()
        except Exception as error:  # never break the program
            self._step_aside(f"torch's operator ranges failed ({type(error).__name__}: {error})")

    def _enter(self):
        torch = sys.modules.get("torch")
        cuda = getattr(torch, "cuda", None)
        if cuda is None:
            return
        if getattr(torch.version, "cuda", None) is None:
            return self._step_aside("this torch is a CPU build (torch.version.cuda is None)")
        if not cuda.is_initialized():
            return  # not using CUDA yet: emit_nvtx's synchronize must not start it
        if torch.autograd._profiler_enabled():
            return self._step_aside("the program runs its own torch profiler")
        context = torch.autograd.profiler.emit_nvtx(record_shapes=self._record_shapes)
        context.__enter__()
        self._context, self._thread = context, self._ident()

    def _exit(self):
        if self._thread != self._ident():
            return  # emit_nvtx is per thread: only its own thread can leave it
        context, self._context = self._context, None
        context.__exit__(None, None, None)

    def _ident(self):
        threads = sys.modules.get("_thread")
        return threads.get_ident() if threads is not None else None

    def _step_aside(self, why):
        if self._context is not None:
            try:
                self._exit()
            except Exception:
                pass
        self._off = True
        sys.stderr.write(f"[profagent] no torch operators are recorded: {why}\n")

    def patch_profiler(self, patcher, module):
        """The program's own torch profiler (torch.profiler.profile starts it through
        autograd.profiler.profile): ours steps aside before it starts, for good."""
        def before_user_profiler(_first):
            if not self._off:
                self._step_aside("the program starts its own torch profiler")
            return None  # no range: the wrapper only runs this first
        for attribute in ("__enter__", "_prepare_trace", "_start_trace"):
            patcher._wrap(module.profile, attribute, _ALWAYS, before_user_profiler)


def _steps_on_python():
    items = os.environ.get("PROFAGENT_STEP_ON", "").split(",")
    return any(item.strip() == "python" for item in items)


def _hide_agent_variables(ranges):
    """os.environ (and posix.environ, the copy it was made from) without the variables the agent
    set for itself (CUDA's tool-injection path): the program sees what it would see without the
    agent. They stay in the process's environment, where CUDA reads them at its start; a child
    started without the agent gets them removed at exec, a child with the agent sets them itself
    (and its own hook hides them)."""
    posix = sys.modules.get("posix")
    for name, value in list(os.environ.items()):
        if ranges.is_agent_variable(name, value):
            os.environ._data.pop(os.environ.encodekey(name), None)  # not unsetenv: CUDA reads it
            if posix is not None:
                posix.environ.pop(os.fsencode(name), None)


def _check_frames(ranges):
    """Stacks show Python frames read straight from the interpreter's private structures, whose
    layout changes with every version: the agent uses its layout only once it found, on this
    thread and now, exactly these frames (this function's and its callers'), this one at this
    line. Otherwise it says so once and stacks keep native frames only."""
    codes, frame = [], sys._getframe()
    while frame is not None:
        codes.append(frame.f_code)
        frame = frame.f_back
    ranges.check_frames(tuple(codes), sys._getframe().f_lineno, codes[0].co_name)


def install():
    """Patches what is loaded already and, from then on, what the program imports. Nothing
    without the agent; one line on stderr if the call wrapper cannot be loaded."""
    path = os.path.join(_HERE, "_profagent_ranges.abi3.so")
    if not os.path.exists(path):
        sys.stderr.write(f"[profagent] python hook off: its call wrapper {path} was not built (python3-dev)\n")
        return
    try:
        ranges = _load_extension(path)
    except ImportError:
        return  # libprofagent.so is not in this process
    ranges.set_method_type(type(_Probe().method))
    _hide_agent_variables(ranges)
    _check_frames(ranges)
    patcher = _Patcher(ranges, _steps_on_python())
    patcher.patch_loaded()
    sys.addaudithook(patcher.audit)
