"""What CUPTI reports around a runtime launch, checked on the device at hand: NVIDIA's CUPTI on
a GPU, the simulated one (tests/devsim) in CI. The agent relies on each rule below; the
simulated device must answer as the real one does, or CI would pass on what a GPU breaks.

Rules, as measured with CUPTI 13.0 on an H100 (driver 580):
- an external correlation id pushed around a call is tied to it (EXTERNAL_CORRELATION record)
  only when CUPTI writes that call's API record: RUNTIME enabled for runtime calls. With no API
  kind, or DRIVER only, no record ties the id to the kernel's correlation id;
- `<<<>>>` (nvcc 13's __cudaLaunchKernel) reaches the runtime API callback as cudaLaunchKernel,
  callback id 211, with the kernel's correlation id;
- nvcc's launch plumbing (__cudaPushCallConfiguration, __cudaPopCallConfiguration,
  __cudaGetKernel) gives no callback.

programs/cupti_semantics.cu is the probe: one launch and one memset under a pushed id, one JSON
line per record and per runtime callback. Standard library only.
"""
import json

from harness import Skipped, expect, passed

MODES = ("none", "driver", "runtime", "both")
LAUNCH_CBID = 211  # CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
PLUMBING = ("__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaGetKernel")


def parse(stdout):
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    errors = [line["error"] for line in lines if "error" in line]
    expect(not errors, f"the probe's CUPTI calls failed: {errors}")
    expect(any("done" in line for line in lines), "the probe did not finish")
    return lines


def problems(mode, lines):
    """What in one mode's output breaks the rules (empty: none)."""
    found = []
    kernels = [line for line in lines if line.get("record") == "kernel"]
    if len(kernels) != 1:
        return [f"{mode}: {len(kernels)} kernel records, 1 launched"]
    kernel = kernels[0]["correlation"]
    linked = {line["correlation"] for line in lines
              if line.get("record") == "external" and line.get("external_id") == 4242}
    tied = kernel in linked
    if tied != (mode in ("runtime", "both")):
        found.append(f"{mode}: the pushed id is {'' if tied else 'not '}tied to the kernel's correlation {kernel}")
    launches = [line for line in lines if line.get("callback") == "runtime" and line["cbid"] == LAUNCH_CBID]
    if [line["function"] for line in launches] != ["cudaLaunchKernel"]:
        found.append(f"{mode}: <<<>>> reached the callback as {[line['function'] for line in launches]}, "
                     f"not once as cudaLaunchKernel (callback id {LAUNCH_CBID})")
    elif launches[0]["correlation"] != kernel:
        found.append(f"{mode}: the launch callback has correlation {launches[0]['correlation']}, the kernel {kernel}")
    plumbing = sorted({line["function"] for line in lines if line.get("function") in PLUMBING})
    if plumbing:
        found.append(f"{mode}: callbacks for nvcc's launch plumbing {plumbing}")
    return found


def check(context, program, environment):
    """Runs the probe in every mode with runtime callbacks; returns the gpu_check verdict."""
    if program is None:
        raise Skipped("cupti_semantics was not built (see workloads.build)")
    found, externals = [], {}
    for mode in MODES:
        completed = context.run([program, mode, "callbacks"], env=environment, timeout=60)
        expect(completed.returncode == 0, f"cupti_semantics {mode} exited {completed.returncode}: {completed.tail()}")
        lines = parse(completed.stdout)
        externals[mode] = sum(1 for line in lines if line.get("record") == "external")
        found += problems(mode, lines)
    expect(not found, "; ".join(found))
    return passed("external ids tied to the kernel only with RUNTIME records; <<<>>> is cudaLaunchKernel (211); "
                  f"no plumbing callbacks; external records per mode {externals}")
