"""The GPU acceptance script (scripts/gpu_check.sh runs it; docs/gpu_check.md says what each
check compares and its thresholds).

    gpu_check.py --bundle dist/profagent-<ver>-linux-<arch>[.tar.gz] --out DIR [--python PY]
    gpu_check.py --devsim [BUILD] --bundle ... --out DIR        (CI mode, on the simulated device)

Prints a discovery block, then one `PASS|FAIL|SKIP <check>: <figure>` line per check and a
summary line. Writes into DIR exactly three files: gpu_check.log (every command and its
output), summary.json (discovery, verdicts, figures, trace surveys) and
gpu_check_artifacts.tar.gz (the traces, at most 14 MiB). Each check has its own time limit and
the whole run a budget (--budget-s): what is left when it is spent says SKIP. Exit status 0
when no check failed. Standard library only (it runs under the Python that holds torch).
"""
import argparse
import glob
import json
import os
import platform
import shutil
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "install"))

import discovery  # noqa: E402
import elf_audit  # noqa: E402
import torch_checks  # noqa: E402
import trace_compare  # noqa: E402
import trace_survey  # noqa: E402
import workloads  # noqa: E402
from harness import Context, Failed, Log, Skipped, expect, passed, run_check  # noqa: E402

ARCHIVE_LIMIT = 14 << 20


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", help="the unpacked bundle or its .tar.gz (default: the newest under dist/)")
    parser.add_argument("--out", required=True, help="folder for gpu_check.log, summary.json and the archive")
    parser.add_argument("--devsim", nargs="?", const=os.path.join(ROOT, "build"), metavar="BUILD",
                        help="CI mode: run on the simulated device of this build tree (default ./build)")
    parser.add_argument("--python", default=sys.executable, help="the Python with torch (default: this one)")
    parser.add_argument("--cuda-home", default=os.environ.get("CUDA_HOME") or "/usr/local/cuda")
    parser.add_argument("--arch", help="CUDA architecture for nvcc (default: 90, on devsim the build's)")
    parser.add_argument("--only", help="comma-separated check names or prefixes (e.g. torch,workloads.demo_train)")
    parser.add_argument("--workloads", help="comma-separated workload checks to run (default: all)")
    parser.add_argument("--budget-s", type=float, default=450, help="the whole run's time budget (default 450)")
    parser.add_argument("--jobs", type=int, default=min(16, os.cpu_count() or 2), help="parallel nvcc builds")
    parser.add_argument("--compiler-launcher", help="e.g. ccache, put before nvcc")
    parser.add_argument("--bench-calls", type=int, default=200000, help="launches per bench_calls run")
    parser.add_argument("--max-overhead-ratio", type=float, default=1.25,
                        help="bound on the training step time ratio with the agent recording")
    parser.add_argument("--keep-work", action="store_true", help="keep the work folder (printed at the end)")
    options = parser.parse_args(argv)
    unknown = set(options.workloads.split(",")) - set(workloads.RUNS) if options.workloads else set()
    if unknown:
        parser.error(f"unknown workloads {sorted(unknown)}; known: {', '.join(workloads.RUNS)}")
    options.devsim_dir = os.path.join(options.devsim, "devsim") if options.devsim else None
    if options.arch is None:
        options.arch = build_cuda_arch(options.devsim) if options.devsim else "90"
    return options


def build_cuda_arch(build):
    """The architecture the build tree's test programs use (devsim runs what they run)."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("PROFAGENT_CUDA_ARCH:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return "75"


def find_bundle(options, work):
    """The bundle's root folder (unpacking a .tar.gz into the work folder)."""
    path = options.bundle
    if path is None:
        found = sorted(glob.glob(os.path.join(ROOT, "dist", f"profagent-*-linux-{platform.machine()}*")),
                       key=os.path.getmtime)
        if not found:
            raise SystemExit("gpu_check: no bundle under dist/ (scripts/package.sh makes one); pass --bundle")
        path = found[-1]
    if path.endswith(".tar.gz"):
        with tarfile.open(path) as archive:
            archive.extractall(os.path.join(work, "bundle"))
        roots = os.listdir(os.path.join(work, "bundle"))
        path = os.path.join(work, "bundle", roots[0])
    path = os.path.abspath(path)
    if not os.path.exists(os.path.join(path, "lib", "libprofagent.so")):
        raise SystemExit(f"gpu_check: {path} is not a profagent bundle (no lib/libprofagent.so)")
    return path


def check_bundle(context):
    """The bundle loads here: every ELF file's libraries are found, the carried ones inside the
    bundle; the glibc and libstdc++ versions it needs; the launcher runs."""
    completed = context.run([context.launcher, "--help"], timeout=30)
    expect(completed.returncode == 0, f"profagent --help exited {completed.returncode}: {completed.tail()}")
    missing = [tool for tool in ("readelf", "objdump") if shutil.which(tool) is None]
    if missing:
        raise Skipped(f"{' and '.join(missing)} not installed here: no ELF audit (profagent --help ran)")
    audit = elf_audit.Audit(context.bundle).run()
    for problem in audit.problems:
        context.log.write(f"  problem: {problem}")
    expect(not audit.problems, "; ".join(audit.problems[:3]))
    return passed(f"{len(audit.files)} ELF files load; needs {audit.minimums()}")


def check_survey(context):
    """Surveys of the traces made (trace_survey.py), for comparing real CUPTI with devsim."""
    sources = {"profagent_training": context.facts.get("training_trace"),
               "torch_profiler_training": context.facts.get("reference_trace")}
    sources.update({os.path.basename(os.path.dirname(p)): p
                    for p in glob.glob(os.path.join(context.work, "traces", "workload_demo_train*", "*.trace.json"))})
    surveys = {}
    for name, path in sources.items():
        if path:
            surveys[name] = trace_survey.survey(trace_compare.load(path))
            context.log.write(f"  {name}: {trace_survey.summary_line(surveys[name])}")
            for category, found in surveys[name]["categories"].items():
                context.log.write(f"    {category}: {found['count']} events, args {sorted(found['args'])}")
                for sample in found["samples"]:
                    context.log.write(f"      {sample}")
    if not surveys:
        raise Skipped("no trace to survey")
    path = os.path.join(context.work, "surveys.json")
    with open(path, "w") as f:
        json.dump(surveys, f, indent=1)
    context.keep(path)
    context.facts["surveys"] = surveys
    return passed(f"{len(surveys)} traces surveyed: {', '.join(surveys)}")


def checks(options):
    """(name, function, time limit in s), in the order they run: the comparison with
    torch.profiler first, the timing checks last (after the survey of the traces made), so a
    short budget keeps what matters most."""
    found = [("bundle.load", check_bundle, 60),
             ("torch.train_vs_torch_profiler", torch_checks.check_train_vs_torch_profiler, 240),
             ("torch.train_ld_preload", torch_checks.check_train_ld_preload, 120),
             ("torch.operators", torch_checks.check_operators, 10),
             ("torch.triton", torch_checks.check_triton, 120),
             ("torch.cupy", torch_checks.check_cupy, 120),
             ("torch.cuda_graphs", torch_checks.check_cuda_graphs, 90),
             ("torch.nvtx", torch_checks.check_nvtx, 90),
             ("torch.nccl", torch_checks.check_nccl, 120),
             ("torch.memory_reserved", torch_checks.check_memory_reserved, 90),
             ("torch.dataloader_workers", torch_checks.check_dataloader_workers, 120),
             ("workloads.build", workloads.check_build, 300),
             ("cupti.semantics", workloads.check_cupti_semantics, 120)]
    wanted = options.workloads.split(",") if options.workloads else list(workloads.RUNS)
    found += [(f"workloads.{name}", workloads.check_workload(name), 120) for name in wanted]
    found += [("survey.traces", check_survey, 60),
              ("bench.launch_cost", workloads.check_launch_cost, 120),
              ("torch.overhead", torch_checks.check_overhead, 240)]
    if options.only:
        prefixes = options.only.split(",")
        found = [c for c in found if any(c[0] == p or c[0].startswith(p.rstrip(".") + ".") for p in prefixes)]
    return found


def pack(context, out):
    """The kept files into one .tar.gz of at most ARCHIVE_LIMIT bytes; what does not fit is
    named in the log."""
    archive_path = os.path.join(out, "gpu_check_artifacts.tar.gz")
    left_out = []
    with open(archive_path, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as archive:
        for path, name in dict(context.artifacts).items():  # each file once
            if raw.tell() + os.path.getsize(path) // 4 > ARCHIVE_LIMIT:
                left_out.append(name)
                continue
            archive.add(path, arcname=name)
    if left_out:
        context.log.write(f"left out of the archive (size limit): {left_out}")
    return archive_path, left_out


def main(argv):
    options = parse(argv)
    out = os.path.abspath(options.out)
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="profagent_gpu_check_")
    started = time.monotonic()
    log = Log(os.path.join(out, "gpu_check.log"))
    context = Context(options, log, work, started + options.budget_s)
    context.bundle = find_bundle(options, work)
    context.agent = os.path.join(context.bundle, "lib", "libprofagent.so")
    context.launcher = os.path.join(context.bundle, "bin", "profagent")
    context.python_hook = os.path.join(context.bundle, "lib", "profagent_python")
    if options.devsim:
        # The simulated device is the machine's "driver": every process finds it first.
        os.environ["LD_LIBRARY_PATH"] = ":".join(filter(None, [options.devsim_dir, os.environ.get("LD_LIBRARY_PATH")]))
    log.section("discovery")
    lines, found = discovery.discover(context)
    print("== discovery", flush=True)
    for line in lines:
        print("  " + line, flush=True)
        log.write(line)
    print("== checks", flush=True)
    verdicts = []
    for name, function, timeout in checks(options):
        verdict = run_check(name, function, context, timeout)
        verdicts.append((name, verdict))
        print(f"{verdict.status} {name}: {verdict.figure}", flush=True)
    counts = {status: sum(1 for _, v in verdicts if v.status == status) for status in ("PASS", "FAIL", "SKIP")}
    elapsed = time.monotonic() - started
    summary_line = (f"SUMMARY: {counts['PASS']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped "
                    f"in {elapsed:.0f} s ({'devsim' if options.devsim else 'GPU'})")
    archive_path, left_out = pack(context, out)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"summary": summary_line, "counts": counts, "seconds": round(elapsed, 1),
                   "discovery": found, "archive_left_out": left_out,
                   "checks": [{"name": name, "status": v.status, "figure": v.figure, "seconds": round(v.seconds, 1),
                               "details": v.details} for name, v in verdicts],
                   "agent_cupti": sorted(context.facts.get("agent_cupti_lines", ())),
                   "surveys": context.facts.get("surveys", {})}, f, indent=1, default=str)
    log.write(summary_line)
    print(summary_line, flush=True)
    print(f"  log, summary.json and {os.path.basename(archive_path)} "
          f"({os.path.getsize(archive_path) / 2**20:.1f} MiB) in {out}", flush=True)
    if options.keep_work:
        print(f"  work folder kept: {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
