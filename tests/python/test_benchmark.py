"""The evaluate() benchmarks run on the CPU on small problems and report what they measured: the
throughput one (tools/perf/evaluate_throughput.py) the verdicts of every call and its
figures, the session parity one (session_parity.py) evaluate()'s batch beside `dicebench run` on
the same candidates, with the same verdicts."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from support import KERNELBENCH

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "perf", "evaluate_throughput.py")
PARITY = os.path.join(HERE, "..", "..", "tools", "perf", "session_parity.py")


class ThroughputBenchmark(unittest.TestCase):
    def test_runs_on_the_cpu(self):
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "throughput.json")
            done = subprocess.run([sys.executable, SCRIPT, "--kernelbench-root", KERNELBENCH, "--candidates",
                                   os.path.join(HERE, "candidates"), "--device", "cpu", "--passes", "1", "--threads", "2",
                                   "--workers", "2", "--json", out], capture_output=True, text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(out) as f:
                result = json.load(f)
        summary = result["summary"]
        self.assertEqual(summary["candidates"], 3)
        self.assertEqual(summary["verdicts"], {"correct": 2, "output_mismatch": 1})
        self.assertGreater(summary["candidates_per_minute"], 0)
        self.assertLess(summary["cached_latency_p50_us"], 50_000)
        self.assertIn("candidates/min", done.stdout)
        verdicts = {(c["candidate"], c["verdict"]) for c in result["calls"]}
        self.assertIn(("level_1_problem_2_sample_0_kernel.py", "output_mismatch"), verdicts)


class SessionParityBenchmark(unittest.TestCase):
    def test_runs_on_the_cpu(self):
        with tempfile.TemporaryDirectory() as folder:
            out = os.path.join(folder, "parity.json")
            done = subprocess.run([sys.executable, PARITY, "--kernelbench-root", KERNELBENCH, "--candidates",
                                   os.path.join(HERE, "candidates"), "--count", "5", "--device", "cpu", "--workers", "2",
                                   "--json", out], capture_output=True, text=True, timeout=600)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(out) as f:
                result = json.load(f)
        self.assertEqual(result["candidates"], 5)
        self.assertEqual(result["verdicts_agreeing"], 5)
        self.assertEqual(result["evaluate"]["evaluators_started"], 2)  # once, for both batches
        self.assertGreater(result["ratio"], 0)
        self.assertIn("evaluate() / run per candidate", done.stdout)


if __name__ == "__main__":
    unittest.main()
