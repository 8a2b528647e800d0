"""How libprofagent.so starts its Python hook (profagent_hook.py, beside this file) in every
Python interpreter it is loaded in, under `profagent run` or plain LD_PRELOAD alike, unless
PROFAGENT_PYTHON_HOOK=off (`profagent run --no-python-hook`).

The agent puts this directory first on PYTHONPATH before Python starts (agent/python_startup.h),
so Python's start-up (site.py) imports this file as `sitecustomize`. It then leaves the process
as it would be without it:
  - PYTHONPATH (os.environ and the process environment the program's children inherit) and
    sys.path lose this directory again. The agent wrote "<dir>" for an unset PYTHONPATH and
    "<dir>:<value>" for a set one, so the value is restored exactly (an empty one included:
    "<dir>:" also made Python put the working directory on sys.path, taken out too);
  - the hook is started (profagent_hook.install());
  - the sitecustomize this file hides (Debian's, or the user's on the rest of sys.path) is run as
    Python would run it, under the name `sitecustomize`: `import sitecustomize` gives that module
    and its __file__. Without one, `import sitecustomize` fails again as it would (an ImportError
    naming the module, which site.py passes over silently).
Only modules Python has loaded at start-up anyway are used: sys.modules is unchanged.
"""
import os
import sys


def _restore_environment(here):
    value = os.environ.get("PYTHONPATH")
    if value is None or os.path.abspath(value.split(":")[0] or ".") != here:
        return
    if ":" not in value:
        del os.environ["PYTHONPATH"]
    else:
        os.environ["PYTHONPATH"] = value.split(":", 1)[1]
    if here in sys.path:
        at = sys.path.index(here)
        del sys.path[at]
        if value.endswith(":") and value.count(":") == 1 and at < len(sys.path):
            del sys.path[at]  # the working directory Python made of the empty entry
    sys.path_importer_cache.pop(here, None)


def _start_hook(here):
    """profagent_hook.py run as a module that sys.modules never lists."""
    import _frozen_importlib as bootstrap
    import _frozen_importlib_external as external
    spec = external.spec_from_file_location("profagent_hook", os.path.join(here, "profagent_hook.py"))
    module = bootstrap.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.install()


def _run_hidden_sitecustomize():
    """The sitecustomize Python would have imported, installed as sys.modules['sitecustomize']
    (importlib keeps that entry as the result of site.py's `import sitecustomize`)."""
    import _frozen_importlib as bootstrap
    import _frozen_importlib_external as external
    spec = external.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError("No module named 'sitecustomize'", name="sitecustomize")
    module = bootstrap.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _main():
    here = os.path.dirname(os.path.abspath(__file__))
    _restore_environment(here)
    try:
        _start_hook(here)
    except Exception as error:  # never break the program
        sys.stderr.write(f"[profagent] python hook not started: {error}\n")
    _run_hidden_sitecustomize()


_main()
