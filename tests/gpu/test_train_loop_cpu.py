"""The GPU check's training loop (programs/train_loop.py) on the CPU with the system's torch:
its torch.profiler run records the three steps the comparison expects (skip_first=10,
warmup=2, active=3: iterations 12-14) and its --times file has every step. This checks the
script's use of torch (DataLoader with workers, AdamW, the profiler's schedule and export)
here, before it runs on a GPU. torch before 2.x names a step by the number of the one before
it (ProfilerStep#11 for iteration 12); later versions by its own number.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import trace_compare  # noqa: E402


class TrainLoopCpuTest(unittest.TestCase):
    def test_profiler_schedule_and_times(self):
        import torch
        with tempfile.TemporaryDirectory() as folder:
            times = os.path.join(folder, "times.json")
            completed = subprocess.run(
                [sys.executable, os.path.join(HERE, "programs", "train_loop.py"), "--device", "cpu", "--steps", "16",
                 "--batch", "4", "--workers", "2", "--times", times, "--torch-profiler", folder,
                 "--skip-first", "10", "--warmup", "2", "--active", "3"], capture_output=True, text=True, timeout=240)
            self.assertEqual(completed.returncode, 0, completed.stderr[-3000:])
            self.assertRegex(completed.stdout, r"train_loop: 16 steps, last loss [0-9.]+, median step [0-9.]+ ms")
            view = trace_compare.StepView(trace_compare.load(os.path.join(folder, "torch_profiler.trace.json")))
            with open(times) as f:
                self.assertEqual(len(json.load(f)["step_seconds"]), 16)
        expected = [11, 12, 13] if int(torch.__version__.split(".")[0]) < 2 else [12, 13, 14]
        self.assertEqual([number for number, _, _ in view.steps], expected)


if __name__ == "__main__":
    unittest.main()
