"""Python frames in call stacks (PROFAGENT_WITH_STACK=1): a Python program calling the runtime
through ctypes (a compiled extension, as torch's calls come) from known functions sees those
`file.py(line): function` frames innermost first with the right lines, also from a second
thread and with the GIL released (ctypes releases it); the DIOPI demo (tests/vendorsim/train.py)
shows its Python functions under each operator."""
import glob
import os

import reliability as R
from reliability import trace_reader
from cases_stacks import frames_of, stack_events

SCRIPT = '''
import threading


def inner():
    rt.cudaStreamSynchronize(None)  # MARK inner


def outer():
    inner()  # MARK outer


def worker():
    for _ in range(10):
        outer()  # MARK worker


for _ in range(10):
    outer()  # MARK module
thread = threading.Thread(target=worker)
thread.start()
thread.join()
rt.cudaDeviceSynchronize()
print("done")
'''


def marks(text):
    return {line.split("# MARK ")[1].strip(): number
            for number, line in enumerate(text.splitlines(), 1) if "# MARK " in line}


def python_frames(frames):
    return [f for f in frames if ".py(" in f]


def case_python_ctypes(env):
    out = env.out("stacks_python")
    text = R.py_runtime(env) + SCRIPT
    script = os.path.join(out, "known_calls.py")
    with open(script, "w") as f:
        f.write(text)
    line = marks(text)
    agent, plain = R.both(env, ["/usr/bin/python3", script], {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_WITH_STACK": "1"})
    R.expect_unchanged(agent, plain)
    R.expect(not [l for l in agent.agent_lines() if "Python" in l], f"Python said unsupported: {agent.agent_lines()}")
    document = R.one_valid_trace(out, {"cudaStreamSynchronize": 20})
    threads = {}
    for call in stack_events(document, "cudaStreamSynchronize"):
        frames = python_frames(frames_of(document, call["sf"]))
        want = [f"known_calls.py({line['inner']}): inner", f"known_calls.py({line['outer']}): outer"]
        got = [f.rsplit("/", 1)[-1] for f in frames[:3]]
        R.expect(got[:2] == want, f"Python frames {frames}, expected {want} first")
        caller = got[2]
        R.expect(caller in (f"known_calls.py({line['module']}): <module>", f"known_calls.py({line['worker']}): worker"),
                 f"third frame {caller!r}")
        if caller.endswith("worker"):
            R.expect(any(f.endswith("_bootstrap_inner") for f in frames), f"worker frames {frames}")
        threads.setdefault(call["tid"], set()).add(caller)
        R.expect(call["args"]["Call site"].endswith(want[0]), f"Call site {call['args']['Call site']!r}")
    R.expect(len(threads) == 2 and sorted(len(c) for c in threads.values()) == [1, 1], f"callers by thread {threads}")
    return f"20 calls from 2 threads, each with inner/outer at lines {line['inner']}/{line['outer']} and its caller"


def case_diopi_demo(env):
    """Each diopi* operator of the demo shows the train.py method that called it."""
    lib = os.path.dirname(env.agent)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    train = os.path.join(root, "tests", "vendorsim", "train.py")
    command = ["/usr/bin/python3", train, "--framework", os.path.join(lib, "libframeworksim.so"), "--steps", "3"]
    out = env.out("stacks_diopi_demo")
    agent, plain = R.both(env, command, {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_WITH_STACK": "1",
                                         "PROFAGENT_WINDOW_WAIT_MS": "0"})
    untimed = [[l for l in run.stdout.splitlines() if " time " not in l] for run in (agent, plain)]
    R.expect(agent.returncode == plain.returncode == 0 and untimed[0] == untimed[1],
             f"the demo's results changed: {agent.returncode}/{plain.returncode} {untimed}")
    document = R.one_valid_trace(out)
    operators = [e for e in R.events(document) if e.get("cat") == "cpu_op" and e["name"].startswith("diopi")]
    R.expect(operators, "no diopi operators")
    methods = {}
    for op in operators:
        R.expect("sf" in op, f"{op['name']} has no stack")
        frames = [f for f in python_frames(frames_of(document, op["sf"])) if "train.py(" in f]
        names = [f.rsplit(": ", 1)[-1] for f in frames]
        R.expect(names and names[-1] == "<module>" and "main" in names, f"{op['name']}: train.py frames {frames}")
        R.expect(names[0] in ("forward", "backward", "optimizer_step"), f"{op['name']}: innermost train.py frame {frames[0]}")
        methods.setdefault(names[0], set()).add(op["name"])
    R.expect(set(methods) == {"forward", "backward", "optimizer_step"}, f"operators by method {methods}")
    # The vendor library's cuLaunchKernel calls are recorded by CUPTI's callback, from inside the
    # driver: their stacks must start at the library's call, not in the driver or CUPTI.
    driver_launches = [e for e in R.events(document) if e.get("name") == "cuLaunchKernel" and "sf" in e]
    R.expect(driver_launches, "no cuLaunchKernel with a stack")
    for call in driver_launches:
        innermost = frames_of(document, call["sf"])[0]
        R.expect("simblas" in innermost, f"cuLaunchKernel's stack starts at {innermost!r}, not in libsimblas")
    return f"{len(operators)} operators, each under its train.py method; {len(driver_launches)} driver " + \
        "launches start at their library's call: " + \
        ", ".join(f"{m}: {len(ops)} kinds" for m, ops in sorted(methods.items()))




MEMORY_SCRIPT = '''
import ctypes


def allocate(n):
    pointer = ctypes.c_void_p()
    rt.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(n))  # MARK alloc
    return pointer


def release(pointer):
    rt.cudaFree(pointer)  # MARK free


kept = allocate(1 << 20)
for _ in range(5):
    release(allocate(4096))
rt.cudaDeviceSynchronize()
print("done")
'''


def case_memory_call_sites(env):
    """With PROFAGENT_PROFILE_MEMORY too, every [memory] event names the Python line that
    allocated or freed, and the live allocation (a leak at exit) says where it was made."""
    out = env.out("stacks_memory")
    text = R.py_runtime(env) + MEMORY_SCRIPT
    script = os.path.join(out, "memory_calls.py")
    with open(script, "w") as f:
        f.write(text)
    line = marks(text)
    extra = {"PROFAGENT_OUTPUT_DIR": out, "PROFAGENT_WITH_STACK": "1", "PROFAGENT_PROFILE_MEMORY": "1"}
    agent, plain = R.both(env, ["/usr/bin/python3", script], extra)
    R.expect_unchanged(agent, plain)
    document = R.one_valid_trace(out)
    memory = trace_reader.events(document, name="[memory]")
    R.expect(len(memory) == 11, f"{len(memory)} [memory] events, expected 6 allocations + 5 frees")
    sites = sorted({e["args"].get("Call site", "").rsplit("/", 1)[-1] for e in memory})
    want = sorted([f"memory_calls.py({line['alloc']}): allocate", f"memory_calls.py({line['free']}): release"])
    R.expect(sites == want, f"[memory] call sites {sites}, expected {want}")
    summary = open(glob.glob(os.path.join(out, "*.summary.ndjson"))[0]).read()
    R.expect(f"memory_calls.py({line['alloc']}): allocate" in summary, "the live allocation's call site is not in the summary")
    return f"11 [memory] events at {want}; the leak's call site in the summary"


CASES = {
    "stacks_python_ctypes": case_python_ctypes,
    "stacks_python_diopi_demo": case_diopi_demo,
    "stacks_python_memory_call_sites": case_memory_call_sites,
}
