"""Real worker processes (`python -m dicebench_harness`) over pipes: a full round trip.

prepare -> a fresh candidate worker each: load, init, per trial reference.trial ->
candidate.forward -> reference.compare, timing on batches of calls made ahead (reference.batch,
masked) and a trial after it -> reference.time -> release,
with candidates that print to stdout/stderr and write frame-shaped bytes to fd 1 (they must land in
the log, not in the channel), mutate their inputs, exit in forward, and replace torch.save with a
pickle payload (the reference must refuse it without running it).
"""

import os
import shutil
import tempfile
import unittest

from dicebench_harness import protocol
from dicebench_harness.client import WorkerProcess

import programs

TIMING = {"warmup": 1, "min_trials": 3, "max_trials": 10, "budget_s": 0.5}
SEEDS = [101, 202, 303]


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
            "work_dir": cls.dir, "tolerance": "per_dtype"})
        cls.count = 0

    @classmethod
    def tearDownClass(cls):
        cls.reference.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def forward(self, candidate, job, work, trial, seed):
        ready = self.reference.request({"type": "reference.trial", "job": "p1", "trial": trial, "seed": seed})
        self.assertTrue(ready["ok"], ready)
        return candidate.request({"type": "candidate.forward", "job": job, "trial": trial,
                                  "inputs": ready["inputs"],
                                  "outputs_path": os.path.join(work, f"outputs-{trial}.pt")})

    def compare(self, trial, outputs):
        return self.reference.request({"type": "reference.compare", "job": "p1", "trial": trial,
                                       "outputs": outputs})

    def run_candidate(self, source, timing=None):
        """Replies in order (stopping at the first failure) and the candidate's log."""
        type(self).count += 1
        job = f"c{self.count}"
        work = os.path.join(self.dir, f"cand-{self.count}")
        os.mkdir(work, 0o700)
        log = os.path.join(self.dir, f"cand-{self.count}.log")
        replies = []
        with WorkerProcess("candidate", log_path=log) as candidate:
            self.assertEqual(candidate.hello["role"], "candidate")
            self.assertNotEqual(candidate.hello["pid"], self.reference.hello["pid"])
            replies.append(candidate.request({"type": "candidate.load", "job": job, "problem_source": programs.PROBLEM,
                                              "candidate_source": source, "device": "cpu", "work_dir": work}))
            if replies[-1]["ok"]:
                replies.append(candidate.request({"type": "candidate.init", "job": job, "init_seed": 7,
                                                  "init_inputs": self.prepared["init_inputs"]}))
            for trial, seed in enumerate(SEEDS):
                if not replies[-1].get("ok", True):
                    break
                replies.append(self.forward(candidate, job, work, trial, seed))
                if replies[-1]["ok"]:
                    replies.append(self.compare(trial, replies[-1]["outputs"]))
            if timing and replies[-1].get("ok", True):
                # Fresh inputs for every timed call, made ahead in batches of 5; this test checks every
                # call's outputs.
                ready = []

                def next_call(call):
                    if not ready:
                        made = self.reference.request({"type": "reference.batch", "job": "p1", "budget_bytes": 1 << 30,
                                                       "calls": [{"trial": 10 + c, "seed": 404 + c, "outputs": True,
                                                                  "mask_key": 900 + c} for c in range(call, call + 5)]})
                        self.assertTrue(made["ok"] and made["masked"] and made["made"] == 5, made)
                        ready.extend((call + k, d) for k, d in enumerate(made["inputs"]))
                    following, descriptor = ready.pop(0)
                    self.assertEqual(following, call)
                    return {"inputs": descriptor, "mask_key": 900 + call}

                def answer(done):
                    compared = self.compare(10 + done["call"], done["outputs"])
                    self.assertEqual(compared["verdict"], "correct", compared)
                    if not done["more"]:
                        return {"type": "timing.stop", "job": job}
                    following = done["call"] + 1
                    return {"type": "timing.next", "job": job, "call": following, **next_call(following)}

                replies.append(candidate.request({"type": "candidate.time", "job": job, **next_call(0),
                                                  "outputs_path": os.path.join(work, "outputs-timed.pt"),
                                                  **timing}, answer))
                replies.append(self.forward(candidate, job, work, 4, 505))
                replies.append(self.compare(4, replies[-1]["outputs"]))
            self.assertEqual(candidate.close(), 0)
        with open(log, encoding="utf-8", errors="replace") as handle:
            return replies, handle.read()

    def test_round_trip_with_a_noisy_input_mutating_candidate(self):
        self.assertTrue(self.prepared["ok"], self.prepared)
        self.assertEqual(self.reference.hello["role"], "reference")
        noisy = programs.PRINTS.replace("return (torch.relu(self.lin(x)) * self.scale)",
                                        "y = (torch.relu(self.lin(x)) * self.scale)\n        x.fill_(-5.0)\n"
                                        "        return y")
        replies, log = self.run_candidate(noisy, timing=TIMING)
        self.assertIn("candidate module prints at import", log)
        self.assertIn("candidate forward prints to stdout", log)
        self.assertIn("and to stderr", log)
        self.assertIn('{"type":"bogus"}', log)
        types = [r["type"] for r in replies]
        self.assertEqual(types, ["candidate.loaded", "candidate.ready"]
                         + ["candidate.outputs", "reference.compared"] * 3
                         + ["candidate.timed", "candidate.outputs", "reference.compared"])
        for reply in replies:
            if reply["type"] == "reference.compared":
                self.assertEqual(reply["verdict"], "correct", reply)
            else:
                self.assertTrue(reply["ok"], reply)
        self.assertGreaterEqual(replies[8]["timing"]["trials"], 3)
        self.assertIsNone(replies[8]["profile"], "no device profile on the CPU")

        timed = self.reference.request({"type": "reference.time", "job": "p1", "seed": 9, **TIMING})
        self.assertEqual(timed["type"], "reference.timed")
        self.assertIn(timed["timing"]["stop_reason"], ("converged", "max_trials", "budget"))

    def test_pickle_payload_from_a_candidate_is_refused(self):
        marker = os.path.join(self.dir, "payload-ran")
        replies, _ = self.run_candidate(programs.pickle_payload_candidate(marker))
        compared = [r for r in replies if r["type"] == "reference.compared"]
        self.assertEqual(len(compared), 3)
        for reply in compared:  # its bytes are read as raw bytes, never unpickled
            self.assertIn(reply["verdict"], ("output_mismatch", "shape_mismatch"))
        self.assertFalse(os.path.exists(marker), "the pickle payload must never run")

    def test_exit_in_forward_is_reported_and_the_worker_still_answers(self):
        replies, _ = self.run_candidate(programs.EXITS)
        last = replies[-1]
        self.assertEqual((last["type"], last["ok"], last["error_class"]),
                         ("candidate.outputs", False, "runtime_error"))
        self.assertEqual(last["message"], "SystemExit: 7")

    def test_release_and_errors_over_the_channel(self):
        other = self.reference.request({
            "type": "reference.prepare", "job": "p2", "problem_source": programs.PROBLEM,
            "device": "cpu", "init_seed": 1, "work_dir": self.dir + "/nope"})
        self.assertEqual(other["type"], "error")
        self.assertIn("not a directory", other["message"])
        work = os.path.join(self.dir, "p3")
        os.mkdir(work)
        prepared = self.reference.request({
            "type": "reference.prepare", "job": "p3", "problem_source": programs.PROBLEM,
            "device": "cpu", "init_seed": 1, "work_dir": work})
        self.assertTrue(prepared["ok"])
        self.assertEqual(self.reference.request({"type": "reference.release", "job": "p3"}),
                         {"type": "reference.released", "job": "p3"})
        reply = self.reference.request({"type": "reference.compare", "job": "p3", "trial": 0,
                                        "outputs": {"transport": "raw_file", "path": prepared["init_inputs"],
                                                    "tree": {"list": []}}})
        self.assertEqual(reply["type"], "error")
        self.assertIn("no prepared reference job 'p3'", reply["message"])
        reply = self.reference.request({"type": "candidate.load", "job": "x"})
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
