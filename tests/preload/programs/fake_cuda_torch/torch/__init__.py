"""A stand-in for a CUDA build of torch, just what profagent's Python hook touches to turn
torch's operator ranges on and off (torch.autograd.profiler.emit_nvtx): version.cuda, cuda,
autograd._profiler_enabled, autograd.profiler.emit_nvtx/profile, nn.Module. emit_nvtx and
profile print what happens to them, so a checker can read when the hook entered and left it.
(tests/preload/torch_hook_check.py; the real torch is checked on a GPU by tests/gpu.)"""
import types

from torch import autograd, nn  # noqa: F401  (the hook patches them once imported)

version = types.SimpleNamespace(cuda="12.4")
cuda = types.SimpleNamespace(is_initialized=lambda: True)
