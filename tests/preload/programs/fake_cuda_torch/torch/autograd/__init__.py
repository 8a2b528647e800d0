from torch.autograd import profiler

_enabled = [False]  # the profiler of this thread (one thread here)


def _profiler_enabled():
    return _enabled[0]


def backward(*args, **kwargs):
    pass
