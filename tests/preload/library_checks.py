"""The check of the second library descriptor (library_tests.cmake): a fake NCCL-shaped
library hooked by a descriptor and one-line hooks (programs/fake_library)."""
import glob
import os
import re

from checkers import Trace, expect, other_lines, profagent_lines


def check_second_library_descriptor(context):
    run, baseline = context.run, context.run_without_agent()
    expect(run.returncode == 0 and baseline.returncode == 0,
           f"exit codes {run.returncode} (agent) / {baseline.returncode} (without)")
    # Every call the library defines returns what it returns without the agent.
    with_agent = [line for line in run.stdout.splitlines() if not line.startswith("fakecommMissing")]
    without = [line for line in baseline.stdout.splitlines() if not line.startswith("fakecommMissing")]
    expect(with_agent == without, f"the program's output changed: {with_agent} / {without}")
    expect(with_agent == ["fakecommGetVersion: 0 version 10203", "fakecommGetVersion(NULL): 4",
                          "fakecommAllReduce: 0 out 3 6 9 12"], f"the library's results did not arrive: {with_agent}")
    expect(other_lines(run.stderr) == other_lines(baseline.stderr), "the program's stderr changed")
    # A function no loaded object defines: without the agent the weak reference is null; the
    # agent's hook returns the descriptor's failure value (fakecommSystemError = 2) and says so once.
    missing = [line for line in run.stdout.splitlines() if line.startswith("fakecommMissing")]
    expect(missing == ["fakecommMissing: 2"] * 2, f"the unresolved hook returned {missing}")
    expect("fakecommMissing: not defined" in baseline.stdout, "without the agent fakecommMissing was defined")
    said = [line for line in profagent_lines(run.stderr) if "fakecommMissing" in line]
    expect(len(said) == 1 and "libprofagent_test_fakecomm.so.1" in said[0] and "fakecommSystemError" in said[0],
           f"the unresolved symbol should be reported once with its library and result, got {said}")
    traces = glob.glob(os.path.join(context.out_dir, "**", "*.trace.json"), recursive=True)
    expect(len(traces) == 1, f"expected one trace, found {traces}")
    trace = Trace(traces[0])
    # The program never uses CUDA itself: the device backend runs because the descriptor says
    # the library drives CUDA (DeviceApi::Cuda), so its first call is the first CUDA use.
    backend = trace.document.get("device_backend")
    expect(backend == "cupti", f"the first fakecomm call did not start the device backend: {backend!r}")
    calls = [e for e in trace.complete if e["name"].startswith("fakecomm")]
    names = sorted(e["name"] for e in calls)
    expect(names == ["fakecommAllReduce", "fakecommGetVersion", "fakecommGetVersion"],
           f"recorded calls {names}")
    errors = sorted(e.get("args", {}).get("cuda_error", 0) for e in calls)
    expect(errors == [0, 0, 4], f"the failed call's result (fakecommInvalidArgument = 4) not kept: {errors}")
    table = glob.glob(os.path.join(context.out_dir, "**", "*.table.txt"), recursive=True)
    expect(len(table) == 1, f"expected one table, found {table}")
    with open(table[0], encoding="utf-8") as f:
        rows = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(fakecomm\w+)\s.*\s(\d+)\s*$", f.read(), re.M)}
    expect(rows == {"fakecommGetVersion": 2, "fakecommAllReduce": 1}, f"table rows {rows}")
    context.summary = f"{len(calls)} calls recorded, 1 unresolved symbol reported once, output unchanged"
