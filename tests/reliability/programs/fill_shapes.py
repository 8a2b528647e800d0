#!/usr/bin/python3
"""Fills one rank-8 tensor through the simulated DIOPI framework N times (one diopiFill
operator each) and prints what it did; the shape-store case runs it under the agent with a
store too small for all of their shapes.

    fill_shapes.py path/to/libframeworksim.so N
"""
import ctypes
import json
import sys

FLOAT32 = 6


def main():
    fw = ctypes.CDLL(sys.argv[1])
    fw.fw_tensor.restype = ctypes.c_void_p
    fw.fw_tensor.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_int]
    fw.fw_fill.argtypes = [ctypes.c_void_p, ctypes.c_double]
    fw.fw_fill.restype = ctypes.c_int
    dims = (ctypes.c_int64 * 8)(*([1] * 7 + [2]))
    tensor = ctypes.c_void_p(fw.fw_tensor(8, dims, FLOAT32))
    calls = int(sys.argv[2])
    failed = sum(1 for _ in range(calls) if fw.fw_fill(tensor, 1.0) != 0)
    print("expect " + json.dumps({"diopiFill": calls, "failed": failed}))


if __name__ == "__main__":
    main()
