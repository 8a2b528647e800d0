"""What every check of the GPU acceptance script runs on: commands with their own time limit
(the whole process group is killed when it is reached, so a hung program or a DataLoader
worker cannot outlive it), a detailed log, and one verdict per check.

A check is a function taking a Context and returning a Verdict (or raising Failed / Skipped);
any other exception is its failure, with the traceback in the log: one check never stops
the others. Standard library only.
"""
import json
import os
import signal
import subprocess
import time
import traceback


class Failed(Exception):
    """The check ran and found something wrong; the message is its figure."""


class Skipped(Exception):
    """The check cannot run here (no torch on CUDA, no Triton, out of time); the message says why."""


class Verdict:
    def __init__(self, status, figure, seconds=0.0, details=None):
        self.status, self.figure, self.seconds = status, figure, seconds
        self.details = details or {}


def passed(figure, **details):
    return Verdict("PASS", figure, details=details)


def expect(condition, message):
    if not condition:
        raise Failed(message)


class Completed:
    """A finished command: its output, status, time, and whether its limit killed it."""

    def __init__(self, command, returncode, stdout, stderr, seconds, timed_out):
        self.command, self.returncode = command, returncode
        self.stdout, self.stderr, self.seconds, self.timed_out = stdout, stderr, seconds, timed_out

    def json_line(self):
        """The last stdout line that is a JSON object (the programs' result line)."""
        for line in reversed(self.stdout.splitlines()):
            line = line.strip()
            if line.startswith("{"):
                try:
                    return json.loads(line)
                except ValueError:
                    continue
        program = next((c for c in self.command if c.endswith(".py")), self.command[0])
        raise Failed(f"{os.path.basename(program)} printed no result line (exit {self.returncode}): {self.tail()}")

    def tail(self, limit=600):
        text = (self.stderr.strip() or self.stdout.strip()).replace("\n", " | ")
        return text[-limit:]


class Log:
    """The detailed log: every command, its environment changes, status and output tails."""

    def __init__(self, path):
        self.file = open(path, "w", encoding="utf-8", errors="replace")
        self.started = time.monotonic()

    def write(self, text=""):
        self.file.write(text.rstrip("\n") + "\n")
        self.file.flush()

    def section(self, title):
        self.write(f"\n===== {title}  (t={time.monotonic() - self.started:.1f} s)")

    def command(self, completed, env_changes):
        self.write(f"$ {' '.join(f'{k}={v}' for k, v in sorted(env_changes.items()))} "
                   f"{' '.join(completed.command)}")
        state = "TIMED OUT" if completed.timed_out else f"exit {completed.returncode}"
        self.write(f"  -> {state} after {completed.seconds:.2f} s")
        for name, text in (("stdout", completed.stdout), ("stderr", completed.stderr)):
            if text.strip():
                lines = text.rstrip("\n").splitlines()
                shown = lines if len(lines) <= 60 else lines[:20] + ["  ..."] + lines[-40:]
                self.write(f"  --- {name} ({len(lines)} lines)")
                self.write("\n".join("  | " + line for line in shown))


class Context:
    """What the checks share: options, paths, the log, the clock of the whole run."""

    def __init__(self, options, log, work, deadline):
        self.options, self.log, self.work, self.deadline = options, log, work, deadline
        self.facts = {}      # found by discovery and by earlier checks (torch on CUDA? ...)
        self.artifacts = []  # files to pack into the archive
        self.check_deadline = deadline

    def seconds_left(self):
        return min(self.deadline, self.check_deadline) - time.monotonic()

    def run(self, command, env=None, timeout=120, cwd=None):
        """Runs `command` with the environment changes `env` (a value None removes the
        variable), at most `timeout` seconds and never past the check's or the run's end."""
        limit = min(timeout, self.seconds_left())
        if limit < 1:
            raise Skipped("out of time before running " + os.path.basename(command[0]))
        environment = dict(os.environ)
        for name, value in (env or {}).items():
            if value is None:
                environment.pop(name, None)
            else:
                environment[name] = value
        begin = time.monotonic()
        process = subprocess.Popen(command, env=environment, cwd=cwd, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
        timed_out = False
        try:
            stdout, stderr = process.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_group(process)
            stdout, stderr = process.communicate()
        completed = Completed([str(c) for c in command], process.returncode,
                              stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"),
                              time.monotonic() - begin, timed_out)
        self.log.command(completed, env or {})
        return completed

    def keep(self, path, name=None):
        """Packs `path` into the archive under `name` (default: its path below the work folder)."""
        if path and os.path.exists(path):
            self.artifacts.append((path, name or os.path.relpath(path, self.work)))


def kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_check(name, function, context, timeout):
    """One check, bounded by `timeout` seconds and by what is left of the run; returns its Verdict."""
    context.log.section(f"check {name}")
    context.check_deadline = time.monotonic() + timeout
    begin = time.monotonic()
    try:
        if context.seconds_left() < 5:
            raise Skipped("out of time (the run's budget is spent)")
        verdict = function(context)
    except Skipped as why:
        verdict = Verdict("SKIP", str(why))
    except Failed as why:
        verdict = Verdict("FAIL", str(why))
    except Exception as error:  # noqa: BLE001 - a broken check is that check's failure only
        context.log.write(traceback.format_exc())
        verdict = Verdict("FAIL", f"the check itself failed: {type(error).__name__}: {error}")
    finally:
        context.check_deadline = context.deadline
    verdict.seconds = time.monotonic() - begin
    context.log.write(f"{verdict.status} {name}: {verdict.figure}")
    for key, value in verdict.details.items():
        context.log.write(f"  {key}: {value}")
    return verdict
