import torch.autograd as autograd


class emit_nvtx:
    def __init__(self, enabled=True, record_shapes=False):
        self.record_shapes = record_shapes

    def __enter__(self):
        if autograd._enabled[0]:
            raise RuntimeError("Profiler is already enabled on this thread")
        autograd._enabled[0] = True
        print(f"emit_nvtx on record_shapes={self.record_shapes}")
        return self

    def __exit__(self, *exc):
        autograd._enabled[0] = False
        print("emit_nvtx off")


class profile:
    def __enter__(self):
        if autograd._enabled[0]:
            raise RuntimeError("Profiler is already enabled on this thread")
        autograd._enabled[0] = True
        print("program profiler on")
        return self

    def __exit__(self, *exc):
        autograd._enabled[0] = False
        print("program profiler off")
