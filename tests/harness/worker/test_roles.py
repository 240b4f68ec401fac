"""Reference and candidate handlers in this process: verdicts for right, wrong and failing candidates.

Each candidate gets a fresh CandidateRole (a candidate worker serves one job) and goes through the
host's sequence: load, init, then per trial reference.trial -> candidate.forward ->
reference.compare, optionally timing followed by one more checked trial. The reference job is
prepared once per test class.
"""

import os
import pickle
import shutil
import tempfile
import unittest
from unittest import mock

import torch

from dicebench_harness import numerics, protocol, transfer
from dicebench_harness.candidate import CandidateRole, classify_load_error, kernel_base_name
from dicebench_harness.errors import HostError
from dicebench_harness.reference import ReferenceRole

import programs

TIMING = {"warmup": 1, "min_trials": 3, "max_trials": 8, "budget_s": 0.5, "target_rel_ci": 0.01}
BATCH_CALLS = 4  # calls per reference.batch in these tests (the host makes up to 32)


class Outcome:
    """What one candidate went through: the failing reply (if any), verdicts per trial, timing."""

    def __init__(self):
        self.failure = None    # the candidate's reply that had ok=false
        self.stage = "done"    # load, init, run, timing, after_timing or done
        self.compile = None
        self.verdicts = []     # per correctness trial
        self.compares = []
        self.timing = None
        self.after_timing = None  # the compare reply of the trial after timing
        self.timed_calls = 0      # calls the candidate made in candidate.time
        self.timed_compares = []  # the compare reply of every timed call
        self.timed_inputs = []    # each timed call's inputs as the reference made them
        self.batches = []         # each reference.batch_ready of the timing loop
        self.aliased = []         # per correctness trial: an output shared storage with an input


def inputs_of(reference, job):
    """The reference's current trial inputs (clones), as the candidate received them."""
    return [x.clone() for x in reference.jobs[job].inputs]


def mask_key(call):
    return 7000 + call

class RoleTestBase(unittest.TestCase):
    problem = programs.PROBLEM
    problem_name = "linear_relu"
    tolerance = "per_dtype"
    seeds = [11, 22, 33]

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="dicebench-roles-")
        cls.private = os.path.join(cls.dir, "private")
        os.mkdir(cls.private)
        cls.reference = ReferenceRole("cpu", cls.private)
        cls.prepared = cls.call_reference({
            "type": "reference.prepare", "job": "job", "problem_source": cls.problem,
            "problem_name": cls.problem_name, "device": "cpu", "init_seed": 42,
            "work_dir": cls.dir, "tolerance": cls.tolerance})
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

    def call_candidate(self, role, request):
        checked = protocol.validate_request(request)
        return protocol.validate_reply(role.handlers()[checked["type"]](checked))

    def trial_inputs(self, trial, seed, outputs=True):
        ready = self.call_reference({"type": "reference.trial", "job": "job", "trial": trial, "seed": seed,
                                     "outputs": outputs})
        self.assertTrue(ready["ok"], ready)
        return ready["inputs"]

    def forward(self, role, job, work, trial, seed):
        inputs = self.trial_inputs(trial, seed)
        return self.call_candidate(role, {
            "type": "candidate.forward", "job": job, "trial": trial, "inputs": inputs,
            "outputs_path": os.path.join(work, f"outputs-{trial}.pt")})

    def compare(self, trial, outputs):
        return self.call_reference({"type": "reference.compare", "job": "job", "trial": trial,
                                    "outputs": outputs})

    def run_candidate(self, source, *, timing=None, role=None) -> Outcome:
        type(self).counter += 1
        job = f"c{self.counter}"
        work = os.path.join(self.dir, f"candidate-{self.counter}")
        os.mkdir(work)
        role, outcome = role or CandidateRole("cpu"), Outcome()

        def failed(stage, reply):
            if reply["ok"]:
                return False
            outcome.failure, outcome.stage = reply, stage
            return True

        loaded = self.call_candidate(role, {"type": "candidate.load", "job": job, "problem_source": self.problem,
                                            "candidate_source": source, "device": "cpu", "work_dir": work})
        outcome.compile = loaded["compile"]
        if failed("load", loaded):
            return outcome
        ready = self.call_candidate(role, {"type": "candidate.init", "job": job, "init_seed": 42,
                                           "init_inputs": self.prepared["init_inputs"]})
        if failed("init", ready):
            return outcome
        for trial, seed in enumerate(self.seeds):
            out = self.forward(role, job, work, trial, seed)
            if failed("run", out):
                return outcome
            outcome.aliased.append(out["aliases_input"])
            reply = self.compare(trial, out["outputs"])
            outcome.compares.append(reply)
            outcome.verdicts.append(reply["verdict"])
        if timing is None:
            return outcome
        # Timing on fresh inputs: this test plays the host, making batches of BATCH_CALLS calls with
        # reference.batch and checking every call's outputs.
        first = 100
        ready = []  # (call, descriptor, mask key) made and not handed over yet

        def make_batch(call):
            made = self.call_reference({"type": "reference.batch", "job": "job", "budget_bytes": 1 << 30, "calls": [
                {"trial": first + c, "seed": 1000 + c, "outputs": True, "mask_key": mask_key(c)}
                for c in range(call, call + BATCH_CALLS)]})
            self.assertTrue(made["ok"], made)
            outcome.batches.append(made)
            ready[:] = [(call + k, d, mask_key(call + k) if made["masked"] else None)
                        for k, d in enumerate(made["inputs"])]

        def hand_over():
            call, descriptor, key = ready.pop(0)
            # The inputs as the candidate receives them (unmasked with the call's key).
            outcome.timed_inputs.append(transfer.import_tree(descriptor, "cpu", clone=True, mask_key=key))
            return call, descriptor, key

        def host(message):
            self.assertEqual(message["type"], "candidate.call_done")
            call = message["call"]
            compared = self.compare(first + call, message["outputs"])
            outcome.timed_compares.append(compared)
            if compared["verdict"] != "correct":
                return {"type": "timing.stop", "job": job}
            if not message["more"]:
                return {"type": "timing.stop", "job": job}
            if not ready:
                make_batch(call + 1)
            following, descriptor, key = hand_over()
            self.assertEqual(following, call + 1)
            return {"type": "timing.next", "job": job, "call": following, "inputs": descriptor, "mask_key": key}

        make_batch(0)
        _, inputs, key = hand_over()
        role.host = host
        timed = self.call_candidate(role, {"type": "candidate.time", "job": job, "inputs": inputs, "mask_key": key,
                                           "outputs_path": os.path.join(work, "outputs-timed.pt"), **timing})
        if failed("timing", timed):
            return outcome
        outcome.timing = timed["timing"]
        outcome.timed_calls = timed["calls"]
        if timed["stopped"]:
            outcome.stage = "timing"
            return outcome
        trial = len(self.seeds) + 1
        out = self.forward(role, job, work, trial, 4321)
        if failed("after_timing", out):
            return outcome
        outcome.after_timing = self.compare(trial, out["outputs"])
        return outcome


class ReferenceTest(RoleTestBase):
    def test_prepared_reply(self):
        self.assertEqual(self.prepared["init_inputs"], os.path.join(self.dir, "init_inputs.pt"))
        init_inputs = torch.load(self.prepared["init_inputs"], weights_only=True)
        self.assertEqual(init_inputs[:2], [16, 8])
        torch.manual_seed(42)
        self.assertTrue(torch.equal(init_inputs[2], torch.rand(8) + 0.5))

    def test_inputs_follow_the_seeds(self):
        for trial, seed in enumerate(self.seeds):
            torch.manual_seed(seed)
            expected = torch.randn(4, 16)
            descriptor = self.trial_inputs(trial, seed)
            self.assertEqual((descriptor["transport"], descriptor["path"]),
                             ("raw_file", os.path.join(self.dir, f"inputs-{trial}.pt")))
            saved = transfer.import_tree(descriptor, "cpu", clone=True, folder=self.dir)
            self.assertIsInstance(saved, list)
            self.assertTrue(torch.equal(saved[0], expected), trial)
            self.assertEqual(saved[0].dtype, torch.float32)

    def test_no_reference_outputs_on_disk(self):
        descriptor = self.trial_inputs(0, 11)
        names = sorted(os.listdir(self.dir))
        self.assertFalse([n for n in names if n.startswith("problem_")], names)
        for name in names:
            self.assertFalse(name.startswith("outputs"), name)
        self.assertEqual(os.stat(descriptor["path"]).st_mode & 0o777, 0o600)
        private = os.listdir(self.private)
        self.assertEqual(len(private), 1, private)
        self.assertTrue(private[0].startswith("problem_linear_relu_"), private)

    def batch(self, outputs, budget=1 << 30, first=200):
        calls = [{"trial": first + k, "seed": 500 + k, "outputs": keep, "mask_key": mask_key(k)}
                 for k, keep in enumerate(outputs)]
        made = self.call_reference({"type": "reference.batch", "job": "job", "calls": calls, "budget_bytes": budget})
        self.assertTrue(made["ok"], made)
        return made

    def test_a_batch_is_made_ahead_masked_and_compared_on_its_checked_calls(self):
        made = self.batch([True, False, False, True, False])
        self.assertEqual((made["made"], made["masked"]), (5, True))
        self.assertEqual(made["input_bytes"], 4 * 16 * 4)
        self.assertEqual(made["output_bytes"], 4 * 8 * 4)
        for k, descriptor in enumerate(made["inputs"]):
            torch.manual_seed(500 + k)
            expected = torch.randn(4, 16)
            # What lies in the job folder is masked: reading ahead gives nothing without the call's key.
            raw = transfer.import_tree(descriptor, "cpu", clone=True)
            self.assertFalse(torch.equal(raw[0], expected), k)
            self.assertFalse(torch.equal(transfer.import_tree(descriptor, "cpu", clone=True, mask_key=mask_key(k + 1))[0],
                                         expected), k)
            self.assertTrue(torch.equal(transfer.import_tree(descriptor, "cpu", clone=True, mask_key=mask_key(k))[0],
                                        expected), k)
        # The reference kept the outputs of the checked calls only, and compares them.
        zeros, _ = transfer.export_tree(torch.zeros(4, 8), "cpu", os.path.join(self.dir, "zeros.pt"))
        reply = self.compare(200, zeros)
        self.assertEqual(reply["verdict"], "output_mismatch")
        with self.assertRaisesRegex(HostError, "not the current trial"):
            self.compare(201, zeros)
        # The next trial lets the batch go: its files are removed and its outputs dropped.
        self.trial_inputs(0, 11)
        self.assertFalse([n for n in os.listdir(self.dir) if n.startswith("inputs-2")])
        with self.assertRaisesRegex(HostError, "not the current trial"):
            self.compare(203, zeros)

    def test_checked_and_unchecked_calls_look_alike_to_the_candidate(self):
        made = self.batch([True, False, True, False])
        files = [d["path"] for d in made["inputs"]]
        self.assertEqual([d["transport"] for d in made["inputs"]], ["raw_file"] * 4)
        self.assertEqual([os.path.basename(f) for f in files], [f"inputs-{200 + k}.pt" for k in range(4)])
        self.assertEqual(len({os.stat(f).st_size for f in files}), 1)
        self.assertEqual({os.stat(f).st_mode & 0o777 for f in files}, {0o600})

    def test_a_small_budget_makes_batches_of_one_unmasked(self):
        made = self.batch([False, True, False], budget=1)
        self.assertEqual((made["made"], made["masked"]), (1, False))
        torch.manual_seed(500)
        self.assertTrue(torch.equal(transfer.import_tree(made["inputs"][0], "cpu", clone=True)[0], torch.randn(4, 16)))
        # Room for two calls' inputs (512 bytes each, aligned) and no outputs: the checked second call
        # does not fit with its outputs, so the batch holds one call.
        self.assertEqual(self.batch([False, True], budget=1024)["made"], 1)
        self.assertEqual(self.batch([False, False, True], budget=1024)["made"], 2)

    def test_reference_time(self):
        self.trial_inputs(0, 11)
        reply = self.call_reference({"type": "reference.time", "job": "job", "seed": 5, **TIMING})
        self.assertEqual(reply["type"], "reference.timed")
        self.assertGreaterEqual(reply["timing"]["trials"], 3)
        self.assertLessEqual(reply["timing"]["trials"], 8)
        self.assertGreater(reply["timing"]["median_ms"], 0)

    def test_reference_time_compiled(self):
        # torch.compile with its cheapest backend: inductor's C++ build takes minutes on 2 cores.
        compiled = []
        real_compile = torch.compile

        def compile_eagerly(model):
            compiled.append(model)
            return real_compile(model, backend="eager")

        self.trial_inputs(0, 11)
        with mock.patch.object(torch, "compile", compile_eagerly):
            reply = self.call_reference({"type": "reference.time", "job": "job", "seed": 5, **TIMING,
                                         "method": "compile"})
        self.assertEqual(compiled, [self.reference.jobs["job"].model])
        self.assertGreater(reply["timing"]["median_ms"], 0)

    def test_host_errors(self):
        handlers = self.reference.handlers()
        outputs = {"transport": "raw_file", "path": "/x", "tree": {"list": []}}
        with self.assertRaisesRegex(HostError, "no prepared reference job"):
            handlers["reference.compare"]({"job": "nope", "trial": 0, "outputs": outputs})
        self.trial_inputs(0, 11)
        with self.assertRaisesRegex(HostError, "not the current trial"):
            handlers["reference.compare"]({"job": "job", "trial": 9, "outputs": outputs})
        with self.assertRaisesRegex(HostError, "already prepared"):
            handlers["reference.prepare"](protocol.validate_request({
                "type": "reference.prepare", "job": "job", "problem_source": "", "device": "cpu",
                "init_seed": 1, "work_dir": self.dir}))

    def test_outputs_that_cannot_be_received(self):
        self.trial_inputs(0, 11)
        cases = [{"transport": "raw_file", "path": os.path.join(self.dir, "missing.pt"), "tree": {"list": []}},
                 {"transport": "cuda_ipc", "tree": {"tensor": {}}}]
        for outputs in cases:
            with self.subTest(outputs=outputs):
                reply = self.compare(0, outputs)
                self.assertEqual(reply["verdict"], "output_mismatch")
                self.assertIn("could not be received", reply["message"])

    def test_pickle_payload_is_refused_not_executed(self):
        # Outputs travel as raw bytes: a torch.save file, payload and all, is never unpickled.
        self.trial_inputs(0, 11)
        marker = os.path.join(self.dir, "payload-ran")

        class Payload:
            def __reduce__(self):
                return (open, (marker, "w"))

        path = os.path.join(self.dir, "evil.pt")
        torch.save([Payload()], path)
        with self.assertRaisesRegex(protocol.ValidationError, "transfer descriptor"):
            self.compare(0, {"transport": "file", "path": path})
        reply = self.compare(0, {"transport": "raw_file", "path": path, "tree": {"list": [{"tensor": {
            "dtype": "float32", "shape": [4, 8], "offset_bytes": 0, "size_bytes": 128}}]}})
        self.assertIn(reply["verdict"], ("output_mismatch", "shape_mismatch"))
        self.assertFalse(os.path.exists(marker), "the payload must not run")


class ReferenceFailureTest(unittest.TestCase):
    def prepare(self, source):
        """prepare, then trial 0 (where get_inputs and forward run): the first failing reply."""
        work = tempfile.mkdtemp(prefix="dicebench-ref-fail-")
        self.addCleanup(shutil.rmtree, work, True)
        role = ReferenceRole("cpu", work)
        request = protocol.validate_request({
            "type": "reference.prepare", "job": "j", "problem_source": source, "device": "cpu",
            "init_seed": 1, "work_dir": work})
        reply = protocol.validate_reply(role.prepare(request))
        self.assertEqual("j" in role.jobs, reply["ok"])
        if not reply["ok"]:
            return reply
        return protocol.validate_reply(role.trial(protocol.validate_request(
            {"type": "reference.trial", "job": "j", "trial": 0, "seed": 3})))

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
            "init_seed": 1, "work_dir": tempfile.gettempdir()})
        with self.assertRaisesRegex(HostError, "device"):
            role.prepare(request)
        with self.assertRaisesRegex(HostError, "bad device 'nonsense'"):
            role.prepare({**request, "device": "nonsense"})


class CandidateVerdictTest(RoleTestBase):
    def test_correct(self):
        outcome = self.run_candidate(programs.CORRECT)
        self.assertIsNone(outcome.failure)
        self.assertEqual(outcome.verdicts, ["correct"] * 3)
        self.assertEqual(outcome.compares[0]["max_abs_diff"], 0.0, "same seed, same weights")
        self.assertEqual(outcome.compile["path"], "none", "no load_inline call")
        self.assertIsNone(outcome.timing)

    def test_inputs_follow_the_seeds(self):
        first = transfer.import_tree(self.trial_inputs(0, 11), "cpu", clone=True)
        again = transfer.import_tree(self.trial_inputs(0, 11), "cpu", clone=True)
        other = transfer.import_tree(self.trial_inputs(1, 22), "cpu", clone=True)
        self.assertTrue(torch.equal(first[0], again[0]))
        self.assertFalse(torch.equal(first[0], other[0]))

    def test_reference_outputs_never_reach_the_job_folder(self):
        self.run_candidate(programs.CORRECT)
        for name in os.listdir(self.dir):
            self.assertFalse(name.startswith("reference"), name)

    def test_off_by_1e2_fails_in_per_dtype_mode(self):
        outcome = self.run_candidate(programs.OFF_BY_1E2)
        reply = outcome.compares[0]
        self.assertEqual(reply["verdict"], "output_mismatch")
        self.assertAlmostEqual(reply["max_abs_diff"], 1e-2, places=5)
        self.assertIn("output element [0, 0]", reply["message"])

    def test_wrong_shape(self):
        self.assertEqual(self.run_candidate(programs.WRONG_SHAPE).verdicts, ["shape_mismatch"] * 3)

    def test_wrong_dtype(self):
        self.assertEqual(self.run_candidate(programs.WRONG_DTYPE).verdicts, ["dtype_mismatch"] * 3)

    def test_tuple_where_a_tensor_is_expected(self):
        self.assertEqual(self.run_candidate(programs.TUPLE_OUTPUT).verdicts, ["shape_mismatch"] * 3)

    def test_nan(self):
        self.assertEqual(self.run_candidate(programs.NAN_OUTPUT).verdicts, ["output_mismatch"] * 3)

    def test_mutating_inputs_does_not_change_the_verdict(self):
        self.assertEqual(self.run_candidate(programs.MUTATES_INPUTS).verdicts, ["correct"] * 3)

    def test_raising_in_forward(self):
        outcome = self.run_candidate(programs.RAISES)
        failure = outcome.failure
        self.assertEqual((outcome.stage, failure["error_class"]), ("run", "runtime_error"))
        self.assertEqual(failure["message"], "ValueError: candidate forward failed on purpose")
        self.assertIn("raise ValueError('candidate forward failed on purpose')", failure["traceback_tail"])
        self.assertLessEqual(len(failure["traceback_tail"].splitlines()), 20)
        self.assertIsNone(failure["outputs"])

    def test_system_exit_and_interrupt_are_runtime_errors(self):
        for source, expected in ((programs.EXITS, "SystemExit: 7"),
                                 (programs.INTERRUPTS, "KeyboardInterrupt")):
            with self.subTest(expected):
                outcome = self.run_candidate(source)
                self.assertEqual((outcome.stage, outcome.failure["error_class"]), ("run", "runtime_error"))
                self.assertEqual(outcome.failure["message"], expected)
        outcome = self.run_candidate(programs.EXIT_AT_LOAD)
        self.assertEqual((outcome.stage, outcome.failure["error_class"]), ("load", "runtime_error"))

    def test_syntax_error_is_compile_failed(self):
        outcome = self.run_candidate(programs.SYNTAX_ERROR)
        self.assertEqual((outcome.stage, outcome.failure["error_class"]), ("load", "compile_failed"))
        self.assertIn("SyntaxError", outcome.failure["message"])

    def test_extension_build_failures_are_compile_failed(self):
        for source in (programs.BUILD_FAILS, programs.BUILD_SUBPROCESS_FAILS):
            with self.subTest(source):
                outcome = self.run_candidate(source)
                self.assertEqual((outcome.stage, outcome.failure["error_class"]), ("load", "compile_failed"))
        marked = RuntimeError("nvrtc failed")
        marked.dicebench_compile_error = True
        self.assertEqual(classify_load_error(marked), "compile_failed")
        self.assertEqual(classify_load_error(ImportError("no module")), "runtime_error")

    def test_load_inline_calls_are_recorded_with_their_error(self):
        source = ("import torch\nfrom torch.utils.cpp_extension import load_inline\n"
                  "ext = load_inline(name='ext_x', cpp_sources='int f();', "
                  "cuda_sources='__global__ void my_kernel(float* x) {}', functions=['f'], "
                  "extra_include_paths=['/nonexistent'], build_directory='/nonexistent/dir')\n")
        outcome = self.run_candidate(source)
        self.assertEqual(outcome.stage, "load")
        compile_ = outcome.compile
        self.assertEqual((compile_["path"], len(compile_["records"])), ("fallback", 1))
        record = compile_["records"][0]
        self.assertEqual((record["name"], record["kernels"]), ("ext_x", ["my_kernel"]))
        self.assertIn("fast path not requested", compile_["reason"])
        self.assertTrue(record["error"])
        self.assertIn("ext_x:", compile_["log"])

    def test_missing_modelnew(self):
        outcome = self.run_candidate(programs.NO_MODELNEW)
        self.assertEqual((outcome.stage, outcome.failure["error_class"]), ("load", "runtime_error"))
        self.assertIn("defines no class ModelNew", outcome.failure["message"])

    def test_init_failure(self):
        outcome = self.run_candidate(programs.FAILS_IN_INIT)
        self.assertEqual((outcome.stage, outcome.failure["error_class"]), ("init", "runtime_error"))
        self.assertIn("init fails", outcome.failure["message"])

    def test_outputs_that_are_not_tensors(self):
        for source, expected in ((programs.NOT_A_TENSOR, "builtins.dict at output"),
                                 (programs.RETURNS_STRING, "builtins.str at output")):
            with self.subTest(expected):
                outcome = self.run_candidate(source)
                self.assertEqual((outcome.stage, outcome.failure["error_class"]), ("run", "runtime_error"))
                self.assertIn("must return a tensor", outcome.failure["message"])
                self.assertIn(expected, outcome.failure["message"])

    def test_timing_and_the_check_after_it(self):
        outcome = self.run_candidate(programs.CORRECT, timing=TIMING)
        self.assertIsNone(outcome.failure)
        self.assertGreaterEqual(outcome.timing["trials"], 3)
        self.assertEqual(outcome.after_timing["verdict"], "correct")

    def test_behaviour_change_after_timing_starts_is_caught(self):
        outcome = self.run_candidate(programs.CHANGES_WHEN_TIMED, timing=TIMING)
        self.assertEqual(outcome.verdicts, ["correct"] * 3)
        self.assertEqual(outcome.stage, "timing")
        self.assertEqual(outcome.timed_compares[-1]["verdict"], "output_mismatch")

    def test_every_timed_call_gets_new_inputs_with_new_contents(self):
        outcome = self.run_candidate(programs.CORRECT, timing=TIMING)
        self.assertIsNone(outcome.failure)
        calls = outcome.timed_calls
        self.assertEqual(len(outcome.timed_compares), calls)
        self.assertGreaterEqual(calls, TIMING["warmup"] + TIMING["min_trials"])
        self.assertEqual({c["verdict"] for c in outcome.timed_compares}, {"correct"})
        # Calls came in batches made ahead, masked, and each call's inputs are its seed's.
        self.assertGreater(len(outcome.batches), 1)
        self.assertTrue(all(b["made"] == BATCH_CALLS and b["masked"] for b in outcome.batches))
        inputs = [x[0] for x in outcome.timed_inputs]
        for call, x in enumerate(inputs):
            torch.manual_seed(1000 + call)
            self.assertTrue(torch.equal(x, torch.randn(4, 16)), call)
        for i in range(len(inputs)):
            for j in range(i + 1, len(inputs)):
                self.assertFalse(torch.equal(inputs[i], inputs[j]), (i, j))

    def test_warm_calls_come_before_each_timed_trial_and_are_checked_like_any_call(self):
        outcome = self.run_candidate(programs.CORRECT, timing={**TIMING, "warm_calls": True})
        self.assertIsNone(outcome.failure)
        timing = outcome.timing
        self.assertEqual(timing["warm_calls"], timing["trials"])  # CPU calls are far under 5 ms
        self.assertEqual(outcome.timed_calls, timing["warmup"] + timing["trials"] + timing["warm_calls"])
        self.assertEqual(len(outcome.timed_compares), outcome.timed_calls)
        without = self.run_candidate(programs.CORRECT, timing={**TIMING, "warm_calls": False})
        self.assertEqual(without.timing["warm_calls"], 0)
        self.assertEqual(without.timed_calls, without.timing["warmup"] + without.timing["trials"])

    def test_caches_keyed_on_contents_or_the_input_object_never_hit(self):
        for source in (programs.CONTENT_KEYED_CACHE, programs.OBJECT_KEYED_CACHE):
            with self.subTest(source=source[:40]):
                role = CandidateRole("cpu")
                outcome = self.run_candidate(source, timing=TIMING, role=role)
                self.assertIsNone(outcome.failure)
                self.assertEqual({c["verdict"] for c in outcome.timed_compares}, {"correct"})
                self.assertEqual(getattr(role.model, "hits", 0), 0)

    def test_reading_a_batch_ahead_gives_no_answers(self):
        # The batch's later calls lie in the job folder while earlier ones run, but masked: a
        # candidate reading them ahead caches nothing that ever matches a call's inputs.
        role = CandidateRole("cpu")
        outcome = self.run_candidate(programs.READ_AHEAD_CACHE, timing=TIMING, role=role)
        self.assertIsNone(outcome.failure)
        self.assertEqual({c["verdict"] for c in outcome.timed_compares}, {"correct"})
        self.assertGreater(role.model.read, 1)  # it did read the batch's files
        self.assertEqual(getattr(role.model, "hits", 0), 0)
        # Unmasked, the same candidate would have had its answers ready before their calls.
        with mock.patch.object(transfer, "mask_stream", lambda key, index, size, device: torch.zeros(size, dtype=torch.uint8)):
            cheat = CandidateRole("cpu")
            self.run_candidate(programs.READ_AHEAD_CACHE, timing=TIMING, role=cheat)
        self.assertGreater(cheat.model.hits, 0)

    def test_a_stale_answer_during_timing_is_caught(self):
        outcome = self.run_candidate(programs.POINTER_KEYED_CACHE, timing=TIMING)
        self.assertEqual(outcome.verdicts, ["correct"] * 3)
        self.assertEqual(outcome.stage, "timing")
        self.assertEqual(outcome.timed_compares[-1]["verdict"], "output_mismatch")

    def test_a_tensor_subclass_is_refused_by_name(self):
        outcome = self.run_candidate(programs.TENSOR_SUBCLASS)
        self.assertEqual((outcome.stage, outcome.failure["error_class"]), ("run", "runtime_error"))
        self.assertIn("DeferredResult", outcome.failure["message"])
        self.assertIn("subclass of torch.Tensor", outcome.failure["message"])

    def test_margins_are_reported(self):
        outcome = self.run_candidate(programs.CORRECT)
        self.assertTrue(all(c["margin"] is not None and c["margin"] <= 1.0 for c in outcome.compares))
        off = self.run_candidate(programs.OFF_BY_5E3)
        self.assertEqual(off.verdicts[0], "output_mismatch")
        self.assertGreater(off.compares[0]["margin"], 1.0)

    def test_numeric_flips_are_undone_before_each_call(self):
        outcome = self.run_candidate(programs.FLIPS_NUMERICS, timing=TIMING)
        self.assertEqual(outcome.verdicts, ["correct"] * 3)
        self.assertEqual(outcome.after_timing["verdict"], "correct")
        numerics.apply_numerics()
        self.assertEqual(torch.get_float32_matmul_precision(), "highest")

    def test_one_job_per_candidate_worker_in_order(self):
        role = CandidateRole("cpu")
        work = tempfile.mkdtemp(dir=self.dir)
        load = {"type": "candidate.load", "job": "once", "problem_source": self.problem,
                "candidate_source": programs.CORRECT, "device": "cpu", "work_dir": work}
        init = {"type": "candidate.init", "job": "once", "init_seed": 42,
                "init_inputs": self.prepared["init_inputs"]}
        with self.assertRaisesRegex(HostError, "needs stage 'loaded'"):
            self.call_candidate(role, init)
        self.assertTrue(self.call_candidate(role, load)["ok"])
        with self.assertRaisesRegex(HostError, "needs stage 'new'"):
            self.call_candidate(role, load)
        with self.assertRaisesRegex(HostError, "serves job 'once'"):
            self.call_candidate(role, {**init, "job": "other"})
        self.assertTrue(self.call_candidate(role, init)["ok"])

    def test_host_errors(self):
        role = CandidateRole("cpu")
        with self.assertRaisesRegex(HostError, "not a directory"):
            self.call_candidate(role, {"type": "candidate.load", "job": "h", "problem_source": "",
                                       "candidate_source": "", "device": "cpu", "work_dir": "/nonexistent/dir"})
        with self.assertRaisesRegex(HostError, "is not the current trial"):
            self.compare(7, {"transport": "raw_file", "path": "/nonexistent", "tree": {"list": []}})

    def test_kernel_base_names(self):
        self.assertEqual(kernel_base_name("void ns::relu<float>(float const*, int)"), "relu")
        self.assertEqual(kernel_base_name("add_kernel"), "add_kernel")
        self.assertEqual(kernel_base_name("void add_kernel(float*, float*, int)"), "add_kernel")


class ProblemNamespaceTest(RoleTestBase):
    """The problem's source runs first in the candidate's module namespace, then the candidate's, as
    KernelBench's eval runs them (exec of the problem, then of the candidate, in one dict)."""

    def load(self, problem, candidate):
        """candidate.load of `candidate` after `problem` in a fresh worker; its reply."""
        work = tempfile.mkdtemp(dir=self.dir)
        return self.call_candidate(CandidateRole("cpu"), {
            "type": "candidate.load", "job": "ns", "problem_source": problem, "candidate_source": candidate,
            "device": "cpu", "work_dir": work}), work

    def test_a_candidate_sees_the_problems_names(self):
        # It subclasses Model and reads batch and in_features, none of them defined here.
        candidate = ("import torch\n\n"
                     "class ModelNew(Model):\n"
                     "    def forward(self, x):\n"
                     "        assert tuple(x.shape) == (batch, in_features), x.shape\n"
                     "        return torch.clamp(torch.addmm(self.lin.bias, x, self.lin.weight.t()), min=0.0) * self.scale\n")
        outcome = self.run_candidate(candidate)
        self.assertIsNone(outcome.failure)
        self.assertEqual(outcome.verdicts, ["correct"] * 3)

    def test_the_candidates_definitions_override_the_problems(self):
        # Its own Model (no arguments: the problem's takes three) and its own batch.
        candidate = ("import torch\nimport torch.nn as nn\n\nbatch = 'mine'\n\n"
                     "class Model(nn.Module):\n"
                     "    def forward(self, x):\n"
                     "        return torch.clamp(x, min=0.0)\n\n"
                     "class ModelNew(nn.Module):\n"
                     "    def __init__(self, in_features, out_features, scale):\n"
                     "        super().__init__()\n"
                     "        self.lin = nn.Linear(in_features, out_features)\n"
                     "        self.scale = scale\n"
                     "        self.relu = Model()\n\n"
                     "    def forward(self, x):\n"
                     "        assert batch == 'mine'\n"
                     "        return self.relu(self.lin(x)) * self.scale\n")
        self.assertEqual(self.run_candidate(candidate).verdicts, ["correct"] * 3)

    def test_modelnew_comes_from_the_candidate_alone(self):
        # A problem that names a ModelNew of its own does not give one to a candidate without it.
        problem = self.problem + "\nclass ModelNew(Model):\n    pass\n"
        loaded, _ = self.load(problem, "import torch\nx = 1\n")
        self.assertFalse(loaded["ok"])
        self.assertEqual(loaded["error_class"], "runtime_error")
        self.assertIn("the candidate defines no class ModelNew", loaded["message"])
        loaded, _ = self.load(problem, "class ModelNew(Model):\n    pass\n")
        self.assertTrue(loaded["ok"], loaded)

    def test_a_problem_that_raises_here_is_named_and_no_candidate_code_runs(self):
        for problem, error in (("import torch\nraise RuntimeError('problem broke')\n", "RuntimeError: problem broke"),
                               ("def get_inputs(:\n", "SyntaxError")):
            with self.subTest(error=error):
                loaded, work = self.load(problem, f"open({os.path.join(self.dir, 'ran')!r}, 'w').close()\n"
                                                  "class ModelNew:\n    pass\n")
                self.assertFalse(loaded["ok"])
                self.assertEqual(loaded["error_class"], "runtime_error")  # a SyntaxError too: not the candidate's
                self.assertTrue(loaded["message"].startswith("the problem's source raised in the candidate's worker"
                                                             " before the candidate's code ran: "), loaded["message"])
                self.assertIn(error, loaded["message"])
                self.assertIn(os.path.join(work, "problem_"), loaded["traceback_tail"])
                self.assertNotIn(os.path.join(work, "candidate_"), loaded["traceback_tail"])
                self.assertFalse(os.path.exists(os.path.join(self.dir, "ran")))


class UniformModeTest(RoleTestBase):
    tolerance = "uniform"

    def test_small_error_passes_in_uniform_mode(self):
        self.assertEqual(self.run_candidate(programs.OFF_BY_5E3).verdicts, ["correct"] * 3)
        self.assertEqual(self.run_candidate(programs.OFF_BY_1E2).verdicts, ["correct"] * 3)


class PerDtypeSmallErrorTest(RoleTestBase):
    def test_5e3_fails_in_per_dtype_mode(self):
        self.assertEqual(self.run_candidate(programs.OFF_BY_5E3).verdicts, ["output_mismatch"] * 3)


class ReferenceKeepsItsOwnCopiesTest(RoleTestBase):
    problem = programs.BUFFER_PROBLEM

    def test_outputs_and_inputs_are_cloned(self):
        candidate = programs.BUFFER_PROBLEM.replace("class Model(", "class ModelNew(")
        self.assertEqual(self.run_candidate(candidate).verdicts, ["correct"] * 3,
                         "kept outputs must not be overwritten by later reference calls")
        descriptor = self.trial_inputs(0, 11)
        job = self.reference.jobs["job"]
        saved = transfer.import_tree(descriptor, "cpu", clone=True)[0]
        self.assertTrue(torch.equal(job.inputs[0], saved), "the reference ran on a clone; its inputs are pristine")


class TupleProblemTest(RoleTestBase):
    problem = programs.TUPLE_PROBLEM
    seeds = [5]

    def test_tuple_outputs(self):
        correct = programs.TUPLE_PROBLEM.replace("class Model(", "class ModelNew(")
        self.assertEqual(self.run_candidate(correct).verdicts, ["correct"])
        single = correct.replace("return a + b, (a * b).sum()", "return a + b")
        self.assertEqual(self.run_candidate(single).verdicts, ["shape_mismatch"])
        as_list = correct.replace("return a + b, (a * b).sum()", "return [a + b, (a * b).sum()]")
        self.assertEqual(self.run_candidate(as_list).verdicts, ["correct"])
        as_number = correct.replace("return a + b, (a * b).sum()", "return a + b, float((a * b).sum())")
        self.assertEqual(self.run_candidate(as_number).verdicts, ["correct"],
                         "a Python float compares as a 0-d float32 tensor")


if __name__ == "__main__":
    unittest.main()


class AliasingTest(RoleTestBase):
    problem = programs.RELU_OF_RAND_PROBLEM
    problem_name = "relu_of_rand"

    def test_returning_the_input_is_correct_and_said(self):
        outcome = self.run_candidate(programs.RETURNS_INPUT)
        self.assertEqual(outcome.verdicts, ["correct"] * 3)
        self.assertEqual(outcome.aliased, [True] * 3)

    def test_a_computed_output_does_not_alias(self):
        outcome = self.run_candidate("import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n"
                                     "    def forward(self, x):\n        return torch.relu(x)\n")
        self.assertEqual(outcome.aliased, [False] * 3)


class TraitsTest(unittest.TestCase):
    """reference.traits on problems written to have (or lack) each trait."""

    def judge(self, problem, tolerance="per_dtype"):
        work = tempfile.mkdtemp(prefix="dicebench-traits-")
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        os.mkdir(os.path.join(work, "private"))
        reference = ReferenceRole("cpu", os.path.join(work, "private"))
        handlers = reference.handlers()
        prepared = handlers["reference.prepare"](protocol.validate_request({
            "type": "reference.prepare", "job": "t", "problem_source": problem, "device": "cpu",
            "init_seed": 3, "work_dir": work, "tolerance": tolerance}))
        self.assertTrue(prepared["ok"], prepared)
        reply = protocol.validate_reply(handlers["reference.traits"](protocol.validate_request(
            {"type": "reference.traits", "job": "t", "seeds": [1, 2, 3]})))
        self.assertTrue(reply["ok"], reply)
        return reply

    def test_each_problem_gets_its_traits(self):
        cases = {
            "linear_relu": (programs.PROBLEM, []),
            "zero": (programs.ZERO_PROBLEM, ["constant_output", "zeros_pass", "near_constant_output"]),
            "relu_of_rand": (programs.RELU_OF_RAND_PROBLEM, ["output_equals_input"]),
            "tiny_softmax": (programs.TINY_SOFTMAX_PROBLEM, ["constant_output", "zeros_pass", "near_constant_output"]),
            # A scalar is never "near constant" (its own mean is itself); a small mean varies with
            # its inputs, a mean over millions of draws hardly does: one draw's answer passes for all.
            "small_mean": (programs.mean_problem(256), []),
            "large_mean": (programs.mean_problem(4 << 20), ["constant_output"]),
        }
        for name, (problem, traits) in cases.items():
            with self.subTest(name):
                reply = self.judge(problem)
                self.assertEqual(reply["traits"], traits)
                self.assertEqual(reply["details"]["draws"], 3)

    def test_the_tolerance_decides_what_passes(self):
        # A softmax over 256 elements: its values (2e-3 to 7e-3) fail 1e-4 but pass 1e-2 as zeros.
        problem = programs.TINY_SOFTMAX_PROBLEM.replace("65536", "256")
        self.assertNotIn("zeros_pass", self.judge(problem)["traits"])
        self.assertIn("zeros_pass", self.judge(problem, tolerance="uniform")["traits"])

    def test_bandwidth_is_measured(self):
        reference = ReferenceRole("cpu", tempfile.mkdtemp(prefix="dicebench-bw-"))
        reply = protocol.validate_reply(reference.handlers()["reference.bandwidth"]({"job": ""}))
        self.assertGreater(reply["bytes_per_second"], 1e8)
        self.assertTrue(reply["method"].startswith("cpu_copy_"))


class OutputSlotTest(unittest.TestCase):
    """The slot timed outputs are copied into on CUDA (exported once, not once per call)."""

    def test_a_slot_takes_outputs_of_its_structure_only(self):
        from collections import namedtuple

        from dicebench_harness import sealed
        from dicebench_harness.candidate import _copy_tree, _same_structure
        from dicebench_harness.transfer import map_tensors

        def _empty_like_tree(value):
            return map_tensors(value, sealed.empty_like)

        Pair = namedtuple("Pair", "a b")
        outputs = (torch.ones(2, 3), [torch.zeros(4), 7], Pair(torch.arange(3), 2.5))
        slot = _empty_like_tree(outputs)
        self.assertTrue(_same_structure(slot, outputs))
        _copy_tree(slot, outputs)
        self.assertTrue(torch.equal(slot[0], outputs[0]))
        self.assertTrue(torch.equal(slot[2].a, outputs[2].a))
        self.assertIs(type(slot[2]), Pair)
        self.assertEqual((slot[1][1], slot[2].b), (7, 2.5))
        self.assertIsNot(slot[0], outputs[0])
        nan = (torch.ones(1), float("nan"))
        self.assertTrue(_same_structure(_empty_like_tree(nan), nan))  # a NaN output keeps its slot
        for changed in ((torch.ones(2, 4), outputs[1], outputs[2]),
                        (torch.ones(2, 3, dtype=torch.float64), outputs[1], outputs[2]),
                        (outputs[0], [torch.zeros(4), 8], outputs[2]),
                        (outputs[0], outputs[1])):
            self.assertFalse(_same_structure(slot, changed))
