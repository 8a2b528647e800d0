#!/usr/bin/python3
"""The `profagent` launcher's command line: launcher_checks.py <path to bin/profagent>.
--help explains with an example; a bad option is one line and exit code 2; the program's exit
code comes back unchanged (128+N when signal N killed it); the program runs with the agent
preloaded (prepended to an existing LD_PRELOAD)."""
import subprocess
import sys

launcher = sys.argv[1]
failures = []


def run(*args, env=None):
    return subprocess.run([launcher, *args], capture_output=True, text=True, timeout=60, env=env)


def expect(condition, message):
    if not condition:
        failures.append(message)


help_run = run("--help")
expect(help_run.returncode == 0, f"--help exited with {help_run.returncode}")
for word in ("--skip-first", "--step-on", "api:NAME", "kernel:REGEX", "profiler-api", "python", "example"):
    expect(word in help_run.stdout, f"--help does not mention {word}")

for bad in (["run", "--wait", "x", "--", "true"], ["run", "--active", "0", "--", "true"],
            ["run", "--bogus", "1", "--", "true"], ["run", "--wait", "1"], ["frobnicate"], []):
    r = run(*bad)
    lines = r.stderr.strip().splitlines()
    expect(r.returncode == 2, f"{bad}: exit code {r.returncode}, expected 2")
    expect(len(lines) == 1 and lines[0].startswith("profagent: "), f"{bad}: not one clear line: {r.stderr!r}")

code = run("run", "--", "sh", "-c", "exit 7")
expect(code.returncode == 7, f"exit 7 came back as {code.returncode}")
killed = run("run", "--", "sh", "-c", "kill -TERM $$")
expect(killed.returncode == 128 + 15, f"SIGTERM came back as {killed.returncode}")
missing = run("run", "--", "/nonexistent/program")
expect(missing.returncode == 127, f"a missing program came back as {missing.returncode}")
env = {"PATH": "/usr/bin:/bin", "LD_PRELOAD": "libc.so.6"}
preload = run("run", "--", "sh", "-c", 'echo "$LD_PRELOAD"', env=env)
expect(preload.stdout.strip().endswith(":libc.so.6") and "libprofagent.so" in preload.stdout,
       f"LD_PRELOAD not prepended: {preload.stdout!r}")

for failure in failures:
    print("FAILED:", failure)
print("passed" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
