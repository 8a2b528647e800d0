"""Unit tests of trace_compare.py (profagent's trace against torch.profiler's) on small
hand-made traces of both shapes: profagent's (ProfilerStep#N user annotations, launches with
`correlation`, kernels on the device rows, ac2g flows) and Kineto's as torch.profiler exports
it (cpu_op operators with External id, cuda_runtime and cuda_driver launches, a
gpu_user_annotation copy of each step on the device, the "Trace" span). Standard library only.
"""
import copy
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_compare  # noqa: E402

PID, TID, DEVICE, STREAM = 4242, 4242, 0, 7
# Per step: (kernel name, launch API, kernel duration in µs). Step 13 also launches a cuBLAS
# kernel through the driver, whose kernel runs after the step ended on the host.
STEP_WORK = [("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >", "cudaLaunchKernel", 3.0),
             ("cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1, true>", "cudaLaunchKernel", 12.5),
             ("void multi_tensor_apply_kernel<TensorListMetadata<4> >", "cudaLaunchKernel", 40.25)]
STEPS = (12, 13, 14)


class TraceBuilder:
    """Builds one trace. Times in µs; each step lasts 1000 µs starting at 1000 * (step - 11)."""

    def __init__(self, shape):
        self.shape, self.events, self.correlation = shape, [], 100
        if shape == "torch":
            self.events.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
                                "tid": "PyTorch Profiler", "ts": 0.0, "dur": 5000.0, "args": {"Op count": 0}})

    def step(self, number):
        start = 1000.0 * (number - 11)
        self.events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{number}", "pid": PID,
                            "tid": TID, "ts": start, "dur": 999.0})
        if self.shape == "torch":  # Kineto's device-side copy of the step: must be ignored
            self.events.append({"ph": "X", "cat": "gpu_user_annotation", "name": f"ProfilerStep#{number}",
                                "pid": DEVICE, "tid": STREAM, "ts": start + 5, "dur": 990.0})
        return start

    def launch(self, at, name, api="cudaLaunchKernel", dur=10.0, delay=20.0, linked=True, external_id=None):
        self.correlation += 1
        correlation = self.correlation
        category = "cuda_driver" if api.startswith("cu") and not api.startswith("cuda") else "cuda_runtime"
        call_args = {"cbid": 211, "correlation": correlation}
        kernel_args = {"device": DEVICE, "stream": STREAM, "correlation": correlation,
                       "grid": [1, 1, 1], "block": [128, 1, 1]}
        if external_id is not None:
            call_args["External id"] = kernel_args["External id"] = external_id
        if self.shape == "torch" and external_id is None:
            self.correlation += 1
            op_id = self.correlation
            self.events.append({"ph": "X", "cat": "cpu_op", "name": "aten::op", "pid": PID, "tid": TID,
                                "ts": at - 1, "dur": 8.0, "args": {"External id": op_id}})
            call_args["External id"] = kernel_args["External id"] = op_id
        if linked:
            self.events.append({"ph": "X", "cat": category, "name": api, "pid": PID, "tid": TID, "ts": at,
                                "dur": 4.0, "args": call_args})
            self.events.append({"ph": "s", "id": correlation, "pid": PID, "tid": TID, "ts": at,
                                "cat": "ac2g", "name": "ac2g"})
            self.events.append({"ph": "f", "id": correlation, "pid": DEVICE, "tid": STREAM, "ts": at + delay,
                                "cat": "ac2g", "name": "ac2g", "bp": "e"})
        else:
            kernel_args["correlation"] = 999999 + correlation  # no call carries it
        self.events.append({"ph": "X", "cat": "kernel", "name": name, "pid": DEVICE, "tid": STREAM,
                            "ts": at + delay, "dur": dur, "args": kernel_args})

    def copy(self, at, name="Memcpy HtoD (Pinned -> Device)"):
        self.correlation += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": PID, "tid": TID,
                            "ts": at, "dur": 3.0, "args": {"correlation": self.correlation}})
        self.events.append({"ph": "X", "cat": "gpu_memcpy", "name": name, "pid": DEVICE, "tid": STREAM,
                            "ts": at + 5, "dur": 2.0, "args": {"correlation": self.correlation, "bytes": 4096}})

    def document(self):
        document = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
                    "traceEvents": self.events}
        if self.shape == "torch":
            document["traceName"] = "torch_profiler.trace.json"
        return document


def training(shape, scale=1.0, steps=STEPS, skip=None, unlinked=False, operators=False):
    """A trace of the three recorded steps; `scale` multiplies every kernel duration,
    `skip` = (step, kernel index) leaves that launch out."""
    builder = TraceBuilder(shape)
    for number in steps:
        start = builder.step(number)
        builder.copy(start + 10)
        for index, (name, api, dur) in enumerate(STEP_WORK):
            if skip == (number, index):
                continue
            linked = not (unlinked and number == steps[1] and index == 0)
            builder.launch(start + 100 + 200 * index, name, api, dur * scale, linked=linked,
                           external_id=(7000 + number) if operators else None)
        if operators and shape == "profagent":  # one operator per launch, as in torch's trace
            for index in range(len(STEP_WORK) + (number == steps[1])):
                at = start + 990 if index == len(STEP_WORK) else start + 100 + 200 * index
                builder.events.append({"ph": "X", "cat": "cpu_op", "name": "aten::op", "pid": PID, "tid": TID,
                                       "ts": at - 1, "dur": 8.0, "args": {"External id": 7000 + number}})
        if number == steps[1]:  # cuBLAS through the driver, launched at the very end of the step
            builder.launch(start + 990, "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32", "cuLaunchKernel",
                           25.0 * scale, delay=30.0, external_id=(7000 + number) if operators else None)
    return builder.document()


class CompareTest(unittest.TestCase):
    def test_the_same_steps_pass(self):
        result = trace_compare.compare(training("profagent", scale=1.04), training("torch"))
        self.assertTrue(result.passed, result.problems)
        self.assertEqual([row["step"] for row in result.rows], list(STEPS))
        self.assertEqual([row["kernels"] for row in result.rows], [3, 4, 3])
        self.assertAlmostEqual(result.worst_ratio, 1.04, places=3)
        self.assertIn("3 steps, 10 kernels matched", result.figure())

    def test_a_missing_kernel_fails_naming_step_and_kernel(self):
        result = trace_compare.compare(training("profagent", skip=(13, 1)), training("torch"))
        self.assertFalse(result.passed)
        self.assertTrue(any(p.startswith("step 13: kernel cudnn::bn_fw_tr_1C11_kernel_NCHW") and "ours 0, reference 1" in p
                            for p in result.problems), result.problems)

    def test_a_renamed_kernel_fails(self):
        ours = training("profagent")
        for e in ours["traceEvents"]:
            if e.get("cat") == "kernel" and e["name"].startswith("void multi_tensor"):
                e["name"] = e["name"].replace("<4>", "<3>")
        result = trace_compare.compare(ours, training("torch"))
        self.assertFalse(result.passed)
        self.assertEqual(len([p for p in result.problems if "TensorListMetadata" in p]), 6)  # 2 names x 3 steps

    def test_kernel_time_beyond_ten_percent_fails(self):
        result = trace_compare.compare(training("profagent", scale=1.12), training("torch"))
        self.assertFalse(result.passed)
        self.assertTrue(all("kernel time" in p and "ratio 1.120" in p for p in result.problems), result.problems)
        self.assertEqual(len(result.problems), 3)
        within = trace_compare.compare(training("profagent", scale=0.91), training("torch"))
        self.assertTrue(within.passed, within.problems)

    def test_an_unlinked_kernel_fails(self):
        result = trace_compare.compare(training("profagent", unlinked=True), training("torch"))
        self.assertFalse(result.passed)
        self.assertTrue(any("is not linked to a launch" in p for p in result.problems), result.problems)

    def test_other_step_numbers_fail(self):
        result = trace_compare.compare(training("profagent", steps=(11, 12, 13)), training("torch"))
        self.assertFalse(result.passed)
        self.assertIn("recorded steps differ: ours [11, 12, 13], reference [12, 13, 14]", result.problems)
        self.assertEqual(len(result.rows), 3)  # still compared in order, and reported
        self.assertEqual(len(result.problems), 1)

    def test_a_trace_without_steps_fails(self):
        ours = training("profagent")
        ours["traceEvents"] = [e for e in ours["traceEvents"] if not str(e.get("name")).startswith("ProfilerStep")]
        result = trace_compare.compare(ours, training("torch"))
        self.assertIn("profagent's trace has no ProfilerStep#N annotation", result.problems)

    def test_work_belongs_to_the_step_of_its_launch(self):
        """The driver-launched gemm of step 13 starts on the device after step 13 ended on the
        host: it is counted in step 13 (its launch), not in step 14 (its start)."""
        view = trace_compare.StepView(training("torch"))
        gemm = [e for e in view.device if "gemm" in e["name"]][0]
        self.assertGreaterEqual(trace_compare.ns(gemm["ts"]), view.steps[1][2])  # after step 13's end
        self.assertEqual(view.step_of(gemm), 13)
        self.assertEqual(sum(view.kernels(13).values()), 4)
        self.assertEqual(sum(view.kernels(14).values()), 3)

    def test_copies_are_noted_not_failed(self):
        ours = training("profagent")
        for e in ours["traceEvents"]:
            if e.get("cat") == "gpu_memcpy":
                e["name"] = "Memcpy HtoD (Pageable -> Device)"
        result = trace_compare.compare(ours, training("torch"))
        self.assertTrue(result.passed, result.problems)
        self.assertEqual(len(result.notes), 6)

    def test_operators_compared_only_when_present(self):
        self.assertIsNone(trace_compare.compare(training("profagent"), training("torch")).operators)
        attributed = trace_compare.compare(training("profagent", operators=True), training("torch"))
        self.assertEqual(attributed.operators, [])
        stray = training("profagent", operators=True)
        next(e for e in stray["traceEvents"] if e.get("cat") == "kernel")["args"]["External id"] = 1
        result = trace_compare.compare(stray, training("torch"))
        self.assertEqual(len(result.operators), 2)
        self.assertIn("attributed to no operator", result.operators[0])

    def test_operators_per_step_compared_by_name_and_count(self):
        ours = training("profagent", operators=True)
        extra = copy.deepcopy(next(e for e in ours["traceEvents"] if e.get("cat") == "cpu_op"))
        extra["name"] = "aten::extra"
        ours["traceEvents"].append(extra)
        renamed = next(e for e in reversed(ours["traceEvents"]) if e.get("name") == "aten::op")
        renamed["name"] = "aten::renamed"
        result = trace_compare.compare(ours, training("torch"))
        self.assertEqual(result.operators, ["step 12: operator aten::extra: ours 1, reference 0",
                                            "step 14: operator aten::op: ours 2, reference 3",
                                            "step 14: operator aten::renamed: ours 1, reference 0"])


class LoadTest(unittest.TestCase):
    def test_json_gz_and_bare_arrays_load(self):
        document = training("torch")
        with tempfile.TemporaryDirectory() as folder:
            gz = os.path.join(folder, "t.pt.trace.json.gz")
            with gzip.open(gz, "wt", encoding="utf-8") as f:
                json.dump(document, f)
            array = os.path.join(folder, "array.json")
            with open(array, "w") as f:
                json.dump(document["traceEvents"], f)
            for path in (gz, array):
                self.assertTrue(trace_compare.compare(trace_compare.load(path), document).passed, path)

    def test_command_line_exit_status(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace_compare.py")
        with tempfile.TemporaryDirectory() as folder:
            paths = {}
            for name, document in (("ours", training("profagent", skip=(12, 0))), ("good", training("profagent")),
                                   ("torch", training("torch"))):
                paths[name] = os.path.join(folder, name + ".json")
                with open(paths[name], "w") as f:
                    json.dump(document, f)
            failing = subprocess.run([sys.executable, script, paths["ours"], paths["torch"]], capture_output=True, text=True)
            passing = subprocess.run([sys.executable, script, paths["good"], paths["torch"]], capture_output=True, text=True)
        self.assertEqual(failing.returncode, 1)
        self.assertIn("FAIL ", failing.stdout)
        self.assertEqual(passing.returncode, 0)
        self.assertIn("PASS 3 steps, 10 kernels", passing.stdout)


if __name__ == "__main__":
    unittest.main()
