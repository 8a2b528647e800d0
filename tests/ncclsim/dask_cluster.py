"""A real Dask cluster on the loopback address for the tests and the benchmark: one
`dask-scheduler` and N single-threaded `dask-worker` processes (Debian's python3-distributed),
started and stopped by process id."""
import json
import os
import shutil
import subprocess
import tempfile
import time


class LocalCluster:
    def __init__(self, workers=2):
        self.workers = workers
        self.folder = tempfile.mkdtemp(prefix="profagent-dask-")
        self.file = os.path.join(self.folder, "scheduler.json")
        self.processes = []

    def __enter__(self):
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.folder)
        self.processes.append(subprocess.Popen(["dask-scheduler", "--host", "127.0.0.1", "--port", "0",
                                                "--no-dashboard", "--scheduler-file", self.file], **quiet))
        for i in range(self.workers):
            self.processes.append(subprocess.Popen(["dask-worker", "--scheduler-file", self.file, "--nthreads", "1",
                                                    "--nworkers", "1", "--no-dashboard", "--name", f"w{i}",
                                                    "--local-directory", self.folder], **quiet))
        self.address = self._wait_for_workers()
        return self

    def _wait_for_workers(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if os.path.exists(self.file):
                try:
                    with open(self.file) as f:
                        info = json.load(f)
                except ValueError:
                    info = None
                if info and len(self._workers(info["address"])) >= self.workers:
                    return info["address"]
            time.sleep(0.5)
        raise RuntimeError(f"the Dask cluster did not start {self.workers} workers in {timeout} s")

    @staticmethod
    def _workers(address):
        from distributed import Client
        with Client(address, timeout=10) as client:
            return client.scheduler_info()["workers"]

    def __exit__(self, *exc):
        for p in reversed(self.processes):
            p.terminate()
        for p in self.processes:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
