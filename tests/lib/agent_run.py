"""Running programs under the agent in the Python tests: one driver for the preload checkers
(tests/preload/run_preload.py), the reliability cases (tests/reliability/reliability.py), the
report's acceptance runs (tests/report/accept.py) and the golden outputs (tests/golden).

    from agent_run import run, agent_environment, without_agent

A Run keeps what the program did (stdout, stderr, exit status; output decoded as UTF-8, bad
bytes replaced) and splits its stderr into the agent's lines and the program's own. Only the
standard library is used.
"""
import os
import subprocess

AGENT_LINE = "[profagent]"  # every line the agent writes to stderr starts with it


class Run:
    def __init__(self, command, stdout, stderr, returncode):
        self.command, self.stdout, self.stderr, self.returncode = command, stdout, stderr, returncode

    @classmethod
    def of(cls, completed, command=None):
        """The Run of a process finished elsewhere (Popen, a raw wait status): anything with
        stdout, stderr (text) and returncode."""
        return cls(command, completed.stdout, completed.stderr, completed.returncode)

    def agent_lines(self):
        return [line for line in self.stderr.splitlines() if line.startswith(AGENT_LINE)]

    def other_lines(self):
        return [line for line in self.stderr.splitlines() if not line.startswith(AGENT_LINE)]

    def save(self, directory, prefix):
        """<prefix>.stdout, .stderr and .rc in directory, for a checker or a person to read."""
        for suffix, text in (("stdout", self.stdout), ("stderr", self.stderr), ("rc", str(self.returncode))):
            with open(os.path.join(directory, f"{prefix}.{suffix}"), "w") as f:
                f.write(text)


def clean_environment():
    """This process's environment without the agent's, devsim's and the preload's variables, so
    that a test sets exactly the ones it means."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PROFAGENT_", "DEVSIM_", "LD_PRELOAD"))}


def agent_environment(agent=None, library_path=None, base=None, **variables):
    """An environment for one run: base (default: the clean environment), LD_PRELOAD=agent when
    given, LD_LIBRARY_PATH=library_path when given (the simulated device's libraries), then
    the given variables."""
    env = dict(clean_environment() if base is None else base)
    if agent:
        env["LD_PRELOAD"] = agent
    if library_path:
        env["LD_LIBRARY_PATH"] = library_path
    env.update(variables)
    return env


def run(command, env=None, timeout=120, stdin=None, cwd=None):
    """Runs command to its end (env None: this process's environment) and returns its Run."""
    completed = subprocess.run(command, env=env, cwd=cwd, capture_output=True, timeout=timeout, input=stdin)
    return Run(command, completed.stdout.decode("utf-8", "replace"), completed.stderr.decode("utf-8", "replace"),
               completed.returncode)


def without_agent(command):
    """The same command line without its LD_PRELOAD=... word (a `cmake -E env` command)."""
    return [word for word in command if not word.startswith("LD_PRELOAD=")]
