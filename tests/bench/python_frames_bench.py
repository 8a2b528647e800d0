#!/usr/bin/python3
"""ns per capture of the calling thread's Python frames (collector/python_frames.h).

    python_frames_bench.py PROBE_LIBRARY [ITERATIONS]

Prints one line per figure; never fails on time. Fails only when a capture does not see the
depth it was called at (then the figure would be of something else). Figures are thread CPU
time; the call goes through ctypes.CDLL, so the GIL is released as in a real CUDA call.
"""
import ctypes
import functools
import sys
import traceback

probe = ctypes.CDLL(sys.argv[1])
probe.pyframes_bench.restype = ctypes.c_double
probe.pyframes_bench_once.restype = ctypes.c_double
ITERATIONS = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
DEPTH = 30


def distinct_chain(depth, tag):
    """`depth` distinct functions f0 → f1 → ... → the measurement, each its own code object."""
    namespace = {"probe": probe}
    source = []
    for i in range(depth - 1):
        source.append(f"def f{i}(work):\n    return f{i + 1}(work)\n")
    source.append(f"def f{depth - 1}(work):\n    return work()\n")
    exec(compile("".join(source), f"<chain {tag}>", "exec"), namespace)
    return namespace["f0"]


def recursive(n, work):
    return work() if n <= 1 else recursive(n - 1, work)


def measured(function, depth_seen, expected):
    """Runs the probe's measurement; `expected` gets the Python frames the capture should see."""
    expected.append(len(traceback.extract_stack()))
    return function(ctypes.byref(depth_seen))


# A partial, not a Python function, so that it adds no frame of its own.
steady = functools.partial(probe.pyframes_bench, ITERATIONS)


def main():
    # Frames below the chain (main, <module>) count too: the chain adds DEPTH - 2 of its own.
    figures = []
    for label, run, function in (
            ("distinct code objects", distinct_chain(DEPTH - 4, "steady"), steady),
            ("one recursive function", lambda w: recursive(DEPTH - 4, w), steady),
            ("first capture, all code objects new", distinct_chain(DEPTH - 4, "cold"), probe.pyframes_bench_once)):
        depth, expected = ctypes.c_int(0), []
        ns = run(lambda: measured(function, depth, expected))
        figures.append((label, depth.value, expected[0], ns))
    for label, seen, expected, ns in figures:
        print(f"python_frames capture: {ns:8.1f} ns at depth {seen:2d} ({label})")
        if seen != expected:
            print(f"FAILED: the capture saw {seen} frames where Python has {expected}")
    return 0 if all(seen == expected for _, seen, expected, _ in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
