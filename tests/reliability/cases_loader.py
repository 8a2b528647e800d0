"""Reliability cases of the loader: the agent
interposes dlopen and dlclose and its hooks forward to runtimes that may come and go, yet the
loader must treat the program's calls exactly as without it.

Each case lays the programs of tests/reliability/programs/loader/ out in a directory of its own
(as an application, a wheel or a plugin folder would be), runs the program with and without
the agent and compares stdout, the program's stderr lines and the exit status; then checks that
the run did what the layout is for (so two identical failures cannot pass) and, where the agent
records, the trace.
"""
import os
import shutil
import subprocess

import reliability as R

LOADER = "/lib64/ld-linux-x86-64.so.2"


def fixtures(env):
    return os.path.join(os.path.dirname(env.app), "loader_fixtures")


def program(env, name):
    return os.path.join(os.path.dirname(env.app), name)


def place(source, *target):
    path = os.path.join(*target)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    shutil.copy2(source, path)
    return path


def unchanged(env, command, out, expect_line, library_path=None):
    agent, plain = R.both(env, command, {"PROFAGENT_OUTPUT_DIR": out}, library_path=library_path)
    R.expect_unchanged(agent, plain)
    R.expect(plain.returncode == 0 and expect_line in plain.stdout,
             f"the program itself did not do what the layout is for ({expect_line!r} missing): {plain.stdout!r}")
    return agent


def case_origin(env):
    """dlopen("$ORIGIN/plug/libx.so") from an executable: $ORIGIN is the executable's folder."""
    root = env.out("origin")
    app = place(program(env, "loader_app"), root, "app", "loader_app")
    place(os.path.join(fixtures(env), "plain", "libloader_plugin.so"), root, "app", "plug", "libloader_plugin.so")
    unchanged(env, [app, "origin"], os.path.join(root, "out"), "origin: loaded plugin plain")
    return "$ORIGIN of the calling executable applied"


def hwcaps_supported():
    """Whether this CPU's glibc searches glibc-hwcaps/x86-64-v2 (ld.so --help says so)."""
    listing = subprocess.run([LOADER, "--help"], capture_output=True, text=True).stdout
    return any("x86-64-v2" in line and "supported" in line for line in listing.splitlines())


def case_runpath_hwcaps(env):
    """A library with RUNPATH $ORIGIN/sub loads its plugin by bare name; the plugin exists both
    plain and under sub/glibc-hwcaps/x86-64-v2, and glibc prefers the latter where supported."""
    root = env.out("runpath")
    host = place(os.path.join(fixtures(env), "libloader_host.so"), root, "lib", "libloader_host.so")
    place(os.path.join(fixtures(env), "plain", "libloader_plugin.so"), root, "lib", "sub", "libloader_plugin.so")
    place(os.path.join(fixtures(env), "x86-64-v2", "libloader_plugin.so"),
          root, "lib", "sub", "glibc-hwcaps", "x86-64-v2", "libloader_plugin.so")
    variant = "x86-64-v2" if hwcaps_supported() else "plain"
    unchanged(env, [program(env, "loader_app"), "runpath", host], os.path.join(root, "out"),
              f"runpath: host loaded plugin {variant}")
    return f"RUNPATH of the calling library applied, hwcaps variant {variant} chosen as without the agent"


def case_cudnn_wheel(env):
    """NVIDIA's cuDNN 9 from the toolkit laid out as in a pip wheel (its RUNPATH is $ORIGIN;
    symlinks keep $ORIGIN the wheel's folder), the program run with `ld.so --inhibit-cache` so
    that no other installation can stand in: cudnnCreate loads its sub-libraries by bare name
    from the wheel. With a dlopen that loses its caller this aborted ("Invalid handle. Cannot
    load symbol ...")."""
    toolkit = os.path.join(os.path.dirname(env.cudart.rstrip("/")), "lib64") if not os.path.exists(
        os.path.join(env.cudart, "libcudnn.so.9")) else env.cudart
    source = os.path.join(toolkit, "libcudnn.so.9")
    if not os.path.exists(source):
        return "SKIP: the toolkit has no libcudnn.so.9"
    wheel = os.path.join(env.out("cudnn"), "site-packages", "nvidia", "cudnn", "lib")
    os.makedirs(wheel)
    for name in os.listdir(toolkit):
        if name.startswith("libcudnn") and name.endswith(".so.9"):
            os.symlink(os.path.join(toolkit, name), os.path.join(wheel, name))
    agent = unchanged(env, [LOADER, "--inhibit-cache", program(env, "loader_app"), "cudnn", wheel],
                      os.path.join(env.work, "cudnn", "out"), "loaded libcudnn_graph.so.9 from the wheel")
    R.expect("ELSEWHERE" not in agent.stdout, f"a cuDNN library came from elsewhere: {agent.stdout!r}")
    return "cuDNN's sub-libraries found in the wheel through its RUNPATH, as without the agent"


def unload_case(mode):
    """A plugin linking libcudart is loaded, used, unloaded (the runtime with it: the program
    itself does not link it), other libraries take the freed address range, and the plugin is
    loaded and used again. `pin`: the program also takes cudaGetDeviceCount with
    dlsym(RTLD_DEFAULT), which pins the runtime to the program — the agent must not change
    that either (its hooks are hidden symbol versions an unversioned dlsym never finds)."""
    def case(env):
        out = env.out(f"unload_{mode}")
        plugin = os.path.join(fixtures(env), "libloader_cuda_plugin.so")
        agent = unchanged(env, [program(env, "loader_app"), mode, plugin], out, "second: plugin work returned 0")
        still_loaded = "yes" if mode == "pin" else "no"
        R.expect(f"first: runtime still loaded after unload: {still_loaded}" in agent.stdout,
                 f"runtime unload behaviour: {agent.stdout!r}")
        R.one_valid_trace(out, {"cudaMalloc": 2, "cudaMemset": 2, "cudaDeviceSynchronize": 2, "cudaFree": 2})
        return f"runtime {'pinned' if mode == 'pin' else 'unloaded'} as without the agent; both rounds recorded"
    return case


def case_cancel_in_hook(env):
    """pthread_cancel of a thread blocked in cudaStreamSynchronize: the forced unwind passes
    through the hook (no std::terminate), the thread's cleanup handler runs."""
    out = env.out("cancel")
    agent, plain = R.both(env, [program(env, "loader_cancel")],
                          {"PROFAGENT_OUTPUT_DIR": out, "DEVSIM_KERNEL_NS": "endless_kernel=60000000000"})
    R.expect_unchanged(agent, plain)
    R.expect("cancel: thread ended cancelled" in plain.stdout and "cleanup handler ran" in plain.stdout,
             f"the program itself did not cancel its thread: {plain.stdout!r}")
    document = R.one_valid_trace(out, {"cudaLaunchKernel": 1})
    R.expect(not R.events(document, "cudaStreamSynchronize"), "the cancelled call was recorded as if it returned")
    return "cancelled inside a hooked call: cleanup ran, process unchanged, trace written"


def case_plain_dlopen_said_once(env):
    """dlopen from a library linked without crti (no _init/_fini: nothing to return through):
    the call is made plainly — same result for a path without $ORIGIN — and the agent says so in
    exactly one line, however many such calls follow, and counts them in the trace."""
    out = env.out("nocrt")
    library = os.path.join(fixtures(env), "libloader_nocrt.so")
    plugin = os.path.join(fixtures(env), "libloader_cuda_plugin.so")
    agent = unchanged(env, [program(env, "loader_app"), "nocrt", library, plugin], out,
                      "nocrt: plugin work returned 0")
    said = [line for line in agent.agent_lines() if "dlopen called from" in line]
    R.expect(len(said) == 1 and "libloader_nocrt.so" in said[0], f"agent lines: {agent.agent_lines()}")
    counted = R.one_valid_trace(out)["profagent_drops"]["plain_dlopen_calls"]
    R.expect(counted == 2, f"plain dlopen calls counted in the trace: {counted}, the library made 2")
    return "a caller without crti: plain dlopen, said once"


def case_unload_queued_kernels(env):
    """A plugin with kernels of its own queues 20 kernels of 20 ms and is unloaded while they
    are still queued (its kernel names unmapped with it; another library may take the range);
    the program then waits for the device. With CUPTI on, each kernel's record is made when it
    ends, after the unload: its name must still be readable (a driver keeps its own copy), and
    the trace has all 20 kernels under the plugin's kernel name."""
    out = env.out("unload_queued")
    plugin = os.path.join(fixtures(env), "libloader_kernel_plugin.so")
    command = [program(env, "loader_unload_queued"), plugin, "20"]
    extra = {"PROFAGENT_OUTPUT_DIR": out, "DEVSIM_KERNEL_NS": "plugin_queued_kernel=20000000"}
    agent, plain = R.both(env, command, extra)
    R.expect_unchanged(agent, plain)
    R.expect(plain.returncode == 0 and "plugin still mapped after dlclose: no" in plain.stdout,
             f"the plugin was not unloaded, the case proves nothing: {plain.stdout!r}")
    document = R.one_valid_trace(out, R.expected(agent.stdout))
    kernels = [e for e in R.events(document) if e.get("cat") == "kernel"]
    names = {e["name"] for e in kernels}
    R.expect(len(kernels) == 20 and names == {"plugin_queued_kernel(int*)"},
             f"{len(kernels)} kernel records named {sorted(names)[:3]}, expected 20 of plugin_queued_kernel(int*)")
    return "20 kernels of an unloaded plugin recorded under their names, output unchanged"


CASES = {
    "loader_origin": case_origin,
    "loader_runpath_hwcaps": case_runpath_hwcaps,
    "loader_cudnn_wheel": case_cudnn_wheel,
    "loader_unload_reload": unload_case("unload"),
    "loader_unload_pinned": unload_case("pin"),
    "loader_cancel_in_hook": case_cancel_in_hook,
    "loader_plain_dlopen_said_once": case_plain_dlopen_said_once,
    "loader_unload_queued_kernels": case_unload_queued_kernels,
}
