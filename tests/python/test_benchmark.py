"""The evaluate() throughput benchmark (tools/benchmarks/evaluate_throughput.py) runs on the
CPU on small problems and reports what it measured: verdicts of every call and its figures."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from support import KERNELBENCH

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "tools", "benchmarks", "evaluate_throughput.py")


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


if __name__ == "__main__":
    unittest.main()
