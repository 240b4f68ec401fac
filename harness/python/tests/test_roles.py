"""Reference and candidate handlers in this process: verdicts for right, wrong and failing candidates.

Each candidate gets a fresh CandidateRole (a candidate worker serves one candidate.run); the
reference job is prepared once per test class.
"""

import os
import pickle
import shutil
import tempfile
import unittest

import torch

from dicebench_harness import numerics, protocol
from dicebench_harness.candidate import CandidateRole, classify_load_error
from dicebench_harness.errors import HostError
from dicebench_harness.reference import ReferenceRole

from tests import programs

TIMING = {"warmup": 1, "min_trials": 3, "max_trials": 8, "budget_s": 0.5, "target_rel_ci": 0.01}


class RoleTestBase(unittest.TestCase):
    problem = programs.PROBLEM
    tolerance = "kernelbench"
    seeds = [11, 22, 33]

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="dicebench-roles-")
        cls.private = os.path.join(cls.dir, "private")
        os.mkdir(cls.private)
        cls.reference = ReferenceRole("cpu", cls.private)
        cls.prepared = cls.call_reference({
            "type": "reference.prepare", "job": "job", "problem_source": cls.problem,
            "problem_name": "linear_relu", "device": "cpu", "init_seed": 42,
            "input_seeds": cls.seeds, "work_dir": cls.dir, "tolerance": cls.tolerance})
        assert cls.prepared["ok"], cls.prepared
        cls.counter = 0

    @classmethod
    def tearDownClass(cls):
        cls.call_reference({"type": "reference.release", "job": "job"})
        shutil.rmtree(cls.dir, ignore_errors=True)
        numerics.apply_numerics()

    @classmethod
    def call_reference(cls, request):
        checked = protocol.validate_request(request)
        return protocol.validate_reply(cls.reference.handlers()[checked["type"]](checked))

    def run_candidate(self, source, *, timing=None, timed_output_trials=(), job=None):
        type(self).counter += 1
        outputs_dir = os.path.join(self.dir, f"candidate-{self.counter}")
        os.mkdir(outputs_dir)
        request = protocol.validate_request({
            "type": "candidate.run", "job": job or f"c{self.counter}", "candidate_source": source,
            "device": "cpu", "init_seed": 42, "init_inputs": self.prepared["init_inputs"],
            "inputs": self.prepared["inputs"], "outputs_dir": outputs_dir, "timing": timing,
            "timed_output_trials": list(timed_output_trials)})
        return protocol.validate_reply(CandidateRole("cpu").run(request))

    def verdicts(self, result):
        return [self.call_reference({"type": "reference.compare", "job": "job", "trial": trial,
                                     "outputs_path": path})["verdict"]
                for trial, path in enumerate(result["outputs"])]

    def compare_path(self, trial, path):
        return self.call_reference({"type": "reference.compare", "job": "job", "trial": trial,
                                    "outputs_path": path})


class ReferenceTest(RoleTestBase):
    def test_prepared_reply(self):
        self.assertEqual(self.prepared["trials"], 3)
        self.assertEqual(self.prepared["inputs"],
                         [os.path.join(self.dir, f"inputs-{t}.pt") for t in range(3)])
        self.assertEqual(self.prepared["init_inputs"], os.path.join(self.dir, "init_inputs.pt"))
        init_inputs = torch.load(self.prepared["init_inputs"], weights_only=True)
        self.assertEqual(init_inputs[:2], [16, 8])
        torch.manual_seed(42)
        self.assertTrue(torch.equal(init_inputs[2], torch.rand(8) + 0.5))

    def test_inputs_follow_the_seeds(self):
        for trial, seed in enumerate(self.seeds):
            torch.manual_seed(seed)
            expected = torch.randn(4, 16)
            saved = torch.load(self.prepared["inputs"][trial], weights_only=True)
            self.assertIsInstance(saved, list)
            self.assertTrue(torch.equal(saved[0], expected), trial)
            self.assertEqual(saved[0].dtype, torch.float32)
        first = torch.load(self.prepared["inputs"][0], weights_only=True)[0]
        second = torch.load(self.prepared["inputs"][1], weights_only=True)[0]
        self.assertFalse(torch.equal(first, second))

    def test_no_reference_outputs_on_disk(self):
        names = sorted(os.listdir(self.dir))
        self.assertFalse([n for n in names if n.startswith("problem_")], names)
        for name in names:
            self.assertFalse(name.startswith("outputs"), name)
        self.assertEqual(os.stat(self.prepared["inputs"][0]).st_mode & 0o777, 0o600)
        private = os.listdir(self.private)
        self.assertEqual(len(private), 1, private)
        self.assertTrue(private[0].startswith("problem_linear_relu_"), private)

    def test_reference_time(self):
        reply = self.call_reference({"type": "reference.time", "job": "job", **TIMING})
        self.assertEqual(reply["type"], "reference.timed")
        self.assertGreaterEqual(reply["timing"]["trials"], 3)
        self.assertLessEqual(reply["timing"]["trials"], 8)
        self.assertGreater(reply["timing"]["median_ms"], 0)

    def test_host_errors(self):
        handlers = self.reference.handlers()
        with self.assertRaisesRegex(HostError, "no prepared reference job"):
            handlers["reference.compare"]({"job": "nope", "trial": 0, "outputs_path": "/x"})
        with self.assertRaisesRegex(HostError, "out of range"):
            handlers["reference.compare"]({"job": "job", "trial": 9, "outputs_path": "/x"})
        with self.assertRaisesRegex(HostError, "already prepared"):
            handlers["reference.prepare"](protocol.validate_request({
                "type": "reference.prepare", "job": "job", "problem_source": "", "device": "cpu",
                "init_seed": 1, "input_seeds": [1], "work_dir": self.dir}))

    def test_missing_outputs_file(self):
        reply = self.compare_path(0, os.path.join(self.dir, "missing.pt"))
        self.assertEqual(reply["verdict"], "output_mismatch")

    def test_pickle_payload_is_refused_not_executed(self):
        marker = os.path.join(self.dir, "payload-ran")

        class Payload:
            def __reduce__(self):
                return (open, (marker, "w"))

        path = os.path.join(self.dir, "evil.pt")
        torch.save([Payload()], path)
        reply = self.compare_path(0, path)
        self.assertEqual(reply["verdict"], "output_mismatch")
        self.assertIn("not plain tensors", reply["message"])
        self.assertFalse(os.path.exists(marker), "the payload must not run")
        with open(path, "wb") as handle:  # a plain pickle, not a torch file
            pickle.dump({"a": 1}, handle, protocol=2)
        self.assertEqual(self.compare_path(0, path)["verdict"], "output_mismatch")


class ReferenceFailureTest(unittest.TestCase):
    def prepare(self, source):
        work = tempfile.mkdtemp(prefix="dicebench-ref-fail-")
        self.addCleanup(shutil.rmtree, work, True)
        role = ReferenceRole("cpu", work)
        request = protocol.validate_request({
            "type": "reference.prepare", "job": "j", "problem_source": source, "device": "cpu",
            "init_seed": 1, "input_seeds": [1], "work_dir": work})
        reply = protocol.validate_reply(role.prepare(request))
        self.assertEqual("j" in role.jobs, reply["ok"])
        return reply

    def test_failures_are_reference_failed(self):
        cases = {
            "syntax": ("def f(:\n", "SyntaxError"),
            "no Model": ("def get_inputs(): return []\ndef get_init_inputs(): return []\n",
                         "defines no class Model"),
            "forward raises": (programs.PROBLEM.replace("return (torch.relu(self.lin(x)) * self.scale)",
                                                        "raise ValueError('bad problem')"),
                               "bad problem"),
            "init inputs not loadable": (programs.PROBLEM.replace(
                "return [in_features, out_features,", "return [object(), in_features, out_features,"),
                "weights_only"),
            "returns a dict": (programs.PROBLEM.replace("return (torch.relu(self.lin(x)) * self.scale)",
                                                        "return {'y': x}"), "unsupported outputs"),
        }
        for name, (source, expected) in cases.items():
            with self.subTest(name):
                reply = self.prepare(source)
                self.assertFalse(reply["ok"])
                self.assertEqual(reply["error_class"], "reference_failed")
                self.assertIn(expected, reply["message"])

    def test_wrong_device_is_a_host_error(self):
        role = ReferenceRole("cpu", tempfile.gettempdir())
        request = protocol.validate_request({
            "type": "reference.prepare", "job": "j", "problem_source": "", "device": "cuda:0",
            "init_seed": 1, "input_seeds": [1], "work_dir": tempfile.gettempdir()})
        with self.assertRaisesRegex(HostError, "device"):
            role.prepare(request)
        with self.assertRaisesRegex(HostError, "bad device 'nonsense'"):
            role.prepare({**request, "device": "nonsense"})


class CandidateVerdictTest(RoleTestBase):
    def test_correct(self):
        result = self.run_candidate(programs.CORRECT)
        self.assertTrue(result["ok"], result)
        self.assertEqual(result["stage"], "done")
        self.assertEqual(result["error_class"], "")
        self.assertEqual(len(result["outputs"]), 3)
        self.assertIsNone(result["timing"])
        self.assertEqual(self.verdicts(result), ["correct"] * 3)
        reply = self.compare_path(0, result["outputs"][0])
        self.assertEqual(reply["max_abs_diff"], 0.0, "same seed, same weights")

    def test_off_by_1e2_fails_in_kernelbench_mode(self):
        result = self.run_candidate(programs.OFF_BY_1E2)
        self.assertTrue(result["ok"])
        reply = self.compare_path(0, result["outputs"][0])
        self.assertEqual(reply["verdict"], "output_mismatch")
        self.assertAlmostEqual(reply["max_abs_diff"], 1e-2, places=5)
        self.assertIn("output element [0, 0]", reply["message"])

    def test_wrong_shape(self):
        self.assertEqual(self.verdicts(self.run_candidate(programs.WRONG_SHAPE)),
                         ["shape_mismatch"] * 3)

    def test_wrong_dtype(self):
        self.assertEqual(self.verdicts(self.run_candidate(programs.WRONG_DTYPE)),
                         ["dtype_mismatch"] * 3)

    def test_tuple_where_a_tensor_is_expected(self):
        self.assertEqual(self.verdicts(self.run_candidate(programs.TUPLE_OUTPUT)),
                         ["shape_mismatch"] * 3)

    def test_nan(self):
        self.assertEqual(self.verdicts(self.run_candidate(programs.NAN_OUTPUT)),
                         ["output_mismatch"] * 3)

    def test_mutating_inputs_does_not_change_the_verdict(self):
        self.assertEqual(self.verdicts(self.run_candidate(programs.MUTATES_INPUTS)),
                         ["correct"] * 3)

    def test_raising_in_forward(self):
        result = self.run_candidate(programs.RAISES)
        self.assertFalse(result["ok"])
        self.assertEqual((result["stage"], result["error_class"]), ("run", "runtime_error"))
        self.assertEqual(result["message"], "ValueError: candidate forward failed on purpose")
        self.assertIn("raise ValueError('candidate forward failed on purpose')",
                      result["traceback_tail"])
        self.assertLessEqual(len(result["traceback_tail"].splitlines()), 20)
        self.assertEqual(result["outputs"], [])

    def test_system_exit_and_interrupt_are_runtime_errors(self):
        for source, expected in ((programs.EXITS, "SystemExit: 7"),
                                 (programs.INTERRUPTS, "KeyboardInterrupt")):
            with self.subTest(expected):
                result = self.run_candidate(source)
                self.assertEqual((result["stage"], result["error_class"]), ("run", "runtime_error"))
                self.assertEqual(result["message"], expected)
        result = self.run_candidate(programs.EXIT_AT_LOAD)
        self.assertEqual((result["stage"], result["error_class"]), ("load", "runtime_error"))

    def test_syntax_error_is_compile_failed(self):
        result = self.run_candidate(programs.SYNTAX_ERROR)
        self.assertEqual((result["ok"], result["stage"], result["error_class"]),
                         (False, "load", "compile_failed"))
        self.assertIn("SyntaxError", result["message"])

    def test_extension_build_failures_are_compile_failed(self):
        for source in (programs.BUILD_FAILS, programs.BUILD_SUBPROCESS_FAILS):
            with self.subTest(source):
                result = self.run_candidate(source)
                self.assertEqual((result["stage"], result["error_class"]), ("load", "compile_failed"))
        marked = RuntimeError("nvrtc failed")
        marked.dicebench_compile_error = True
        self.assertEqual(classify_load_error(marked), "compile_failed")
        self.assertEqual(classify_load_error(ImportError("no module")), "runtime_error")

    def test_missing_modelnew(self):
        result = self.run_candidate(programs.NO_MODELNEW)
        self.assertEqual((result["stage"], result["error_class"]), ("load", "runtime_error"))
        self.assertIn("defines no class ModelNew", result["message"])

    def test_init_failure(self):
        result = self.run_candidate(programs.FAILS_IN_INIT)
        self.assertEqual((result["stage"], result["error_class"]), ("init", "runtime_error"))
        self.assertIn("init fails", result["message"])

    def test_outputs_that_are_not_tensors(self):
        for source, expected in ((programs.NOT_A_TENSOR, "output is a builtins.dict"),
                                 (programs.RETURNS_STRING, "output is a builtins.str")):
            with self.subTest(expected):
                result = self.run_candidate(source)
                self.assertEqual((result["stage"], result["error_class"]), ("run", "runtime_error"))
                self.assertIn("must return a tensor", result["message"])
                self.assertIn(expected, result["message"])

    def test_timing_and_timed_outputs(self):
        result = self.run_candidate(programs.CORRECT, timing=TIMING, timed_output_trials=[1, 2])
        self.assertTrue(result["ok"], result)
        self.assertGreaterEqual(result["timing"]["trials"], 3)
        self.assertEqual(sorted(result["timed_outputs"]), ["1", "2"])
        for trial, path in result["timed_outputs"].items():
            self.assertEqual(self.compare_path(int(trial), path)["verdict"], "correct")

    def test_behaviour_change_after_timing_starts_is_caught(self):
        result = self.run_candidate(programs.CHANGES_WHEN_TIMED, timing=TIMING,
                                    timed_output_trials=[1])
        self.assertTrue(result["ok"], result)
        self.assertEqual(self.verdicts(result), ["correct"] * 3)
        self.assertEqual(self.compare_path(1, result["timed_outputs"]["1"])["verdict"],
                         "output_mismatch")

    def test_numeric_flips_are_undone_before_each_call(self):
        result = self.run_candidate(programs.FLIPS_NUMERICS, timing=TIMING, timed_output_trials=[0])
        self.assertTrue(result["ok"], result)
        self.assertEqual(self.verdicts(result), ["correct"] * 3)
        self.assertEqual(self.compare_path(0, result["timed_outputs"]["0"])["verdict"], "correct")
        numerics.apply_numerics()
        self.assertEqual(torch.get_float32_matmul_precision(), "highest")

    def test_one_run_per_candidate_worker(self):
        role = CandidateRole("cpu")
        outputs_dir = tempfile.mkdtemp(dir=self.dir)
        request = protocol.validate_request({
            "type": "candidate.run", "job": "once", "candidate_source": programs.CORRECT,
            "device": "cpu", "init_seed": 42, "init_inputs": self.prepared["init_inputs"],
            "inputs": self.prepared["inputs"], "outputs_dir": outputs_dir})
        self.assertTrue(role.run(request)["ok"])
        with self.assertRaisesRegex(HostError, "already served"):
            role.run(request)

    def test_host_errors(self):
        role = CandidateRole("cpu")
        base = {"type": "candidate.run", "job": "h", "candidate_source": programs.CORRECT,
                "device": "cpu", "init_seed": 42, "init_inputs": self.prepared["init_inputs"],
                "inputs": self.prepared["inputs"], "outputs_dir": self.dir}
        with self.assertRaisesRegex(HostError, "not a directory"):
            role.run(protocol.validate_request({**base, "outputs_dir": "/nonexistent/dir"}))
        with self.assertRaisesRegex(HostError, "timed_output_trials names trial 5"):
            role.run(protocol.validate_request({**base, "timing": TIMING,
                                                "timed_output_trials": [5]}))


class CompatModeTest(RoleTestBase):
    tolerance = "compat"

    def test_small_error_passes_in_compat_mode(self):
        self.assertEqual(self.verdicts(self.run_candidate(programs.OFF_BY_5E3)), ["correct"] * 3)
        self.assertEqual(self.verdicts(self.run_candidate(programs.OFF_BY_1E2)), ["correct"] * 3)


class KernelbenchSmallErrorTest(RoleTestBase):
    def test_5e3_fails_in_kernelbench_mode(self):
        self.assertEqual(self.verdicts(self.run_candidate(programs.OFF_BY_5E3)),
                         ["output_mismatch"] * 3)


class ReferenceKeepsItsOwnCopiesTest(RoleTestBase):
    problem = programs.BUFFER_PROBLEM

    def test_outputs_and_inputs_are_cloned(self):
        candidate = programs.BUFFER_PROBLEM.replace("class Model(", "class ModelNew(")
        self.assertEqual(self.verdicts(self.run_candidate(candidate)), ["correct"] * 3,
                         "kept outputs must not be overwritten by later reference calls")
        job = self.reference.jobs["job"]
        for trial, path in enumerate(self.prepared["inputs"]):
            saved = torch.load(path, weights_only=True)[0]
            self.assertTrue(torch.equal(job.inputs[trial][0], saved),
                            "the reference ran on a clone; its kept inputs are pristine")


class TupleProblemTest(RoleTestBase):
    problem = programs.TUPLE_PROBLEM
    seeds = [5]

    def test_tuple_outputs(self):
        correct = programs.TUPLE_PROBLEM.replace("class Model(", "class ModelNew(")
        self.assertEqual(self.verdicts(self.run_candidate(correct)), ["correct"])
        single = correct.replace("return a + b, (a * b).sum()", "return a + b")
        self.assertEqual(self.verdicts(self.run_candidate(single)), ["shape_mismatch"])
        as_list = correct.replace("return a + b, (a * b).sum()", "return [a + b, (a * b).sum()]")
        self.assertEqual(self.verdicts(self.run_candidate(as_list)), ["correct"])
        as_number = correct.replace("return a + b, (a * b).sum()",
                                    "return a + b, float((a * b).sum())")
        self.assertEqual(self.verdicts(self.run_candidate(as_number)), ["correct"],
                         "a Python float compares as a 0-d float32 tensor")


if __name__ == "__main__":
    unittest.main()
