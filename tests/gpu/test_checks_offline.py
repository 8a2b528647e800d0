"""The GPU acceptance script's PyTorch checks end to end without a GPU: gpu_check.py runs with
a stand-in for the GPU machine's Python and for the bundle's launcher (fake_gpu_world.py), so
every check's own code — the commands it builds, finding the traces, the comparison with
torch.profiler's, the figures, the verdict lines, the three output files — runs here before
the one run on a real GPU. Then once more with one kernel missing from profagent's training
traces: the comparisons must fail and the script must exit 1.
"""
import json
import os
import subprocess
import sys
import tarfile
import shutil
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = os.path.join(HERE, "fake_gpu_world.py")


def wrapper(path, role):
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nexec /usr/bin/python3 {WORLD} {role} "$@"\n')
    os.chmod(path, 0o755)
    return path


def fake_bundle(root):
    bundle = os.path.join(root, "profagent-0.0.0-linux-test")
    for folder in ("bin", "lib/profagent_python"):
        os.makedirs(os.path.join(bundle, folder))
    open(os.path.join(bundle, "lib", "libprofagent.so"), "w").close()
    wrapper(os.path.join(bundle, "bin", "profagent"), "launcher")
    return bundle


def run_gpu_check(root, extra_env=None, suffix="_broken"):
    out = os.path.join(root, "out" + (suffix if extra_env else ""))
    python = wrapper(os.path.join(root, "python3"), "python")
    env = dict(os.environ, **(extra_env or {}))
    env.pop("LD_PRELOAD", None)
    completed = subprocess.run([sys.executable, os.path.join(HERE, "gpu_check.py"), "--bundle", fake_bundle_once(root),
                                "--out", out, "--python", python, "--only", "torch,survey", "--budget-s", "120"],
                               capture_output=True, text=True, env=env, timeout=300)
    return completed, out


_BUNDLES = {}


def fake_bundle_once(root):
    if root not in _BUNDLES:
        _BUNDLES[root] = fake_bundle(root)
    return _BUNDLES[root]


def verdicts(stdout):
    found = {}
    for line in stdout.splitlines():
        status, _, rest = line.partition(" ")
        if status in ("PASS", "FAIL", "SKIP"):
            found[rest.split(":")[0]] = (status, rest)
    return found


class OfflineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="gpu_check_offline_")
        cls.good, cls.good_out = run_gpu_check(cls.root)
        cls.bad, cls.bad_out = run_gpu_check(cls.root, {"FAKE_GPU_BREAK": "train_loop.py"})

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def test_every_torch_check_passes_or_says_why_it_skips(self):
        found = verdicts(self.good.stdout)
        expected_pass = ["torch.train_vs_torch_profiler", "torch.train_ld_preload", "torch.python_frames",
                         "torch.triton", "torch.cupy",
                         "torch.cuda_graphs", "torch.nccl", "torch.nccl_ranks", "torch.memory_reserved", "torch.dataloader_workers",
                         "torch.overhead", "survey.traces", "torch.operators", "torch.nvtx"]
        for name in expected_pass:
            self.assertEqual(found.get(name, ("missing",))[0], "PASS", f"{name}: {found.get(name)}\n{self.good.stdout}")
        self.assertIn("match torch.profiler's by name and count", found["torch.operators"][1])
        self.assertIn("5 kernels attributed to the inner ranges", found["torch.nvtx"][1])
        self.assertIn("3 steps, 10 kernels matched by name and count, kernel time ratio worst 1.020",
                      found["torch.train_vs_torch_profiler"][1])
        self.assertIn("ratio idle 1.000, recording 1.050", found["torch.overhead"][1])
        self.assertIn("3 kernels each", found["torch.cuda_graphs"][1])
        self.assertIn("difference +0.00 MiB", found["torch.memory_reserved"][1])
        self.assertIn("10 NCCL kernels for 10 one-rank all-reduces, as torch.profiler", found["torch.nccl"][1])
        self.assertIn("rank 0: 4 all-reduces, 8 NCCL kernels, every kernel linked", found["torch.nccl_ranks"][1])
        self.assertIn("Python 3.12.3: python_frames.py(14): known_call in the stacks", found["torch.python_frames"][1])
        self.assertIn("SUMMARY: 14 passed, 0 failed, 0 skipped", self.good.stdout)
        self.assertEqual(self.good.returncode, 0, self.good.stdout + self.good.stderr)
        self.assertIn("== discovery", self.good.stdout)
        self.assertIn('"device": "NVIDIA H100 80GB HBM3"', self.good.stdout)

    def test_exactly_three_files_come_back(self):
        self.assertEqual(sorted(os.listdir(self.good_out)),
                         ["gpu_check.log", "gpu_check_artifacts.tar.gz", "summary.json"])
        with open(os.path.join(self.good_out, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["counts"], {"PASS": 14, "FAIL": 0, "SKIP": 0})
        rows = next(c for c in summary["checks"] if c["name"] == "torch.train_vs_torch_profiler")["details"]["rows"]
        self.assertEqual([row["step"] for row in rows], [12, 13, 14])
        self.assertIn("profagent_training", summary["surveys"])
        with tarfile.open(os.path.join(self.good_out, "gpu_check_artifacts.tar.gz")) as archive:
            names = archive.getnames()
        self.assertIn("traces/torch_profiler/torch_profiler.trace.json", names)
        self.assertIn("traces/train_profagent_run/host.1.w1.steps12-14.trace.json", names)
        self.assertIn("surveys.json", names)

    def test_a_missing_kernel_fails_the_comparisons(self):
        found = verdicts(self.bad.stdout)
        for name in ("torch.train_vs_torch_profiler", "torch.train_ld_preload", "torch.dataloader_workers"):
            self.assertEqual(found[name][0], "FAIL", found[name])
            self.assertIn("step 13", found[name][1])
        self.assertEqual(found["torch.triton"][0], "PASS")
        broken_nccl, _ = run_gpu_check(self.root, {"FAKE_GPU_BREAK": "nccl_allreduce.py"}, "_nccl")
        self.assertIn("NCCL kernels differ from torch.profiler's", verdicts(broken_nccl.stdout)["torch.nccl"][1])
        self.assertEqual(self.bad.returncode, 1)
        self.assertIn("3 failed", self.bad.stdout)


if __name__ == "__main__":
    unittest.main()
