"""evaluate() on the CPU through the real workers: the same verdicts as `dicebench eval` for a
correct, a wrong, a raising, a crashing and a non-candidate, the cache, four threads at once, a
hostile candidate that leaves the caller alive, and a problem that never returns."""

import concurrent.futures
import os
import tempfile
import time
import unittest

import dicebench
from support import EVAL, NOT_A_CANDIDATE, PROBLEM, eval_json, read


class SameVerdictsAsEval(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.evaluator = dicebench.Evaluator("cpu", workers=1)
        cls.problem = read(PROBLEM)

    @classmethod
    def tearDownClass(cls):
        cls.evaluator.close()

    def compare(self, name: str, verdict: str):
        path = os.path.join(EVAL, name)
        expected = eval_json(PROBLEM, path)
        got = self.evaluator.evaluate(self.problem, read(path))
        self.assertEqual(expected["verdict"], verdict)
        self.assertEqual(got.verdict, verdict)
        for field in ("compiled", "correct", "failed_trial", "error_class"):
            self.assertEqual(got.to_dict()[field], expected[field], field)
        self.assertEqual(set(got.to_dict()), set(expected) | {"cached"})
        return got, expected

    def test_correct(self):
        got, _ = self.compare("correct.py", "correct")
        self.assertTrue(got.correct and got.compiled)
        self.assertGreater(got.runtime.median_ms, 0)
        self.assertAlmostEqual(got.speedup, got.baseline.median_ms / got.runtime.median_ms)
        self.assertLess(got.max_abs_diff, 1e-5)
        self.assertEqual(got.compile_path, "none")

    def test_wrong(self):
        got, expected = self.compare("off_by_1e3.py", "output_mismatch")
        self.assertEqual(got.failed_trial, 0)
        self.assertAlmostEqual(got.max_abs_diff, expected["max_abs_diff"], delta=1e-5)

    def test_raises(self):
        got, _ = self.compare("raises.py", "runtime_error")
        self.assertIn("this kernel is not finished", got.error_message)

    def test_crash_is_a_verdict(self):
        got, _ = self.compare("aborts.py", "crashed")
        self.assertIn("SIGABRT", got.error_message)

    def test_not_a_candidate_is_the_verdict_eval_gives(self):
        # What is not a candidate (not Python, no ModelNew, empty) is judged as eval judges it, alone
        # and in a batch, where the other items keep their verdicts.
        cases = (("syntax_error.py", read(os.path.join(EVAL, "syntax_error.py")), "compile_failed"),
                 ("no_model_new.py", NOT_A_CANDIDATE, "runtime_error"), ("empty.py", "", None))
        for name, source, verdict in cases:
            with tempfile.NamedTemporaryFile("w", suffix=".py") as f:
                f.write(source)
                f.flush()
                expected = eval_json(PROBLEM, f.name)
            if verdict:
                self.assertEqual(expected["verdict"], verdict, name)
            self.assertFalse(expected["correct"])
            self.assertEqual(self.evaluator.evaluate(self.problem, source).verdict, expected["verdict"], name)
        batch = self.evaluator.evaluate(self.problem, [read(os.path.join(EVAL, "correct.py")), "x = (", NOT_A_CANDIDATE])
        self.assertEqual([e.verdict for e in batch], ["correct", "compile_failed", "runtime_error"])

    def test_problem_that_fails_is_an_error_and_the_evaluator_goes_on(self):
        broken = self.problem.replace("return [torch.randn(16, 32)]", "raise RuntimeError('no inputs today')")
        self.assertNotEqual(broken, self.problem)
        with self.assertRaises(dicebench.ProblemError) as raised:
            self.evaluator.evaluate(broken, read(os.path.join(EVAL, "correct.py")))
        self.assertIn("no inputs today", str(raised.exception))
        # In a batch, every item is judged first and each judgement rides with the error.
        with self.assertRaises(dicebench.ProblemError) as raised:
            self.evaluator.evaluate([broken, self.problem], [read(os.path.join(EVAL, "correct.py"))] * 2)
        self.assertIn("item 0 of the batch", str(raised.exception))
        statuses = [j.status for j in raised.exception.judgements]  # type: ignore[attr-defined]
        self.assertEqual(statuses, ["problem_failed", "judged"])
        self.assertEqual(self.evaluator.evaluate(self.problem, read(os.path.join(EVAL, "wrong_dtype.py"))).verdict,
                         "dtype_mismatch")

    def test_cached_result_returns_at_once(self):
        source = read(os.path.join(EVAL, "wrong_shape.py"))
        first = self.evaluator.evaluate(self.problem, source)
        started = time.perf_counter()
        again = self.evaluator.evaluate(self.problem, source)
        elapsed = time.perf_counter() - started
        self.assertFalse(first.cached)
        self.assertTrue(again.cached)
        self.assertEqual(again.verdict, first.verdict)
        self.assertEqual(again.seconds, first.seconds)  # the stored result, not a new evaluation
        self.assertLess(elapsed, 0.05)


class ManyThreads(unittest.TestCase):
    def test_four_threads_at_once(self):
        problem = read(PROBLEM)
        # Distinct sources (no cache hits): each is a real evaluation.
        cases = [("correct.py", "correct"), ("off_by_1e3.py", "output_mismatch"), ("raises.py", "runtime_error"),
                 ("hangs.py", "timeout"), ("correct.py", "correct"), ("wrong_dtype.py", "dtype_mismatch"),
                 ("aborts.py", "crashed"), ("nan_output.py", "output_mismatch")]
        jobs = [(read(os.path.join(EVAL, name)) + f"\n# {i}\n", verdict) for i, (name, verdict) in enumerate(cases)]
        with dicebench.Evaluator("cpu", workers=2, timeout=5) as evaluator:
            self.assertEqual(evaluator.size, 2)
            with concurrent.futures.ThreadPoolExecutor(4) as pool:
                results = list(pool.map(lambda job: evaluator.evaluate(problem, job[0]), jobs))
        self.assertEqual([r.verdict for r in results], [verdict for _, verdict in jobs])
        self.assertFalse(any(r.cached for r in results))

    def test_shared_evaluator_of_evaluate(self):
        problem, source = read(PROBLEM), read(os.path.join(EVAL, "mutates_inputs.py"))
        first = dicebench.evaluate(problem, source, device="cpu", workers=1)
        second = dicebench.evaluate(problem, source, device="cpu", workers=1)
        self.assertEqual(first.verdict, "correct")
        self.assertTrue(second.cached)


class ProblemsThatHang(unittest.TestCase):
    def test_a_problem_that_never_returns_holds_the_caller_no_longer_than_a_candidate_would(self):
        # The reference's requests get the longer of the candidate's two limits (a fixed 10 minutes before).
        hangs = "import time\nwhile True:\n    time.sleep(0.1)\n" + read(PROBLEM)
        started = time.perf_counter()
        with dicebench.Evaluator("cpu", workers=1, spares=0, timeout=5, compile_timeout=5) as evaluator:
            with self.assertRaises(dicebench.Error) as raised:
                evaluator.evaluate(hangs, read(os.path.join(EVAL, "correct.py")))
        self.assertIn("no reply within 5.0 s", str(raised.exception))
        self.assertLess(time.perf_counter() - started, 60)


if __name__ == "__main__":
    unittest.main()
