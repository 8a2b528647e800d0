"""The discovery block printed before the checks: the first run on a machine is also a survey
of it. GPUs and driver, the OS and its glibc and libstdc++, the toolkit, which CUDA libraries
the agent and PyTorch will load and from where, the versions of torch, Triton, CuPy, numpy.
Every probe has its own time limit and a failed probe is reported, never fatal.
"""
import glob
import json
import os
import platform
import re
import shutil

from harness import Failed, Skipped

PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


def first_lines(context, command, limit=8, timeout=30):
    if shutil.which(command[0]) is None and not os.path.exists(command[0]):
        return f"({command[0]} not installed)"
    try:
        completed = context.run(command, timeout=timeout)
    except Skipped as why:
        return f"(not run: {why})"
    text = (completed.stdout or completed.stderr).strip().splitlines()
    return " | ".join(text[:limit]) if text else f"(no output, exit {completed.returncode})"


def newest_glibcxx():
    """The newest GLIBCXX version the system's libstdc++ offers."""
    for path in glob.glob("/usr/lib/x86_64-linux-gnu/libstdc++.so.6*") + glob.glob("/usr/lib64/libstdc++.so.6*") \
            + glob.glob("/usr/lib/aarch64-linux-gnu/libstdc++.so.6*"):
        try:
            with open(os.path.realpath(path), "rb") as f:
                found = re.findall(rb"GLIBCXX_3\.4\.(\d+)", f.read())
            if found:
                return f"3.4.{max(int(n) for n in found)} ({os.path.realpath(path)})"
        except OSError:
            continue
    return "unknown"


def os_name():
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.platform()


def cupti_candidates(context):
    """The places the agent tries for libcupti.so.13, in its order (collector/cupti_api.cpp),
    and whether each exists here."""
    cuda = context.options.cuda_home
    places = [os.path.join(cuda, "lib64", "libcupti.so.13"), "/usr/local/cuda/lib64/libcupti.so.13",
              "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"]
    return "; ".join(f"{p} {'found' if os.path.exists(p) else 'absent'}" for p in dict.fromkeys(places))


def probe_python(context, with_agent):
    """probe.py under the chosen Python, alone or with the agent preloaded (which CUPTI the
    process then holds, and the agent's line naming it)."""
    env = {"LD_PRELOAD": context.agent, "PROFAGENT_LOG_LEVEL": "info",
           "PROFAGENT_OUTPUT_DIR": os.path.join(context.work, "probe_out")} if with_agent else None
    try:
        completed = context.run([context.options.python, os.path.join(PROGRAMS, "probe.py")], env=env, timeout=120)
        facts = completed.json_line()
    except (Failed, Skipped) as why:
        return {"probe_error": str(why)}
    cupti = [line for line in completed.stderr.splitlines() if "CUPTI" in line and "loaded from" in line]
    facts["agent_cupti_line"] = cupti[0] if cupti else None
    return facts


def discover(context):
    """Returns (lines to print, facts); sets context.facts for the checks."""
    options = context.options
    lines = [
        f"mode: {'devsim (' + options.devsim_dir + ')' if options.devsim else 'real GPU'}; bundle {context.bundle}",
        f"GPUs: {first_lines(context, ['nvidia-smi', '-L'])}",
        "driver: " + first_lines(context, ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap",
                                           "--format=csv,noheader"]),
        f"OS: {os_name()}; kernel {platform.release()}; {platform.machine()}; "
        f"{os.confstr('CS_GNU_LIBC_VERSION') if hasattr(os, 'confstr') else 'glibc ?'}; "
        f"libstdc++ GLIBCXX {newest_glibcxx()}",
        "nvcc: " + next((part for part in first_lines(context, [os.path.join(options.cuda_home, "bin", "nvcc"),
                                                                   "--version"]).split(" | ") if "release" in part),
                        f"none at {options.cuda_home}/bin/nvcc"),
        "loader cache: " + ", ".join(sorted({line.split(" => ")[-1].strip() for line in first_lines(
            context, ["/sbin/ldconfig", "-p"], limit=100000).split(" | ")
            if re.search(r"lib(cuda|cudart|cupti|nccl)\.so", line)})[:12]),
        f"agent's CUPTI search: libcupti.so.13 on the library path, then {cupti_candidates(context)}",
    ]
    alone = probe_python(context, with_agent=False)
    lines.append(f"python {options.python}: " + json.dumps({k: alone.get(k) for k in (
        "python", "torch", "torch_cuda", "cuda_available", "device", "capability", "memory_gib", "cudnn", "nccl",
        "triton", "cupy", "numpy", "pandas", "probe_error", "torch_error") if alone.get(k) is not None}))
    lines.append("libraries torch loads: " + json.dumps(alone.get("libraries", {})))
    if alone.get("cuda_available") and not options.devsim:
        under_agent = probe_python(context, with_agent=True)
        lines.append("libraries under the agent: " + json.dumps(under_agent.get("libraries", {})))
        lines.append(f"agent says: {under_agent.get('agent_cupti_line') or under_agent.get('probe_error')}")
    context.facts["cuda_available"] = bool(alone.get("cuda_available")) and not options.devsim
    context.facts["torch_why"] = ("devsim mode: PyTorch's CUDA build does not run on the simulated device"
                                  if options.devsim else alone.get("torch_error") or alone.get("probe_error")
                                  or ("torch " + str(alone.get("torch")) + " sees no CUDA device"))
    for module in ("triton", "cupy"):
        version = alone.get(module)
        context.facts[module] = bool(version) and not str(version).startswith("import failed")
    return lines, {"lines": lines, "python": alone}
