"""evaluate() on the GPU: the same verdicts as `dicebench eval --device cuda` for a load_inline
candidate, a wrong one and one that faults the device, and the caller unharmed by the fault; an
untimed reward batch on a GPU shared four ways (gpu_slots auto), where a candidate that hangs holds
its own slot only. Exits 77 (skipped) where no GPU is visible."""

import json
import os
import subprocess
import sys
import time
import unittest

import dicebench
from support import EVAL, PROBLEM, cli, read


def gpu_visible() -> bool:
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


class OnTheGpu(unittest.TestCase):
    def test_same_verdicts_as_eval(self):
        problem = read(PROBLEM)
        with dicebench.Evaluator("cuda") as evaluator:
            # A device fault surfaces as an error in the candidate (runtime_error) or kills it (crashed).
            for name, verdicts in (("cuda_relu_inline.py", {"correct"}), ("off_by_1e3.py", {"output_mismatch"}),
                                   ("illegal_address.py", {"runtime_error", "crashed"}), ("correct.py", {"correct"})):
                done = cli("eval", "--problem", PROBLEM, "--candidate", os.path.join(EVAL, name), "--json", "--device", "cuda")
                self.assertEqual(done.returncode, 0, done.stderr)
                expected = json.loads(done.stdout)
                got = evaluator.evaluate(problem, read(os.path.join(EVAL, name)))
                self.assertIn(expected["verdict"], verdicts, expected["error_message"])
                self.assertIn(got.verdict, verdicts, got.error_message)
                self.assertEqual(got.device, "cuda")
            cuda = evaluator.evaluate(problem, read(os.path.join(EVAL, "cuda_relu_inline.py")))
            self.assertTrue(cuda.cached)
            self.assertGreater(cuda.speedup, 0)
            started = time.perf_counter()
            evaluator.evaluate(problem, read(os.path.join(EVAL, "cuda_relu_inline.py")))
            print(f"cached call: {1e6 * (time.perf_counter() - started):.0f} us", file=sys.stderr)

    def test_a_hang_holds_its_own_slot_only(self):
        problem = read(PROBLEM)
        hang, correct = read(os.path.join(EVAL, "hangs.py")), read(os.path.join(EVAL, "cuda_relu_inline.py"))
        # Distinct sources (no cache shares them): the hang first, then eight correct candidates.
        sources = [hang] + [correct + f"\n# response {n}\n" for n in range(8)]
        with dicebench.Evaluator("cuda", timing=False, timeout=30) as evaluator:
            self.assertEqual(evaluator.size, 4)  # gpu_slots auto: four evaluators share the GPU untimed
            judged = evaluator.judge([problem] * len(sources), sources, completions=False, reward="correctness")
        self.assertEqual(judged[0].evaluation.verdict, "timeout")
        for item in judged[1:]:
            self.assertEqual(item.evaluation.verdict, "correct", item.evaluation.error_message)
            # Judged while the hang held its slot, not after its 30 s limit.
            self.assertLess(item.evaluation.details["latency_seconds"], 30, item.evaluation.details["phases"])


if __name__ == "__main__":
    if not gpu_visible():
        print("no GPU visible: skipped", file=sys.stderr)
        sys.exit(77)
    unittest.main()
