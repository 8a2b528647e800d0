#!/usr/bin/python3
"""A stand-in for a GPU machine's Python and for the bundle's launcher, so that the GPU
acceptance script's PyTorch checks (torch_checks.py) run end to end without a GPU
(test_checks_offline.py). It does what the real programs and `profagent run` are expected to
do on a GPU, in the shapes the real files have:

    fake_gpu_world.py python PROGRAM.py ARGS...       as the Python with torch: prints the
                                                      program's result line; train_loop.py
                                                      with --torch-profiler writes a Kineto
                                                      trace, under LD_PRELOAD a profagent one
    fake_gpu_world.py launcher run --output-dir DIR [OPTIONS] -- PYTHON PROGRAM.py ARGS...

Traces come from test_trace_compare.TraceBuilder. FAKE_GPU_BREAK=<program> makes that
program's profagent trace lose one kernel, so a test can see the check fail.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_trace_compare import TraceBuilder, training  # noqa: E402

RESULTS = {
    "probe.py": {"python": "3.12.3", "torch": "2.11.0+cu130", "torch_cuda": "13.0", "cuda_available": True,
                 "device": "NVIDIA H100 80GB HBM3", "capability": "9.0", "triton": "3.6.0", "cupy": "14.2.0",
                 "numpy": "2.5.2", "libraries": {"libcudart.so.13": "/site/nvidia/cu13/lib/libcudart.so.13"}},
    "triton_add.py": {"kernel": "gpu_check_add_kernel", "launches": 20, "correct": True},
    "cupy_kernels.py": {"kernels": {"gpu_check_elementwise": 10, "gpu_check_raw_scale": 10}, "correct": True},
    "cuda_graphs.py": {"replays": 10, "correct": True},
    "nvtx_ranges.py": {"ranges": {"gpu_check_nvtx_outer": 5, "gpu_check_nvtx_inner": 5},
                       "marks": {"gpu_check_nvtx_mark": 1}},
    "nccl_allreduce.py": {"all_reduces": 10, "correct": True, "nccl_version": "2.27.7"},
    "nccl_ranks.py": {"ranks": 1, "all_reduces": 4, "all_gathers": 4, "correct": True},
    "memory_reserved.py": {"reserved": 260 << 20, "allocated": 180 << 20, "live_tensors": 54},
    "python_frames.py": {"python": "3.12.3", "file": "python_frames.py", "line": 14, "function": "known_call",
                         "correct": True},
}


def whole_run_trace(program, shape="profagent"):
    """The trace `profagent run` writes for PROGRAM (one window, the whole run), or with
    shape "torch" the one torch.profiler exports of it."""
    builder = TraceBuilder(shape)
    if program == "triton_add.py":
        for i in range(20):
            builder.launch(100 + 10 * i, "gpu_check_add_kernel", "cuLaunchKernelEx", 4.0)
    elif program == "cupy_kernels.py":
        for i in range(10):
            builder.launch(100 + 10 * i, "gpu_check_elementwise", "cuLaunchKernel", 3.0)
            builder.launch(400 + 10 * i, "gpu_check_raw_scale", "cuLaunchKernel", 3.0)
    elif program == "cuda_graphs.py":
        for replay in range(10):
            builder.correlation += 1
            correlation = builder.correlation
            builder.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 1,
                                   "ts": 1000.0 + 100 * replay, "dur": 5.0, "args": {"correlation": correlation}})
            for k in range(3):
                builder.events.append({"ph": "X", "cat": "kernel", "name": f"graph_kernel_{k}", "pid": 0, "tid": 7,
                                       "ts": 1010.0 + 100 * replay + 10 * k, "dur": 5.0,
                                       "args": {"correlation": correlation, "device": 0, "stream": 7}})
            builder.launch(1050 + 100 * replay, "eager_check_kernel")  # the eager model(...) check
    elif program == "nccl_allreduce.py":
        for i in range(10):
            builder.launch(100 + 50 * i, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                           "cuLaunchKernelEx", 8.0)
    elif program == "nccl_ranks.py":
        return nccl_rank_trace(builder)
    elif program == "nvtx_ranges.py" and shape == "profagent":  # torch.cuda.nvtx through NVTX's injection
        for i in range(5):
            outer, inner = 9000 + 2 * i, 9001 + 2 * i
            builder.events.append({"ph": "X", "cat": "user_annotation", "name": "gpu_check_nvtx_outer", "pid": 1,
                                   "tid": 1, "ts": 100.0 + 100 * i, "dur": 80.0, "args": {"External id": outer}})
            builder.events.append({"ph": "X", "cat": "user_annotation", "name": "gpu_check_nvtx_inner", "pid": 1,
                                   "tid": 1, "ts": 110.0 + 100 * i, "dur": 60.0, "args": {"External id": inner}})
            builder.launch(120 + 100 * i, "gemm_kernel", external_id=inner)
        builder.events.append({"ph": "i", "s": "t", "cat": "user_annotation", "name": "gpu_check_nvtx_mark",
                               "pid": 1, "tid": 1, "ts": 700.0})
    elif program == "memory_reserved.py":
        for ts, reserved in ((10.0, 0), (500.0, 150 << 20), (900.0, RESULTS[program]["reserved"])):
            builder.events.append({"ph": "C", "cat": "cpu_instant_event", "name": "Memory (GPU 0)", "pid": 1,
                                   "tid": 1, "ts": ts, "args": {"Allocated": reserved // 2, "Reserved": reserved}})
    else:
        builder.launch(100, "some_kernel")
    document = builder.document()
    if program == "python_frames.py" and shape == "profagent":  # the stack of known_call()'s call
        document["stackFrames"] = {"1": {"name": "/site/tests/gpu/programs/python_frames.py(22): main"},
                                   "2": {"name": "/site/tests/gpu/programs/python_frames.py(14): known_call",
                                         "parent": 1}}
    return document


def nccl_rank_trace(builder):
    """Rank 0 of 1: each collective an NCCL operator with Kineto's args, its kernel linked to it."""
    for i in range(8):
        name, collective = ("ncclAllReduce", "allreduce") if i % 2 == 0 else ("ncclAllGather", "allgather")
        args = {"Collective name": collective, "In msg nelems": 1 << 20, "Out msg nelems": 1 << 20, "Group size": 1,
                "dtype": "Float", "Seq": i, "Comm hash": 42, "External id": 5000 + i}
        builder.events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": 95.0 + 50 * i,
                               "dur": 30.0, "args": args})
        builder.launch(100 + 50 * i, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                       "cuLaunchKernelEx", 8.0, external_id=5000 + i)
        builder.events[-1]["args"].update(args)
    document = builder.document()
    document["distributedInfo"] = {"backend": "nccl", "rank": 0, "local_rank": 0, "world_size": 1}
    return document


def broken(document, program):
    if os.environ.get("FAKE_GPU_BREAK") == program:
        kernels = [e for e in document["traceEvents"] if e.get("cat") == "kernel"]
        document["traceEvents"].remove(kernels[len(kernels) // 2])
    return document


def write(path, document):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(document, f)


def option(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def python(args):
    program, rest = os.path.basename(args[0]), args[1:]
    if program != "train_loop.py":
        if option(rest, "--torch-profiler"):
            write(os.path.join(option(rest, "--torch-profiler"), "torch_profiler.trace.json"),
                  whole_run_trace(program, "torch"))
        elif program in RESULTS and os.environ.get("LD_PRELOAD") and program != "probe.py":
            out = os.environ["PROFAGENT_OUTPUT_DIR"]
            write(os.path.join(out, "host.1.w1.trace.json"), broken(whole_run_trace(program), program))
        print(json.dumps(RESULTS[program]))
        return 0
    if option(rest, "--times"):
        with open(option(rest, "--times"), "w") as f:
            slower = 1.05 if os.environ.get("LD_PRELOAD") and "PROFAGENT_SKIP_FIRST" not in os.environ else 1.0
            json.dump({"step_seconds": [0.004 * slower] * int(option(rest, "--steps", "30"))}, f)
    if option(rest, "--torch-profiler"):
        write(os.path.join(option(rest, "--torch-profiler"), "torch_profiler.trace.json"), training("torch"))
    elif os.environ.get("LD_PRELOAD") and "PROFAGENT_SKIP_FIRST" not in os.environ:
        write(os.path.join(os.environ["PROFAGENT_OUTPUT_DIR"], "host.1.w1.steps12-14.trace.json"),
              broken(training("profagent", scale=1.02, operators=True), program))
    print(f"train_loop: {option(rest, '--steps', '30')} steps, last loss 2.3026, median step 4.000 ms")
    return 0


def launcher(args):
    """`profagent run`: its options become the agent's variables, as the real launcher's do."""
    separator = args.index("--")
    options, command = args[:separator], args[separator + 1:]
    env = dict(os.environ, LD_PRELOAD="libprofagent.so", PROFAGENT_OUTPUT_DIR=option(options, "--output-dir"))
    if option(options, "--skip-first") == "1000000000":
        env["PROFAGENT_SKIP_FIRST"] = "1000000000"
    os.environ.clear()
    os.environ.update(env)
    return python(command[1:])


if __name__ == "__main__":
    role, rest = sys.argv[1], sys.argv[2:]
    sys.exit(python(rest) if role == "python" else launcher(rest[1:]))
