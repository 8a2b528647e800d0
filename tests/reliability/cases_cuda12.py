"""CUDA 12 and CUDA 13 runtimes, alone and in one process (a cu12 framework beside a cu13 extension).

Programs (tests/reliability/programs/cuda12.cmake, built next to reliability_app):
  cuda12_app [N [PLUGIN]]  linked to devsim's libcudart.so.12 only (references @libcudart.so.12);
                           with PLUGIN it then dlopens libcuda13_plugin.so (libcudart.so.13)
  cuda_mixed PLUGIN        linked to libcudart.so.13; dlopens libcuda12_plugin.so (libcudart.so.12)
Each side prints what its own runtime reports ("[cuda12] key=value ...") and an "expect" line
with the hooked calls made on both sides. With and without the agent, stdout, the program's
stderr and the exit status must be identical: a call forwarded to the other major's runtime
shows, e.g. that runtime's last error is not the one the program reads. The trace must hold
every call of both runtimes and the devices as the runtime describes them.
"""
import os
import re

import reliability as R

SMS = 108  # not devsim's default (80), so a right value cannot be a coincidence
DEVICES = 2
DEVICE_ENV = {"DEVSIM_SM_COUNT": str(SMS), "DEVSIM_DEVICE_COUNT": str(DEVICES)}

# deviceProperties key in the trace -> the program's name for the same fact (CUDA's field names).
TRACE_FIELDS = {
    "name": "name", "totalGlobalMem": "totalGlobalMem", "computeMajor": "major", "computeMinor": "minor",
    "maxThreadsPerBlock": "maxThreadsPerBlock", "maxThreadsPerMultiprocessor": "maxThreadsPerMultiProcessor",
    "regsPerBlock": "regsPerBlock", "regsPerMultiprocessor": "regsPerMultiprocessor", "warpSize": "warpSize",
    "sharedMemPerBlock": "sharedMemPerBlock", "sharedMemPerMultiprocessor": "sharedMemPerMultiprocessor",
    "sharedMemPerBlockOptin": "sharedMemPerBlockOptin", "numSms": "multiProcessorCount",
}


def program(env, name):
    return os.path.join(os.path.dirname(env.app), name)


def mixed_command(env, main_major, scope):
    """The program of one major that loads the other major's plugin with dlopen(scope)."""
    if main_major == 13:
        return [program(env, "cuda_mixed"), program(env, "libcuda12_plugin.so"), scope]
    return [program(env, "cuda12_app"), "3", program(env, "libcuda13_plugin.so"), scope]


def side_lines(stdout, side):
    """The program's "[cuda12] a=1 b="x y"" lines of one side, as dicts."""
    found = []
    for line in stdout.splitlines():
        if line.startswith(f"[{side}] "):
            pairs = re.findall(r'(\w+)=("[^"]*"|\S+)', line)
            found.append({key: value.strip('"') for key, value in pairs})
    return found


def side_value(stdout, side, key):
    values = [line[key] for line in side_lines(stdout, side) if key in line]
    R.expect(values, f"[{side}] printed no {key}: {stdout[-400:]!r}")
    return values[0]


def expect_side_sane(stdout, side, runtime):
    """The program itself worked on its own runtime (so the comparison means something)."""
    R.expect(side_value(stdout, side, "runtime") == str(runtime), f"[{side}] runtime is not {runtime}: {stdout!r}")
    R.expect(side_value(stdout, side, "multiProcessorCount") == str(SMS),
             f"[{side}] read multiProcessorCount {side_value(stdout, side, 'multiProcessorCount')}, devsim has {SMS}")
    R.expect(side_value(stdout, side, "bytes_back") == "equal", f"[{side}] copies lost bytes")
    R.expect(side_value(stdout, side, "last_error") == "cudaErrorMemoryAllocation",
             f"[{side}] its runtime did not keep its own last error")


def expect_same_lines(agent, plain):
    """Names the first stdout line that differs (expect_unchanged shows only the tails)."""
    for with_agent, without in zip(agent.stdout.splitlines(), plain.stdout.splitlines()):
        R.expect(with_agent == without, f"stdout differs first at:\n  with the agent: {with_agent}\n  without:        {without}")
    R.expect_unchanged(agent, plain)


def expect_devices(document, stdout, side):
    """Every device of the trace as the program's runtime `side` describes device 0."""
    described = [line for line in side_lines(stdout, side) if line.get("device") == "0"]
    R.expect(described, f"[{side}] printed no device line")
    devices = document.get("deviceProperties", [])
    R.expect(len(devices) == DEVICES, f"{len(devices)} devices in the trace, devsim has {DEVICES}")
    for device in devices:
        wrong = {key: (device.get(key), described[0][field]) for key, field in TRACE_FIELDS.items()
                 if str(device.get(key)) != described[0][field]}
        R.expect(not wrong, f"device {device.get('id')}: trace vs program {wrong}")
    return devices[0]["numSms"]


def case_cuda12_only(env):
    """A CUDA 12 program alone: unchanged, and every call it made recorded."""
    out = env.out("cuda12_only")
    agent, plain = R.both(env, [program(env, "cuda12_app")], dict(DEVICE_ENV, PROFAGENT_OUTPUT_DIR=out))
    expect_same_lines(agent, plain)
    expect_side_sane(plain.stdout, "cuda12", 12080)
    wanted = R.expected(agent.stdout)
    R.one_valid_trace(out, wanted)
    return f"output unchanged, {sum(wanted.values())} calls and kernels recorded as made"


def case_cuda12_device_properties(env):
    """Device metadata under a CUDA 12 runtime: the SM count and per-SM figures as the runtime
    says (with CUDA 13's struct over CUDA 12's layout the agent wrote numSms 1)."""
    out = env.out("cuda12_device_properties")
    agent = R.run([program(env, "cuda12_app"), "1"], dict(DEVICE_ENV, PROFAGENT_OUTPUT_DIR=out),
                  env.agent, env.devsim)
    R.expect(agent.returncode == 0, f"status {agent.returncode}: {agent.stderr[-400:]!r}")
    sms = expect_devices(R.one_valid_trace(out), agent.stdout, "cuda12")
    return f"{DEVICES} devices with numSms {sms} and the runtime's per-SM figures"


def mixed_case(main_major, scope):
    """A program of one major loading the other major's plugin RTLD_LOCAL (as Python loads
    extensions) or RTLD_GLOBAL: each side reaches its own runtime, both sides' calls are
    recorded, and the devices are those the program's runtime describes."""
    def case(env):
        out = env.out(f"cuda12_mixed_{main_major}_{scope}")
        agent, plain = R.both(env, mixed_command(env, main_major, scope), dict(DEVICE_ENV, PROFAGENT_OUTPUT_DIR=out))
        expect_side_sane(plain.stdout, "cuda12", 12080)
        expect_side_sane(plain.stdout, "cuda13", 13000)
        expect_same_lines(agent, plain)
        wanted = R.expected(agent.stdout)
        document = R.one_valid_trace(out, wanted)
        expect_devices(document, agent.stdout, f"cuda{main_major}")
        return (f"both runtimes answered as without the agent; {wanted['cudaLaunchKernel']} launches "
                f"({wanted['cuda12_kernel']} via CUDA 12) and their kernels recorded")
    return case


CASES = {
    "cuda12_only": case_cuda12_only,
    "cuda12_device_properties": case_cuda12_device_properties,
    "cuda12_mixed_cuda13_main_local": mixed_case(13, "local"),
    "cuda12_mixed_cuda13_main_global": mixed_case(13, "global"),
    "cuda12_mixed_cuda12_main_local": mixed_case(12, "local"),  # torch cu12 + a cu13 extension
}
