"""CuPy's two ways to run a kernel, each LAUNCHES times: an ElementwiseKernel (generated and
compiled by CuPy) and a RawKernel (the program's own CUDA C), both launched by CuPy through
the driver API. Prints one JSON line with the kernel names and counts, and whether the
results are right."""
import json
import sys

import cupy

LAUNCHES = 10

RAW_SOURCE = r'''
extern "C" __global__ void gpu_check_raw_scale(const float* x, float* y, float a, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
'''


def main():
    n = 1 << 20
    x = cupy.arange(n, dtype=cupy.float32)
    y = cupy.empty_like(x)
    elementwise = cupy.ElementwiseKernel("float32 x, float32 a", "float32 y", "y = a * x + 1.0f",
                                         "gpu_check_elementwise")
    raw = cupy.RawKernel(RAW_SOURCE, "gpu_check_raw_scale")
    for _ in range(LAUNCHES):
        elementwise(x, cupy.float32(2.0), y)
    ok = bool(cupy.allclose(y, 2.0 * x + 1.0))
    for _ in range(LAUNCHES):
        raw(((n + 255) // 256,), (256,), (x, y, cupy.float32(3.0), cupy.int32(n)))
    cupy.cuda.runtime.deviceSynchronize()
    ok = ok and bool(cupy.allclose(y, 3.0 * x))
    print(json.dumps({"kernels": {"gpu_check_elementwise": LAUNCHES, "gpu_check_raw_scale": LAUNCHES},
                      "correct": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
