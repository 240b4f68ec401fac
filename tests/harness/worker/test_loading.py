"""Loading programs into fresh modules (loading.py), seeding (seeding.py), numerics (numerics.py)."""

import inspect
import os
import random
import shutil
import sys
import tempfile
import textwrap
import traceback
import unittest

import numpy
import torch

from dicebench_harness import loading, numerics, seeding

PROGRAM = textwrap.dedent('''
    import dataclasses
    import sys
    import torch
    import torch.nn as nn

    assert sys.modules[__name__].__dict__ is globals(), "registered while executing"

    @dataclasses.dataclass
    class Settings:
        scale: float = 2.0

    def helper(x):
        return x * Settings().scale

    class Model(nn.Module):
        def forward(self, x):
            return helper(x)

    def get_inputs():
        return [torch.ones(2)]

    def get_init_inputs():
        return []

    def fails():
        raise ValueError("from line 26")

    if __name__ == "__main__":
        raise SystemExit("main block must not run")
''')


class LoadingTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="dicebench-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_program_loads_into_a_registered_module_with_a_real_file(self):
        module = loading.load_program(PROGRAM, kind="problem", name_hint="19_ReLU/x",
                                      directory=self.dir)
        try:
            self.assertIn(module.__name__, sys.modules)
            self.assertNotEqual(module.__name__, "__main__")
            self.assertTrue(module.__file__.startswith(self.dir))
            with open(module.__file__, encoding="utf-8") as handle:
                self.assertEqual(handle.read(), PROGRAM)
            self.assertEqual(os.stat(module.__file__).st_mode & 0o777, 0o600)
            self.assertIn("return x * Settings().scale", inspect.getsource(module.helper))
            model = loading.find_model_class(module, "Model")()
            self.assertEqual(model(torch.ones(2)).tolist(), [2.0, 2.0])
            try:
                module.fails()
            except ValueError as error:
                text = "".join(traceback.format_exception(error))
                self.assertIn(module.__file__, text)
                self.assertIn('raise ValueError("from line 26")', text)
        finally:
            loading.unload_program(module)
        self.assertNotIn(module.__name__, sys.modules)

    def test_two_loads_are_separate_modules(self):
        first = loading.load_program("x = 1", kind="candidate", name_hint="j", directory=self.dir)
        second = loading.load_program("x = 2", kind="candidate", name_hint="j", directory=self.dir)
        self.assertNotEqual(first.__name__, second.__name__)
        self.assertEqual((first.x, second.x), (1, 2))
        loading.unload_program(first)
        loading.unload_program(second)

    def test_failures_propagate_and_unregister(self):
        with self.assertRaises(SyntaxError):
            loading.load_program("def f(:\n", kind="candidate", name_hint="s", directory=self.dir)
        before = set(sys.modules)
        with self.assertRaises(SystemExit):
            loading.load_program("raise SystemExit(3)", kind="candidate", name_hint="e",
                                 directory=self.dir)
        self.assertEqual(set(sys.modules), before)

    def test_a_problem_source_runs_first_in_the_same_namespace_from_its_own_file(self):
        candidate = textwrap.dedent('''
            class ModelNew(Model):
                pass

            def fails():
                raise KeyError("candidate line 6")

            own = helper(3)
        ''')
        module = loading.load_program(candidate, kind="candidate", name_hint="c", directory=self.dir,
                                      problem_source=PROGRAM + "ModelNew = 'from the problem'\n")
        try:
            self.assertTrue(issubclass(module.ModelNew, module.Model))
            self.assertEqual(module.own, 6.0)  # the problem's helper, run from the candidate's code
            self.assertIs(sys.modules[module.__name__], module)
            self.assertEqual(module.__file__, os.path.join(self.dir, os.path.basename(module.__file__)))
            with open(module.__file__, encoding="utf-8") as handle:
                self.assertEqual(handle.read(), candidate)
            # Each source's frames name its own file; the candidate's fails overrides the problem's.
            try:
                module.fails()
            except KeyError as error:
                self.assertIn(module.__file__, "".join(traceback.format_exception(error)))
            else:
                self.fail("the candidate's fails() returned")
            problem_file = module.Model.forward.__code__.co_filename
            self.assertNotEqual(problem_file, module.__file__)
            self.assertTrue(os.path.basename(problem_file).startswith("problem_c_"), problem_file)
            with open(problem_file, encoding="utf-8") as handle:
                self.assertTrue(handle.read().startswith(PROGRAM))
        finally:
            loading.unload_program(module)
        # The problem's ModelNew never reaches the candidate: one without its own has none.
        module = loading.load_program("x = 1\n", kind="candidate", name_hint="c", directory=self.dir,
                                      problem_source="ModelNew = 3\nModel = 4\n")
        self.assertEqual((module.Model, getattr(module, "ModelNew", None)), (4, None))
        loading.unload_program(module)

    def test_a_problem_source_that_raises_is_told_apart_and_the_candidate_never_runs(self):
        before = set(sys.modules)
        marker = os.path.join(self.dir, "ran")
        for problem in ("raise ValueError('problem')\n", "def f(:\n", "raise SystemExit(2)\n"):
            with self.subTest(problem=problem):
                with self.assertRaises(loading.ProblemSourceError) as raised:
                    loading.load_program(f"open({marker!r}, 'w').close()\n", kind="candidate", name_hint="c",
                                         directory=self.dir, problem_source=problem)
                cause = raised.exception.__cause__
                self.assertIsInstance(cause, (ValueError, SyntaxError, SystemExit))
                self.assertIn(os.path.join(self.dir, "problem_c_"), "".join(traceback.format_exception(cause)))
        self.assertFalse(os.path.exists(marker))
        self.assertEqual(set(sys.modules), before)
        # The candidate's own syntax error stays its own.
        with self.assertRaises(SyntaxError):
            loading.load_program("def f(:\n", kind="candidate", name_hint="c", directory=self.dir,
                                 problem_source="x = 1\n")

    def test_missing_names_give_clear_errors(self):
        module = loading.load_program("Model = 3\nclass Plain:\n    pass\nget_inputs = 5\n",
                                      kind="problem", name_hint="p", directory=self.dir)
        with self.assertRaisesRegex(loading.ProgramError, "Model in the problem is a int, not a class"):
            loading.find_model_class(module, "Model")
        with self.assertRaisesRegex(loading.ProgramError, "the candidate defines no class ModelNew"):
            loading.find_model_class(module, "ModelNew")
        module.ModelNew = module.Plain
        with self.assertRaisesRegex(loading.ProgramError, "not a subclass of torch.nn.Module"):
            loading.find_model_class(module, "ModelNew")
        with self.assertRaisesRegex(loading.ProgramError, "defines no function get_init_inputs"):
            loading.find_function(module, "get_init_inputs")
        with self.assertRaisesRegex(loading.ProgramError, "get_inputs in the problem is a int"):
            loading.find_function(module, "get_inputs")
        loading.unload_program(module)


class SeedingTest(unittest.TestCase):
    def draw(self):
        return (random.random(), float(numpy.random.rand()), torch.randn(3).tolist())

    def test_same_seed_same_draws(self):
        seeding.seed_everything(1234)
        first = self.draw()
        seeding.seed_everything(1234)
        self.assertEqual(first, self.draw())
        seeding.seed_everything(1235)
        self.assertNotEqual(first, self.draw())

    def test_large_seeds(self):
        seeding.seed_everything(2**63 - 1)
        first = self.draw()
        seeding.seed_everything(2**63 - 1)
        self.assertEqual(first, self.draw())

    def test_the_generators_end_as_torch_manual_seed_leaves_them(self):
        seeding.seed_everything(977)
        ours = (torch.get_rng_state(), torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None)
        torch.rand(5)
        torch.manual_seed(977)
        theirs = (torch.get_rng_state(), torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None)
        self.assertTrue(torch.equal(ours[0], theirs[0]))
        if ours[1] is not None:
            self.assertTrue(all(torch.equal(a, b) for a, b in zip(ours[1], theirs[1])))

    def test_seeding_formats_no_stack(self):
        # It runs once per timed call: torch.manual_seed's lazy seeding of backends not initialised
        # formats the caller's stack for each, most of the reference's time per call on the CPU.
        formatted = []
        real = traceback.format_stack
        traceback.format_stack = lambda *a, **k: formatted.append(1) or real(*a, **k)
        try:
            for seed in range(3):
                seeding.seed_everything(seed)
        finally:
            traceback.format_stack = real
        # Only CUDA present and not yet initialised queues (torch replays the seed when it starts).
        queued = torch.cuda.is_available() and not torch.cuda.is_initialized()
        self.assertEqual(len(formatted), 3 if queued else 0)

    def test_bad_seeds(self):
        for seed in (-1, 1.5, True, "3"):
            with self.assertRaises(ValueError):
                seeding.seed_everything(seed)


class NumericsTest(unittest.TestCase):
    def tearDown(self):
        numerics.apply_numerics()
        torch.set_grad_enabled(True)

    def test_apply_undoes_flips(self):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.deterministic = not numerics.CUDNN_DETERMINISTIC
        torch.set_float32_matmul_precision("medium")
        torch.set_default_dtype(torch.float64)
        torch.set_grad_enabled(True)
        numerics.apply_numerics()
        self.assertEqual(numerics.current_numerics(), {
            "cuda_matmul_allow_tf32": False,
            "cudnn_allow_tf32": False,
            "float32_matmul_precision": "highest",
            "cudnn_benchmark": False,
            "cudnn_deterministic": numerics.CUDNN_DETERMINISTIC,
            "default_dtype": "torch.float32",
            "grad_enabled": False,
        })

    def test_harness_call_disables_grad(self):
        torch.set_grad_enabled(True)
        weight = torch.ones(2, requires_grad=True)
        with numerics.harness_call():
            self.assertFalse((weight * 2).requires_grad)
            self.assertEqual(torch.get_default_dtype(), torch.float32)


if __name__ == "__main__":
    unittest.main()
