#!/usr/bin/python3
"""Runs one preload test: the program exactly as a user runs it, then a checker on its files.

    run_preload.py --out DIR --checker NAME -- cmake -E env LD_PRELOAD=... PROG ARGS...

DIR is emptied first (the command's PROFAGENT_OUTPUT_DIR points into it). stdout, stderr and
the exit code are kept in DIR/run.* for the checker; checkers that compare with a run without
the agent rerun the same command with its LD_PRELOAD=... argument removed.
Only the Python standard library is used.
"""
import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import checkers  # noqa: E402
from agent_run import run, without_agent  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--checker", required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args()
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    shutil.rmtree(options.out, ignore_errors=True)
    os.makedirs(options.out)
    agent_run = run(command)
    agent_run.save(options.out, "run")
    check = getattr(checkers, "check_" + options.checker)
    context = checkers.Context(options.out, agent_run, lambda: run(without_agent(command)))
    return checkers.report(check, context, command, agent_run, options.checker)


if __name__ == "__main__":
    sys.exit(main())
