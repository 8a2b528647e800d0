#!/usr/bin/python3
"""A model-like training loop over the simulated DIOPI framework (libframeworksim.so), loaded
with ctypes exactly as a Python extension is (RTLD_LOCAL): per step, forward
conv -> batch norm -> relu -> linear -> cross-entropy, backward through all of them, an AdamW
step per parameter, one stream sync (the step's only synchronisation, so
PROFAGENT_STEP_ON=api:cudaStreamSynchronize marks its steps). Prints the operators the
framework routes to the vendor and the time of each step. The loss is not read back: on the
simulated device kernels are timed, not run, so it would be a meaningless number.

    train.py [--framework path/to/libframeworksim.so] [--steps N]

Standard library only. Run it on devsim: LD_LIBRARY_PATH=<build>/devsim.
"""
import argparse
import ctypes
import os
import sys
import time

FLOAT32, INT64 = 6, 4  # diopiDtype_t values of diopi_sim/diopirt.h
BATCH, CHANNELS, SIZE, FILTERS, CLASSES = 16, 3, 32, 16, 10


def load_framework(path):
    lib = ctypes.CDLL(path)  # RTLD_LOCAL, as Python loads extension modules
    lib.fw_tensor.restype = ctypes.c_void_p
    lib.fw_tensor.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_int]
    lib.fw_implemented_ops.restype = ctypes.c_char_p
    lib.fw_fallback_calls.restype = ctypes.c_int64
    lib.fw_adamw.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_float, ctypes.c_int64]
    lib.fw_upload.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    lib.fw_fill.argtypes = [ctypes.c_void_p, ctypes.c_double]
    for name in ("fw_conv2d", "fw_conv2d_backward", "fw_batch_norm", "fw_batch_norm_backward", "fw_relu",
                 "fw_relu_backward", "fw_linear", "fw_linear_backward", "fw_cross_entropy",
                 "fw_cross_entropy_backward", "fw_softmax", "fw_fill", "fw_copy"):
        getattr(lib, name).restype = ctypes.c_int
    return lib


class Model:
    def __init__(self, fw):
        self.fw = fw
        flat = FILTERS * SIZE * SIZE
        t = self.tensor
        self.x, self.labels = t(BATCH, CHANNELS, SIZE, SIZE), t(BATCH, dtype=INT64)
        shapes = {"conv.w": (FILTERS, CHANNELS, 3, 3), "conv.b": (FILTERS,), "bn.w": (FILTERS,),
                  "bn.b": (FILTERS,), "fc.w": (flat, CLASSES), "fc.b": (CLASSES,)}
        self.params = {k: t(*shape) for k, shape in shapes.items()}
        self.grads = {k: t(*shape) for k, shape in shapes.items()}
        self.moments = {k: (t(*shape), t(*shape)) for k, shape in shapes.items()}
        self.conv, self.bn, self.act = t(BATCH, FILTERS, SIZE, SIZE), t(BATCH, FILTERS, SIZE, SIZE), t(BATCH, FILTERS, SIZE, SIZE)
        self.mean, self.invstd, self.run_mean, self.run_var = t(FILTERS), t(FILTERS), t(FILTERS), t(FILTERS)
        self.flat, self.logits, self.loss = t(BATCH, flat), t(BATCH, CLASSES), t(1)
        self.g_logits, self.g_loss, self.g_flat = t(BATCH, CLASSES), t(1), t(BATCH, flat)
        self.g_act, self.g_bn, self.g_conv_in = (t(BATCH, FILTERS, SIZE, SIZE), t(BATCH, FILTERS, SIZE, SIZE),
                                                 t(BATCH, CHANNELS, SIZE, SIZE))
        self.probs = t(BATCH, CLASSES)
        self.step_count = 0

    def tensor(self, *shape, dtype=FLOAT32):
        dims = (ctypes.c_int64 * len(shape))(*shape)
        handle = self.fw.fw_tensor(len(shape), dims, dtype)
        if not handle:
            sys.exit(f"train: could not allocate a tensor of shape {shape}")
        return ctypes.c_void_p(handle)

    def check(self, what, status):
        if status != 0:
            sys.exit(f"train: {what} failed with diopiError_t {status}")

    def forward(self):
        fw, p, c = self.fw, self.params, self.check
        c("conv", fw.fw_conv2d(self.conv, self.x, p["conv.w"], p["conv.b"], 1, 1))
        c("batch norm", fw.fw_batch_norm(self.bn, self.mean, self.invstd, self.conv, p["bn.w"], p["bn.b"],
                                          self.run_mean, self.run_var, 1))
        c("relu", fw.fw_relu(self.act, self.bn))
        c("flatten", fw.fw_copy(self.flat, self.act))  # (batch, filters, h, w) -> (batch, features)
        c("linear", fw.fw_linear(self.logits, self.flat, p["fc.w"], p["fc.b"]))
        c("softmax", fw.fw_softmax(self.probs, self.logits, 1))  # vendor lacks it: fallback
        c("loss", fw.fw_cross_entropy(self.loss, self.logits, self.labels))

    def backward(self):
        fw, p, g, c = self.fw, self.params, self.grads, self.check
        c("fill", fw.fw_fill(self.g_loss, 1.0))
        c("loss backward", fw.fw_cross_entropy_backward(self.g_logits, self.g_loss, self.logits, self.labels))
        c("linear backward", fw.fw_linear_backward(self.g_flat, g["fc.w"], g["fc.b"], self.g_logits, self.flat,
                                                   p["fc.w"]))
        c("unflatten", fw.fw_copy(self.g_act, self.g_flat))
        c("relu backward", fw.fw_relu_backward(self.g_act, self.g_act, self.bn))
        c("batch norm backward", fw.fw_batch_norm_backward(self.g_bn, g["bn.w"], g["bn.b"], self.g_act, self.conv,
                                                           p["bn.w"], self.mean, self.invstd))
        c("conv backward", fw.fw_conv2d_backward(self.g_conv_in, g["conv.w"], g["conv.b"], self.g_bn, self.x,
                                                 p["conv.w"], 1, 1))

    def optimizer_step(self):
        self.step_count += 1
        for name, param in self.params.items():
            m, v = self.moments[name]
            self.check(f"adamw {name}", self.fw.fw_adamw(param, self.grads[name], m, v, 1e-3, self.step_count))


def main():
    parser = argparse.ArgumentParser(description="model-like training loop over DIOPI through ctypes")
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--framework", default=os.environ.get("FRAMEWORKSIM_LIB",
                        os.path.join(here, "..", "..", "build", "lib", "libframeworksim.so")))
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    fw = load_framework(args.framework)
    if fw.fw_init() != 0:
        sys.exit("train: no device (run on devsim: LD_LIBRARY_PATH=<build>/devsim)")
    print("implemented operators:", fw.fw_implemented_ops().decode())
    model = Model(fw)
    for step in range(1, args.steps + 1):
        start = time.perf_counter()
        model.forward()
        model.backward()
        model.optimizer_step()
        model.check("sync", fw.fw_sync())
        elapsed = (time.perf_counter() - start) * 1e3
        print(f"step {step:3d}  time {elapsed:.3f} ms")
    print(f"fallback calls: {fw.fw_fallback_calls()}")
    print(f"train: {args.steps} steps done")


if __name__ == "__main__":
    main()
