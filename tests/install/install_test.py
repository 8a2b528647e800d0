"""The three ways profagent is installed, each tested as a user gets it:

    install_test.py bundle TARBALL --build BUILD --work DIR   the relocatable bundle (scripts/package.sh)
    install_test.py deb --build BUILD --work DIR              `cpack -G DEB`, unpacked with dpkg-deb -x
    install_test.py prefix --build BUILD --work DIR           `cmake --install --prefix`, then a consumer
                                                              project using find_package(profagent)
                                                              and one using pkg-config

Each unpacks or installs into a fresh folder, audits every ELF file in it (elf_audit.py), and
profiles a program on the simulated device from there, through the launcher and through plain
LD_PRELOAD, with nothing of the build tree in the environment but the device itself
(LD_LIBRARY_PATH=<build>/devsim) and the program. The launcher run uses every helper library
(a kernel: step marker loads RE2, call stacks load libunwind and libdw, `profagent report`
reads the trace with simdjson and zlib), and the loader's own log (LD_DEBUG) shows each
carried library coming from the tree. Standard library only.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "preload"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import checkers  # noqa: E402
import elf_audit  # noqa: E402
from trace_reader import load_trace  # noqa: E402

# Files every layout has, relative to its prefix.
LAYOUT = ["bin/profagent", "lib/libprofagent.so", "lib/libprofagent_re2.so", "lib/libprofagent_dwarf.so",
          "lib/libprofagent_unwind.so", "lib/profagent_python/sitecustomize.py", "include/profagent/profagent.h",
          "lib/cmake/profagent/profagentConfig.cmake", "lib/cmake/profagent/profagentTargets.cmake",
          "lib/pkgconfig/profagent.pc", "share/doc/profagent/README.md", "share/doc/profagent/LICENSE"]
# The Debian package names of what is left to the system.
ALLOWED_DEPENDS = {"libc6", "libgcc-s1", "libstdc++6"}
BUNDLE_LIMIT = 32 << 20  # "well under 64 MiB"
# The GCC release whose libstdc++ first defines each GLIBCXX symbol version (libstdc++ manual,
# "ABI Policy and Guidelines"): the Debian version floor of libstdc++6.
GCC_OF_GLIBCXX = {"3.4.28": "10", "3.4.29": "11", "3.4.30": "12", "3.4.31": "13", "3.4.32": "13", "3.4.33": "14"}


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def run(command, env=None, cwd=None, timeout=240):
    completed = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if completed.returncode != 0:
        fail(f"{' '.join(command)} exited {completed.returncode}:\n{completed.stdout[-2000:]}\n{completed.stderr[-3000:]}")
    return completed


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def audit(prefix, build):
    for name in LAYOUT:
        expect(os.path.exists(os.path.join(prefix, name)), f"{name} is missing from {prefix}")
    result = elf_audit.Audit(prefix, build).run()
    expect(not result.problems, "; ".join(result.problems))
    print(f"audit: {len(result.files)} ELF files; carried: {' '.join(sorted(result.carried))}; "
          f"needs {result.minimums()}")
    return result


def clean_environment(build, work, **extra):
    """Only what any shell has, the simulated device, and `extra`."""
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "LANG": "C.UTF-8",
           "LD_LIBRARY_PATH": os.path.join(build, "devsim")}
    env.update(extra)
    return env


def libraries_loaded(ld_debug_prefix):
    """Paths of every object the loader initialised (LD_DEBUG=libs, one file per process)."""
    loaded = set()
    for path in glob.glob(ld_debug_prefix + ".*"):
        with open(path, errors="replace") as f:
            loaded.update(re.findall(r"calling init: (\S+)", f.read()))
    return loaded


def profile_with_launcher(prefix, build, work, carried):
    """demo_train on devsim under <prefix>/bin/profagent run, with a kernel: step marker (RE2
    compiles it and searches every kernel name; it matches none, so the steps stay those
    demo_train marks itself with profagent_step), call stacks (libunwind, libdw) and
    `profagent report` of its trace (simdjson, zlib)."""
    out = fresh(os.path.join(work, "launcher_out"))
    ld_debug = os.path.join(work, "ld_debug")
    for old in glob.glob(ld_debug + ".*"):
        os.remove(old)
    env = clean_environment(build, work, PROFAGENT_WITH_STACK="1", LD_DEBUG="libs", LD_DEBUG_OUTPUT=ld_debug)
    program = os.path.join(build, "bin", "demo_train")
    completed = run([os.path.join(prefix, "bin", "profagent"), "run", "--output-dir", out, "--step-on",
                     "kernel:^profagent_no_such_kernel$", "--skip-first", "1", "--active", "2", "--repeat", "1", "--",
                     program, "5"], env=env)
    traces = glob.glob(os.path.join(out, "*.steps1-2.trace.json"))
    expect(len(traces) == 1, f"expected the window of steps 1-2, found {os.listdir(out)}; stderr:\n{completed.stderr[-2000:]}")
    document = load_trace(traces[0])
    steps = sorted(e["name"] for e in document["traceEvents"] if str(e.get("name", "")).startswith("ProfilerStep#"))
    expect(steps == ["ProfilerStep#1", "ProfilerStep#2"], f"steps in the window: {steps}")
    frames = json.dumps(document.get("stackFrames", {}))
    expect("demo_train.cu(" in frames, "no call-stack frame with a source line (libunwind and libdw from the tree)")
    report = run([os.path.join(prefix, "bin", "profagent"), "report", "--summary", "step_trace", traces[0]],
                 env=dict(env, LD_DEBUG_OUTPUT=ld_debug + "_report"))
    expect("Step" in report.stdout, f"profagent report printed no step trace:\n{report.stdout[-1000:]}")
    loaded = libraries_loaded(ld_debug) | libraries_loaded(ld_debug + "_report")
    real_prefix = os.path.realpath(prefix)
    from_tree = sorted(os.path.basename(p) for p in loaded if os.path.realpath(p).startswith(real_prefix + os.sep))
    outside = sorted(p for p in loaded if os.path.basename(p) in carried
                     and not os.path.realpath(p).startswith(real_prefix + os.sep))
    expect(not outside, f"carried libraries loaded from outside the tree: {outside}")
    for wanted in ("libprofagent_re2.so", "libprofagent_unwind.so", "libprofagent_dwarf.so"):
        expect(wanted in from_tree, f"{wanted} was not loaded from the tree (loaded from it: {from_tree})")
    print(f"launcher: window steps 1-2 written with source-line stacks, report read it; "
          f"loaded from the tree: {' '.join(from_tree)}")


def profile_with_preload(prefix, build, work):
    out = fresh(os.path.join(work, "preload_out"))
    env = clean_environment(build, work, LD_PRELOAD=os.path.join(prefix, "lib", "libprofagent.so"),
                            PROFAGENT_OUTPUT_DIR=out)
    program = os.path.join(build, "bin", "demo_train")
    run_view = run([program, "3"], env=env)
    context = checkers.Context(out, run_view, None)
    try:
        checkers.check_consistent_trace(context)
    except checkers.CheckFailed as failure:
        fail(f"LD_PRELOAD run: {failure}")
    print(f"LD_PRELOAD: {context.summary}")


def profile_without_helpers(prefix, build, work):
    """The tree without its RE2 and libdw helpers: the features they serve are switched off
    with one line each (kernel: markers, source lines of stack frames); the program runs, the
    window is still written."""
    for helper in ("libprofagent_re2.so", "libprofagent_dwarf.so"):
        os.remove(os.path.join(prefix, "lib", helper))
    out = fresh(os.path.join(work, "no_helpers_out"))
    env = clean_environment(build, work, PROFAGENT_WITH_STACK="1")
    completed = run([os.path.join(prefix, "bin", "profagent"), "run", "--output-dir", out, "--step-on",
                     "kernel:^profagent_no_such_kernel$", "--skip-first", "1", "--active", "2", "--repeat", "1", "--",
                     os.path.join(build, "bin", "demo_train"), "5"], env=env)
    lines = checkers.profagent_lines(completed.stderr)
    for feature in ("RE2 could not be loaded", "libprofagent_dwarf.so could not be loaded"):
        said = [line for line in lines if feature in line]
        expect(len(said) == 1, f"{feature!r} said {len(said)} times: {lines}")
    expect(glob.glob(os.path.join(out, "*.steps1-2.trace.json")), f"no window written without the helpers: {lines}")
    print("without the RE2 and libdw helpers: one line each, the window still written")


def test_bundle(options):
    size = os.path.getsize(options.tarball)
    expect(size < BUNDLE_LIMIT, f"the bundle is {size} bytes, above {BUNDLE_LIMIT}")
    unpacked = fresh(os.path.join(options.work, "unpacked"))
    with tarfile.open(options.tarball) as archive:
        archive.extractall(unpacked)
    roots = os.listdir(unpacked)
    expect(len(roots) == 1 and roots[0] + ".tar.gz" == os.path.basename(options.tarball),
           f"the tarball should hold one folder named like it, holds {roots}")
    prefix = os.path.join(unpacked, roots[0])
    print(f"bundle: {os.path.basename(options.tarball)}, {size / 2**20:.2f} MiB compressed, "
          f"{sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(prefix) for f in fs) / 2**20:.2f} MiB unpacked")
    result = audit(prefix, options.build)
    profile_with_launcher(prefix, options.build, options.work, result.carried)
    profile_with_preload(prefix, options.build, options.work)
    profile_without_helpers(prefix, options.build, options.work)


def test_deb(options):
    packages = fresh(os.path.join(options.work, "packages"))
    run(["cpack", "-G", "DEB", "--config", os.path.join(options.build, "CPackConfig.cmake"), "-B", packages],
        cwd=options.build, timeout=600)
    debs = glob.glob(os.path.join(packages, "*.deb"))
    expect(len(debs) == 1, f"cpack made {debs}")
    depends = run(["dpkg-deb", "-f", debs[0], "Depends"]).stdout.strip()
    floors = dict(re.findall(r"([a-z0-9.+-]+) \(>= ([^)]+)\)", depends))
    names = {re.split(r"[\s(]", item.strip())[0] for item in depends.split(",") if item.strip()}
    expect(names == set(floors) and names <= ALLOWED_DEPENDS,
           f"Depends: {depends!r}; allowed only {sorted(ALLOWED_DEPENDS)}, each with a minimum version")
    root = fresh(os.path.join(options.work, "root"))
    run(["dpkg-deb", "-x", debs[0], root])
    print(f"deb: {os.path.basename(debs[0])}, {os.path.getsize(debs[0]) / 2**20:.2f} MiB, Depends: {depends}")
    prefix = os.path.join(root, "usr")
    result = audit(prefix, options.build)
    measured = {"libc6": result.newest["GLIBC"][0], "libgcc-s1": result.newest["GCC"][0],
                "libstdc++6": GCC_OF_GLIBCXX.get(result.newest["GLIBCXX"][0], "unknown")}
    expect(floors == measured, f"Depends states {floors}, the files need {measured} (cmake/cpack.cmake)")
    profile_with_launcher(prefix, options.build, options.work, result.carried)
    profile_with_preload(prefix, options.build, options.work)


def test_prefix(options):
    prefix = fresh(os.path.join(options.work, "prefix"))
    run(["cmake", "--install", options.build, "--prefix", prefix])
    result = audit(prefix, options.build)
    profile_with_launcher(prefix, options.build, options.work, result.carried)
    consumer = fresh(os.path.join(options.work, "consumer"))
    env = clean_environment(options.build, options.work)
    del env["LD_LIBRARY_PATH"]
    run(["cmake", "-S", os.path.join(HERE, "consumer"), "-B", consumer, f"-DCMAKE_PREFIX_PATH={prefix}"], env=env)
    run(["cmake", "--build", consumer], env=env)
    pkg_env = dict(env, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    cflags = run(["pkg-config", "--cflags", "profagent"], env=pkg_env).stdout.split()
    agent = run(["pkg-config", "--variable=agent", "profagent"], env=pkg_env).stdout.strip()
    expect(os.path.realpath(agent) == os.path.realpath(os.path.join(prefix, "lib", "libprofagent.so")),
           f"pkg-config names the agent {agent}")
    run(["cc", *cflags, os.path.join(HERE, "consumer", "consumer.c"), "-o", os.path.join(consumer, "pkgconfig_consumer")],
        env=env)
    with open(os.path.join(consumer, "agent_path.txt")) as f:
        cmake_agent = f.read().strip()
    for program in ("consumer", "pkgconfig_consumer"):
        alone = run([os.path.join(consumer, program)], env=env).stdout.strip()
        expect(alone == "profagent: absent", f"{program} without the agent printed {alone!r}")
        loaded = run([os.path.join(consumer, program)], env=dict(env, LD_PRELOAD=cmake_agent)).stdout.strip()
        expect(loaded == "profagent: present, 1 step, 1 range", f"{program} under the agent printed {loaded!r}")
    print(f"consumers built with find_package(profagent) and with pkg-config ({' '.join(cflags)}): "
          "weak API absent alone, present under the agent")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("bundle", "deb", "prefix"))
    parser.add_argument("tarball", nargs="?")
    parser.add_argument("--build", required=True)
    parser.add_argument("--work", required=True)
    options = parser.parse_args()
    options.build, options.work = os.path.abspath(options.build), os.path.abspath(options.work)
    fresh(options.work)
    {"bundle": test_bundle, "deb": test_deb, "prefix": test_prefix}[options.kind](options)
    print(f"passed: install.{options.kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
