"""Real worker processes (`python -m dicebench_harness`) over pipes: a full round trip.

prepare -> candidate.run (a fresh candidate worker each) -> compare (trials and timed outputs)
-> time -> release, with candidates that print to stdout/stderr and write frame-shaped bytes to
fd 1 (they must land in the log, not in the channel), mutate their inputs, exit in forward, and
replace torch.save with a pickle payload (the reference must refuse it without running it).
"""

import os
import shutil
import tempfile
import unittest

from dicebench_harness import protocol
from dicebench_harness.client import WorkerProcess

from tests import programs

TIMING = {"warmup": 1, "min_trials": 3, "max_trials": 10, "budget_s": 0.5}


class WorkerProcessTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="dicebench-process-")
        os.chmod(cls.dir, 0o700)
        cls.reference_log = os.path.join(cls.dir, "reference.log")
        cls.reference = WorkerProcess("reference", log_path=cls.reference_log)
        cls.prepared = cls.reference.request({
            "type": "reference.prepare", "job": "p1", "problem_source": programs.PROBLEM,
            "problem_name": "linear_relu", "device": "cpu", "init_seed": 7,
            "input_seeds": [101, 202, 303], "work_dir": cls.dir, "tolerance": "kernelbench"})
        cls.count = 0

    @classmethod
    def tearDownClass(cls):
        cls.reference.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_candidate(self, source, **extra):
        type(self).count += 1
        outputs_dir = os.path.join(self.dir, f"cand-{self.count}")
        os.mkdir(outputs_dir, 0o700)
        log = os.path.join(self.dir, f"cand-{self.count}.log")
        with WorkerProcess("candidate", log_path=log) as candidate:
            self.assertEqual(candidate.hello["role"], "candidate")
            self.assertNotEqual(candidate.hello["pid"], self.reference.hello["pid"])
            result = candidate.request({
                "type": "candidate.run", "job": f"c{self.count}", "candidate_source": source,
                "device": "cpu", "init_seed": 7, "init_inputs": self.prepared["init_inputs"],
                "inputs": self.prepared["inputs"], "outputs_dir": outputs_dir, **extra})
            self.assertEqual(candidate.close(), 0)
        with open(log, encoding="utf-8", errors="replace") as handle:
            return result, handle.read()

    def compare(self, trial, path):
        return self.reference.request({"type": "reference.compare", "job": "p1", "trial": trial,
                                       "outputs_path": path})

    def test_round_trip_with_a_noisy_input_mutating_candidate(self):
        self.assertTrue(self.prepared["ok"], self.prepared)
        self.assertEqual(self.reference.hello["role"], "reference")
        noisy = programs.PRINTS.replace("return (torch.relu(self.lin(x)) * self.scale)",
                                        "y = (torch.relu(self.lin(x)) * self.scale)\n        x.fill_(-5.0)\n"
                                        "        return y")
        result, log = self.run_candidate(noisy, timing=TIMING, timed_output_trials=[2])
        self.assertEqual(result["type"], "candidate.result")
        self.assertTrue(result["ok"], result)
        self.assertIn("candidate module prints at import", log)
        self.assertIn("candidate forward prints to stdout", log)
        self.assertIn("and to stderr", log)
        self.assertIn('{"type":"bogus"}', log)
        for trial, path in enumerate(result["outputs"]):
            reply = self.compare(trial, path)
            self.assertEqual((reply["type"], reply["job"], reply["trial"]),
                             ("reference.compared", "p1", trial))
            self.assertEqual(reply["verdict"], "correct", reply)
        self.assertEqual(self.compare(2, result["timed_outputs"]["2"])["verdict"], "correct")
        self.assertGreaterEqual(result["timing"]["trials"], 3)

        timed = self.reference.request({"type": "reference.time", "job": "p1", **TIMING})
        self.assertEqual(timed["type"], "reference.timed")
        self.assertIn(timed["timing"]["stop_reason"], ("converged", "max_trials", "budget"))

    def test_pickle_payload_from_a_candidate_is_refused(self):
        marker = os.path.join(self.dir, "payload-ran")
        result, _ = self.run_candidate(programs.pickle_payload_candidate(marker))
        self.assertTrue(result["ok"], result)
        for trial, path in enumerate(result["outputs"]):
            reply = self.compare(trial, path)
            self.assertEqual(reply["verdict"], "output_mismatch")
            self.assertIn("not plain tensors", reply["message"])
        self.assertFalse(os.path.exists(marker), "the pickle payload must never run")

    def test_exit_in_forward_is_reported_and_the_worker_still_answers(self):
        result, _ = self.run_candidate(programs.EXITS)
        self.assertEqual((result["ok"], result["stage"], result["error_class"]),
                         (False, "run", "runtime_error"))
        self.assertEqual(result["message"], "SystemExit: 7")

    def test_release_and_errors_over_the_channel(self):
        other = self.reference.request({
            "type": "reference.prepare", "job": "p2", "problem_source": programs.PROBLEM,
            "device": "cpu", "init_seed": 1, "input_seeds": [1], "work_dir": self.dir + "/nope"})
        self.assertEqual(other["type"], "error")
        self.assertIn("not a directory", other["message"])
        work = os.path.join(self.dir, "p3")
        os.mkdir(work)
        prepared = self.reference.request({
            "type": "reference.prepare", "job": "p3", "problem_source": programs.PROBLEM,
            "device": "cpu", "init_seed": 1, "input_seeds": [1], "work_dir": work})
        self.assertTrue(prepared["ok"])
        self.assertEqual(self.reference.request({"type": "reference.release", "job": "p3"}),
                         {"type": "reference.released", "job": "p3"})
        reply = self.reference.request({"type": "reference.compare", "job": "p3", "trial": 0,
                                        "outputs_path": prepared["inputs"][0]})
        self.assertEqual(reply["type"], "error")
        self.assertIn("no prepared reference job 'p3'", reply["message"])
        reply = self.reference.request({"type": "candidate.run", "job": "x"})
        self.assertEqual(reply["type"], "error")


class MainEntryTest(unittest.TestCase):
    def test_eof_exits_zero_and_logs(self):
        log = tempfile.NamedTemporaryFile(suffix=".log", delete=False)
        log.close()
        self.addCleanup(os.unlink, log.name)
        worker = WorkerProcess("candidate", log_path=log.name)
        worker.process.stdin.close()
        self.assertIsNone(protocol.read_frame(worker.process.stdout.fileno()))
        self.assertEqual(worker.process.wait(timeout=30), 0)
        worker.process.stdout.close()
        with open(log.name) as handle:
            text = handle.read()
        self.assertIn("candidate worker on cpu (cpu) ready", text)
        self.assertIn("end of input", text)


if __name__ == "__main__":
    unittest.main()
