"""What a test leaves on the disk: a passed case's files are removed, a failed case's stay to be
read. The suite's outputs once filled a CI machine's disk (several GB of traces kept after they
had been checked). PROFAGENT_TEST_KEEP_OUTPUT=1 keeps every case's files."""
import os
import shutil


def keep_output():
    return os.environ.get("PROFAGENT_TEST_KEEP_OUTPUT") == "1"


def remove_output_of_passed_case(folder):
    if not keep_output():
        shutil.rmtree(folder, ignore_errors=True)
