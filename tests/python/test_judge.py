"""Evaluator.judge(), as a reinforcement-learning trainer uses it, on the CPU through the real
workers: every item of a batch gets exactly one judgement (a candidate's failure of any kind is its
verdict, a problem's failure its own status), raw completions go through the suite's extraction and
review, problems come as sources or suite ids, and rewards come from the spec's shapes. A batch of
64 with every failure kind gets the verdicts `dicebench run` gives the same pairs."""

import os
import sqlite3
import tempfile
import unittest

import dicebench
from support import DATA, EVAL, KERNELBENCH, NOT_A_CANDIDATE, PROBLEM, cli, read

BUDGET = 0.3  # seconds of timing per call site: these tests compare verdicts and rewards, not times
TIMEOUT = 6.0  # a hang costs this much
SUITE = {"kernelbench.root": KERNELBENCH}
# Rewards are checked on answers in the language the prompt asked for (Triton runs on the CPU
# through its interpreter): a plain-PyTorch answer is flagged backend_unused, which zeroes a reward.
TRITON = {**SUITE, "kernelbench.backend": "triton"}
ADD = "kernelbench/level1/1"
TRITON_ADD = read(os.path.join(DATA, "replay", "triton", "level_1_problem_1_sample_0_kernel.py"))
TRITON_ADD_WRONG = TRITON_ADD.replace("+ tl.load(y_ptr", "- tl.load(y_ptr")
TRITON_RELU_SQUARE = """import torch
import triton
import triton.language as tl


@triton.jit
def relu_square(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.maximum(tl.load(x_ptr + offsets, mask=mask), 0.0)
    tl.store(out_ptr + offsets, x * x, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        relu_square[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        return out
"""

# ModelNew bodies by what they make of each fixture problem's answer (its forward's inputs are xs).
ANSWERS = {1: "xs[0] + xs[1]", 2: "torch.relu(xs[0]) ** 2"}
KINDS = {
    "correct": "return {answer}",
    "output_mismatch": "return {answer} + 1.0",
    "shape_mismatch": "return ({answer}).unsqueeze(0)",
    "dtype_mismatch": "return ({answer}).double()",
    "runtime_error": "raise RuntimeError('not today')",
    "crashed": "os.abort()",
    "timeout": "while True:\n            pass",
}


def candidate(kind: str, problem: int) -> str:
    if kind == "compile_failed":
        return "import torch\n\nclass ModelNew(torch.nn.Module)\n    pass\n"
    if kind == "no_model_new":
        return NOT_A_CANDIDATE
    body = KINDS[kind].format(answer=ANSWERS[problem])
    return ("import os\nimport torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
            "    def __init__(self, *args):\n        super().__init__()\n\n"
            f"    def forward(self, *xs):\n        {body}\n")


def completion(code: str, note: int) -> str:
    """What a policy writes: prose around one fenced block."""
    return f"Here is attempt {note}, a fused version.\n\n```python\n{code}```\n\nIt should be faster than eager.\n"


class EveryItemJudged(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.evaluator = dicebench.Evaluator("cpu", workers=2, suite="kernelbench-l1", config=TRITON,
                                            timing_budget=BUDGET, timeout=TIMEOUT)

    @classmethod
    def tearDownClass(cls):
        cls.evaluator.close()

    def test_a_malformed_completion_costs_only_its_own_reward(self):
        good = [completion(TRITON_ADD, i) for i in range(7)]
        batch = good[:3] + [completion("def broken(:\n", 3)] + good[3:]
        judged = self.evaluator.judge(ADD, batch, reward="correctness")
        self.assertEqual(len(judged), 8)
        self.assertEqual([j.status for j in judged], ["judged"] * 8, [j.error for j in judged])
        self.assertEqual([j.evaluation.verdict for j in judged], ["correct"] * 3 + ["compile_failed"] + ["correct"] * 4)
        self.assertEqual([j.reward for j in judged], [1.0] * 3 + [0.0] + [1.0] * 4)
        # The same code (the prose around it aside) for the same problem is judged once: each of those
        # items has that one evaluation, its timings included (seven runs would differ in them).
        details = [j.evaluation.details for j in judged[:3] + judged[4:]]
        self.assertTrue(all(d == details[0] for d in details), [d.get("phases") for d in details])
        # The record keeps what the policy wrote and the code judged.
        self.assertEqual(judged[0].completion, batch[0])
        self.assertEqual(judged[0].candidate, TRITON_ADD.strip())  # the block's text, as extraction strips it
        self.assertEqual((judged[0].reward_shape, judged[0].reward_params), ("correctness", {"zscore": 0.0, "eps": 0.0}))

    def test_raw_completions_problems_by_id_or_source(self):
        source = read(os.path.join(KERNELBENCH, "level1", "1_Add.py"))
        code = TRITON_ADD
        judged = self.evaluator.judge([ADD, source, ADD, read(PROBLEM)], [completion(code, 0), completion(code, 1),
                                                                    "I cannot write this kernel.", completion(code, 2)],
                                      ids=["a", "b", "c", "d"])
        self.assertEqual([j.id for j in judged], ["a", "b", "c", "d"])
        self.assertEqual(judged[0].problem, ADD)
        self.assertTrue(judged[1].problem.startswith("sha256:"))
        self.assertEqual([j.evaluation.verdict for j in judged[:2]], ["correct", "correct"])
        # No code block: judged extraction_failed, as `run` stores it, with nothing judged.
        self.assertEqual((judged[2].status, judged[2].evaluation.verdict, judged[2].candidate),
                         ("judged", "extraction_failed", None))
        # A problem from elsewhere (not the suite's) is judged too: Linear+ReLU against an adder.
        self.assertEqual(judged[3].status, "judged", judged[3].error)
        self.assertNotEqual(judged[3].evaluation.verdict, "correct")

    def test_a_problem_that_cannot_be_used_is_its_items_status(self):
        broken = read(PROBLEM).replace("return [torch.randn(16, 32)]", "raise RuntimeError('no inputs today')")
        judged = self.evaluator.judge([broken, "kernelbench/level1/99", "kernelbench/level3/1", ADD],
                                      [read(os.path.join(EVAL, "correct.py"))] * 3 + [candidate("correct", 1)],
                                      completions=False)
        self.assertEqual([j.status for j in judged], ["problem_failed", "problem_failed", "problem_failed", "judged"])
        self.assertIn("no inputs today", judged[0].error)
        self.assertIn("has no problem kernelbench/level1/99", judged[1].error)
        self.assertEqual([j.reward for j in judged], [None] * 4)  # none asked for
        self.assertIsNone(judged[0].evaluation)

    def test_the_callers_own_mistakes_raise(self):
        with self.assertRaises(dicebench.Error) as raised:
            self.evaluator.judge(ADD, ["x"], reward="fastest")
        self.assertIn("no reward shape", str(raised.exception))
        with self.assertRaises(dicebench.Error) as raised:
            self.evaluator.judge(ADD, ["x"], reward="speedup", weight=2.0)
        self.assertIn("takes no parameter", str(raised.exception))
        with self.assertRaises(ValueError):
            self.evaluator.judge([ADD, ADD], ["x"])
        with dicebench.Evaluator("cpu", workers=1) as without_suite:
            with self.assertRaises(dicebench.Error) as raised:
                without_suite.judge(read(PROBLEM), ["```python\nx = 1\n```"])
            self.assertIn("need a suite", str(raised.exception))


class Rewards(unittest.TestCase):
    def test_shapes_flags_and_groups(self):
        codes = [TRITON_ADD, TRITON_ADD_WRONG, TRITON_ADD, TRITON_RELU_SQUARE]
        problems = [ADD, ADD, ADD, "kernelbench/level1/2"]
        with dicebench.Evaluator("cpu", workers=2, suite="kernelbench-l1", config=TRITON, timing_budget=BUDGET) as ev:
            plus = ev.judge(problems, codes, completions=False, reward="correct_plus_speedup", correct_weight=0.5)
            self.assertEqual([j.evaluation.verdict for j in plus], ["correct", "output_mismatch", "correct", "correct"])
            for j in (plus[0], plus[2], plus[3]):
                self.assertAlmostEqual(j.reward, 0.5 + min(j.evaluation.speedup, 10.0))
            self.assertEqual(plus[1].reward, 0.0)
            self.assertEqual(plus[0].reward_params, {"correct_weight": 0.5, "speedup_weight": 1.0, "cap": 10.0})
            # DICE's z-score within each problem's group: population std; a group all alike gets 0.
            z = ev.judge(problems, codes, completions=False, reward="correctness", zscore=1)
            self.assertAlmostEqual(z[0].reward, (1 - 2 / 3) / (2 ** 0.5 / 3))
            self.assertAlmostEqual(z[1].reward, (0 - 2 / 3) / (2 ** 0.5 / 3))
            self.assertEqual(z[3].reward, 0.0)
            logs = ev.judge(problems, codes, completions=False, reward="log_speedup")
            self.assertEqual(logs[1].reward, -2.0)
            self.assertTrue(-1.0 <= logs[0].reward <= 3.0)
        # Correctness only (DICE's reward: one trial, nothing timed): no runtime, baseline or speedup,
        # and a shape that needs the speedup is the caller's mistake.
        with dicebench.Evaluator("cpu", workers=2, suite="kernelbench-l1", config=TRITON, trials=1, timing=False) as ev:
            fast = ev.judge(problems, codes, completions=False, reward="correctness")
            self.assertEqual([j.reward for j in fast], [1.0, 0.0, 1.0, 1.0])
            self.assertEqual([j.evaluation.speedup for j in fast], [None] * 4)
            self.assertIsNone(fast[0].evaluation.runtime)
            self.assertNotIn("timing", fast[0].evaluation.details["phases"])
            with self.assertRaises(dicebench.Error) as raised:
                ev.judge(problems, codes, completions=False, reward="speedup")
            self.assertIn("eval.timing=off", str(raised.exception))
        # A hack flag zeroes the reward: a plain-PyTorch answer to a prompt that asked for Triton.
        with dicebench.Evaluator("cpu", workers=1, suite="kernelbench-l1", timing_budget=BUDGET, config=TRITON) as ev:
            [j] = ev.judge(ADD, [candidate("correct", 1)], completions=False, reward="speedup")
        self.assertEqual(j.evaluation.verdict, "correct")
        self.assertIn("backend_unused", j.evaluation.flags)
        self.assertEqual(j.reward, 0.0)


class SameVerdictsAsRun(unittest.TestCase):
    def test_a_batch_of_64_with_every_failure_kind(self):
        kinds = ["correct", "output_mismatch", "shape_mismatch", "dtype_mismatch", "runtime_error", "crashed",
                 "compile_failed", "no_model_new", "no_code_block"]
        items = []  # (problem id, sample, completion)
        for problem in (1, 2):
            samples = [kinds[i % len(kinds)] for i in range(31)] + ["timeout"]
            for sample, kind in enumerate(samples):
                text = (f"attempt {sample}: no code this time" if kind == "no_code_block"
                        else completion(candidate(kind, problem), sample))
                items.append((problem, sample, text))
        self.assertEqual(len(items), 64)
        settings = ("--set", f"eval.timing_budget_s={BUDGET}", "--set", f"eval.timeout_s={TIMEOUT}")
        with tempfile.TemporaryDirectory() as tmp:
            folder = os.path.join(tmp, "replay")
            os.makedirs(folder)
            for problem, sample, text in items:
                with open(os.path.join(folder, f"level_1_problem_{problem}_sample_{sample}.txt"), "w") as f:
                    f.write(text)
            db = os.path.join(tmp, "results.db")
            done = cli("run", "--model", "replay:" + folder, "--suite", "kernelbench-l1", "--kernelbench-root",
                       KERNELBENCH, "--problems", "1,2", "--samples", "32", "--device", "cpu", "--db", db, *settings)
            self.assertEqual(done.returncode, 0, done.stderr)
            with sqlite3.connect(db) as connection:
                by_run = {(p, s): status for p, s, status in connection.execute(
                    "select s.problem_id, s.sample_index, e.status from samples s join evaluations e on e.sample = s.id")}
        with dicebench.Evaluator("cpu", workers=2, suite="kernelbench-l1", config=SUITE, timing_budget=BUDGET,
                                 timeout=TIMEOUT) as ev:
            judged = ev.judge([f"kernelbench/level1/{p}" for p, _, _ in items], [t for _, _, t in items])
        self.assertEqual(len(judged), 64)
        self.assertEqual({j.status for j in judged}, {"judged"})
        by_judge = {(p, s): j.evaluation.verdict for (p, s, _), j in zip(items, judged)}
        self.assertEqual(by_judge, by_run)
        self.assertEqual(set(by_judge.values()), {"correct", "output_mismatch", "shape_mismatch", "dtype_mismatch",
                                                  "runtime_error", "crashed", "compile_failed", "extraction_failed",
                                                  "timeout"})


if __name__ == "__main__":
    unittest.main()
