"""The dicebench_cuda extension module from Python (harness/timing/README.md): it imports without a
GPU or a driver, summarize_kernels gives the breakdown and the candidate's share, and Recorder()
either works (a GPU is visible) or raises RuntimeError with CUPTI's message (none is)."""

import unittest

import dicebench_cuda


def kernel(name, start, end, grid=(1, 1, 1), block=(32, 1, 1), mangled=None):
    k = {"name": name, "start_ns": start, "end_ns": end, "grid": list(grid), "block": list(block)}
    if mangled is not None:
        k["mangled"] = mangled
    return k


class SummarizeKernelsTest(unittest.TestCase):
    def test_breakdown_and_share(self):
        kernels = [
            kernel("add(float*, float*, int)", 300, 350, (4, 1, 1), mangled="_Z3addPfS_i"),
            kernel("add(float*, float*, int)", 100, 130, (2, 1, 1), mangled="_Z3addPfS_i"),
            kernel("at_kernel", 200, 400, (8, 8, 1), (16, 16, 1)),
        ]
        summary = dicebench_cuda.summarize_kernels(kernels, {"_Z3addPfS_i"})
        self.assertAlmostEqual(summary["kernel_ms"], 280e-6)
        self.assertAlmostEqual(summary["candidate_ms"], 80e-6)
        self.assertEqual(summary["candidate_launches"], 2)
        self.assertAlmostEqual(summary["candidate_share"], 80 / 280)
        groups = summary["kernels"]
        self.assertEqual([g["name"] for g in groups], ["at_kernel", "add(float*, float*, int)"])
        self.assertEqual(groups[0]["block"], [16, 16, 1])
        self.assertEqual(groups[1]["launches"], 2)
        self.assertAlmostEqual(groups[1]["total_ms"], 80e-6)
        self.assertEqual(groups[1]["grid"], [2, 1, 1])  # the earliest launch's

    def test_torch_only_candidate_has_share_zero(self):
        summary = dicebench_cuda.summarize_kernels([kernel("at_kernel", 0, 10)], ["my_kernel"])
        self.assertEqual(summary["candidate_share"], 0.0)
        empty = dicebench_cuda.summarize_kernels([])
        self.assertEqual(empty["kernels"], [])
        self.assertEqual(empty["candidate_share"], 0.0)

    def test_bad_input(self):
        with self.assertRaises(TypeError):
            dicebench_cuda.summarize_kernels([("not", "a", "dict")])
        with self.assertRaises(KeyError):
            dicebench_cuda.summarize_kernels([{"name": "k"}])
        with self.assertRaises(ValueError):
            dicebench_cuda.summarize_kernels([kernel("k", 0, 1, grid=(1, 1))])

    def test_demangle(self):
        self.assertEqual(dicebench_cuda.demangle("_Z10add_kernelPKfPfi"), "add_kernel(float const*, float*, int)")
        self.assertEqual(dicebench_cuda.demangle("my_kernel"), "my_kernel")


class RecorderTest(unittest.TestCase):
    def test_recorder_works_or_says_why_not(self):
        try:
            recorder = dicebench_cuda.Recorder()
        except RuntimeError as error:  # no GPU / driver here
            self.assertIn("dicebench_cuda:", str(error))
            self.assertIn("CUPTI", str(error))
            # a second try gives the same answer rather than a half-made recorder
            with self.assertRaises(RuntimeError):
                dicebench_cuda.Recorder()
            return
        start = recorder.begin()
        self.assertTrue(recorder.in_call)
        result = recorder.end()
        self.assertEqual(result["begin_ns"], start)
        for key in ("runtime_ms", "span_ms", "busy_ms", "host_ms", "call_host_ms", "launch_latency_ms", "kernels",
                    "memcpy", "memset", "dropped"):
            self.assertIn(key, result)
        self.assertFalse(result["device_work"])
        self.assertEqual(result["span_ms"], result["host_ms"])
        self.assertEqual(result["busy_ms"], 0.0)
        # begin() inside an open call keeps its start and makes end() fail
        first = recorder.begin()
        self.assertEqual(recorder.begin(), first)
        with self.assertRaises(RuntimeError):
            recorder.end()
        self.assertFalse(recorder.in_call)
        with self.assertRaises(RuntimeError):
            recorder.end()


if __name__ == "__main__":
    unittest.main()
