#!/usr/bin/python3
"""Python frames as the collector captures them, checked against this script's own source.

    python_frames_test.py PROBE_LIBRARY [CUDA_RUNTIME]

PROBE_LIBRARY (python_frames_probe) runs the collector's capture on the calling thread and
returns "file(line): function" lines, innermost first. Each case calls it from a known chain
of functions and compares the lines with what the source says (lines marked "# @name") and
with Python's own traceback.extract_stack() for the callers. With CUDA_RUNTIME (a libcudart
loaded via ctypes, run under LD_PRELOAD=libprofagent.so on devsim) every capture sits next to
a real runtime call from the same function. Exit status 0 when every case holds.
"""
import ctypes
import os
import subprocess
import sys
import threading
import traceback

PROBE_PATH = sys.argv[1]
probe = ctypes.CDLL(PROBE_PATH)        # calls release the GIL
probe_gil = ctypes.PyDLL(PROBE_PATH)   # calls keep the GIL
cuda = ctypes.CDLL(sys.argv[2]) if len(sys.argv) > 2 else None
probe.pyframes_is_interpreter.argtypes = [ctypes.c_void_p]
probe.pyframes_bench.restype = ctypes.c_double
probe.pyframes_truncated.restype = ctypes.c_ulonglong
probe.pyframes_unreadable.restype = ctypes.c_ulonglong
HERE = os.path.abspath(__file__)
failures = []


def marker_line(name):
    with open(HERE) as source:
        for number, text in enumerate(source, 1):
            if text.rstrip().endswith("# @" + name):
                return number
    raise LookupError(name)


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAILED:", message)


def captured(lib):
    buffer = ctypes.create_string_buffer(1 << 16)
    count = lib.pyframes_text(buffer, len(buffer))  # @capture
    lines = buffer.value.decode().splitlines()
    check(count == len(lines), f"{count} frames but {len(lines)} lines")
    return lines


def callers_as_lines(stack):
    """traceback.extract_stack() of the caller, innermost first, in the probe's format."""
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(stack)]


def capture_here(lib):
    if cuda is not None:
        count = ctypes.c_int(-1)
        check(cuda.cudaGetDeviceCount(ctypes.byref(count)) == 0, "cudaGetDeviceCount failed")
    expected_callers = callers_as_lines(traceback.extract_stack()[:-1])
    return captured(lib), expected_callers  # @capture_here


def inner(lib):
    return capture_here(lib)  # @inner


def middle(lib):
    return inner(lib)  # @middle


def outer(lib):
    return middle(lib)  # @outer


def expect_chain(lines, callers, label):
    want = [f"{HERE}({marker_line('capture')}): captured",
            f"{HERE}({marker_line('capture_here')}): capture_here"] + callers
    check(lines == want, f"{label}: got\n  " + "\n  ".join(lines) + "\nwanted\n  " + "\n  ".join(want))
    chain = [f"{HERE}({marker_line(n)}): {n}" for n in ("inner", "middle", "outer")]
    check(lines[2:5] == chain, f"{label}: inner → middle → outer missing or out of order: {lines[2:5]}")


def case_main_thread(lib, label):
    lines, callers = outer(lib)  # @main_thread
    expect_chain(lines, callers, label)
    check(lines[-1].endswith("): <module>"), f"{label}: outermost frame is not the module: {lines[-1]}")


def case_second_thread(lib, label):
    result = {}
    def thread_main():
        result["frames"] = outer(lib)  # @thread_main
    worker = threading.Thread(target=thread_main)
    worker.start()
    worker.join()
    lines, callers = result["frames"]
    expect_chain(lines, callers, label)
    check(lines[5] == f"{HERE}({marker_line('thread_main')}): thread_main", f"{label}: {lines[5]}")
    check([l.rsplit(": ", 1)[1] for l in lines[6:]] == ["run", "_bootstrap_inner", "_bootstrap"],
          f"{label}: threading's frames: {lines[6:]}")


def case_generator_and_callback(lib):
    def generator():
        yield outer(lib)  # @generator
    lines, callers = next(generator())
    expect_chain(lines, callers, "generator")
    flags = ctypes.create_string_buffer(256)
    sorted([1], key=lambda _: probe.pyframes_entry_flags(flags, len(flags)))  # @key
    # innermost: the lambda, run by sorted() from C — an entry frame; its caller is not one.
    check(flags.value.decode()[:2] == "10", f"entry flags {flags.value.decode()}")


def case_line_table():
    """The decoder against code.co_lines() for every instruction of many real code objects."""
    import ast, dis, json.decoder, threading as t, inspect
    codes, seen, mismatches, done = [], 0, 0, set()
    for module in (ast, dis, json.decoder, t, inspect, sys.modules[__name__]):
        for value in vars(module).values():
            for candidate in (value, getattr(value, "__func__", None)):
                code = getattr(candidate, "__code__", None)
                if code is not None:
                    codes.append(code)
            if isinstance(value, type):
                codes += [f.__code__ for f in vars(value).values() if hasattr(f, "__code__")]
    while codes:
        code = codes.pop()
        if id(code) in done:
            continue
        done.add(id(code))
        codes += [c for c in code.co_consts if hasattr(c, "co_lines")]
        table = code.co_linetable
        for start, end, line in code.co_lines():
            for offset in range(start, end, 2):
                seen += 1
                got = probe.pyframes_line_at(table, len(table), code.co_firstlineno, offset)
                if got != (-1 if line is None else line):
                    mismatches += 1
    check(seen > 20000 and mismatches == 0, f"line table: {mismatches} of {seen} instructions differ")
    print(f"line table: {seen} instructions of {len(done)} code objects agree with co_lines()")


def mixed():
    buffer = ctypes.create_string_buffer(1 << 16)
    probe.pyframes_mixed_text(buffer, len(buffer))  # @mixed
    return buffer.value.decode().splitlines()


CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int)


def case_mixed_with_callback():
    """Python → C (pyframes_call_back) → Python → capture: the native frame sits between the
    two groups of Python frames, and no native frame of the interpreter is left."""
    seen = {}
    def called_back():
        seen["lines"] = mixed()  # @called_back
        return 0
    probe.pyframes_call_back(CALLBACK(called_back))  # @calls_back
    lines = seen["lines"]
    python = [l[3:] for l in lines if l.startswith("py ")]
    want_inner = [f"{HERE}({marker_line(n)}): {f}" for n, f in
                  (("mixed", "mixed"), ("called_back", "called_back"), ("calls_back", "case_mixed_with_callback"))]
    check(python[:3] == want_inner, f"mixed: Python frames {python[:3]}")
    check(python[-1].endswith("): <module>"), f"mixed: outermost {python[-1:]}")
    at = {l: i for i, l in enumerate(lines)}
    back = [i for i, l in enumerate(lines) if l.endswith("!pyframes_call_back")]
    check(len(back) == 1 and at["py " + want_inner[1]] < back[0] < at["py " + want_inner[2]],
          "mixed: pyframes_call_back is not between the callback and its caller:\n  " + "\n  ".join(lines))
    # dladdr names the executable as it was started, not as the link resolves.
    interpreter = {os.path.basename(p) for p in (sys.executable, os.path.realpath(sys.executable))}
    check(not [l for l in lines if l.split("!")[0][len("native "):] in interpreter],
          "mixed: interpreter frames left:\n  " + "\n  ".join(lines))


def case_no_python_state():
    check(probe.pyframes_on_native_thread() == 0, "a thread without Python state got frames")


def case_interpreter_ranges():
    eval_loop = ctypes.cast(ctypes.pythonapi._PyEval_EvalFrameDefault, ctypes.c_void_p).value
    check(probe.pyframes_is_interpreter(eval_loop) == 1, "the eval loop is not an interpreter frame")
    own = ctypes.cast(probe.pyframes_text, ctypes.c_void_p).value
    check(probe.pyframes_is_interpreter(own) == 0, "an extension library counted as interpreter")


def case_truncation():
    before = probe.pyframes_truncated()
    got = outer_depth(3)
    check(got == 3 and probe.pyframes_truncated() == before + 1, f"truncated capture gave {got} frames")


def outer_depth(limit):
    return probe.pyframes_capture_at_most(limit)


def case_threads_coming_and_going(lib):
    """Threads start, capture and exit while others capture: all frames stay right."""
    errors = []
    def short_lived():
        lines, callers = outer(lib)
        if lines[2:5] != [f"{HERE}({marker_line(n)}): {n}" for n in ("inner", "middle", "outer")]:
            errors.append(lines)
    for _ in range(20):
        workers = [threading.Thread(target=short_lived) for _ in range(8)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    check(not errors, f"{len(errors)} captures from short-lived threads were wrong: {errors[:1]}")


class CapturesWhenDeleted:
    """Kept in a threading.local: deleted while its thread's state is torn down at exit."""
    def __init__(self, sink):
        self.sink = sink

    def __del__(self):
        self.sink.append(captured(probe))  # @teardown


def case_thread_teardown():
    """The local outlives each thread, so each thread's value dies when that thread's state is
    cleared at its exit: the capture then sees only __del__'s frames, nothing below them."""
    sink = []
    local = threading.local()
    def thread_main():
        local.value = CapturesWhenDeleted(sink)
    for _ in range(10):
        worker = threading.Thread(target=thread_main)
        worker.start()
        worker.join()
    want = [f"{HERE}({marker_line('capture')}): captured", f"{HERE}({marker_line('teardown')}): __del__"]
    check(len(sink) == 10 and all(lines == want for lines in sink),
          f"captures during thread teardown: {sink[:1]}")


def case_finalization():
    """Daemon threads capture (GIL released) in a loop while the interpreter shuts down."""
    script = (
        "import ctypes, threading, atexit\n"
        f"probe = ctypes.CDLL({PROBE_PATH!r})\n"
        "buf = ctypes.create_string_buffer(1 << 16)\n"
        "def spin():\n"
        "    while True:\n"
        "        probe.pyframes_text(buf, len(buf))\n"
        "for _ in range(4):\n"
        "    threading.Thread(target=spin, daemon=True).start()\n"
        "atexit.register(lambda: probe.pyframes_text(buf, len(buf)))\n"
        "print('done')\n")
    for _ in range(5):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        check(run.returncode == 0 and run.stdout == "done\n", f"finalization run: {run.returncode} {run.stderr[-500:]}")


def main():
    check(probe.pyframes_supported() == 1, "Python 3.11 not supported")
    if failures:
        return 1
    case_main_thread(probe, "main thread, GIL released")
    case_main_thread(probe_gil, "main thread, GIL held")
    case_second_thread(probe, "second thread, GIL released")
    case_second_thread(probe_gil, "second thread, GIL held")
    case_generator_and_callback(probe)
    case_line_table()
    case_mixed_with_callback()
    case_no_python_state()
    case_interpreter_ranges()
    case_truncation()
    case_threads_coming_and_going(probe)
    case_thread_teardown()
    case_finalization()
    check(probe.pyframes_unreadable() == 0, f"{probe.pyframes_unreadable()} unreadable frames")
    print("FAILED" if failures else "ok", f"({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
