"""A real worker process (`python -m dicebench_harness`, as dicebench-worker runs serve) asked to end:
it answers shutdown with shutdown.done, exits 0, and runs none of a candidate's code after its device
memory is cleared (no atexit hook, no finalizer: it exits without finalizing Python)."""

import os
import shutil
import tempfile
import textwrap
import unittest

from dicebench_harness.client import WorkerProcess

import programs

# Leaves a mark from every place Python's finalization would run the candidate's code.
LEAVES_MARKS = textwrap.dedent('''
    import atexit
    import weakref

    MARKS = {marks!r}


    def mark(name):
        with open(MARKS + "/" + name, "w") as handle:
            handle.write(name)


    atexit.register(mark, "atexit")


    class Finalized:
        def __del__(self):
            mark("del")


    KEPT = Finalized()
    weakref.finalize(KEPT, mark, "finalize")


    class ModelNew(Model):
        pass
''')


class WorkerExitTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="dicebench-exit-")
        os.chmod(self.dir, 0o700)
        self.addCleanup(shutil.rmtree, self.dir, True)

    def test_a_candidate_worker_answers_shutdown_and_exits_without_running_candidate_code(self):
        marks = os.path.join(self.dir, "marks")
        os.mkdir(marks)
        work = os.path.join(self.dir, "job")
        os.mkdir(work, 0o700)
        with WorkerProcess("candidate", log_path=os.path.join(self.dir, "candidate.log")) as candidate:
            loaded = candidate.request({"type": "candidate.load", "job": "c1", "problem_source": programs.PROBLEM,
                                        "candidate_source": LEAVES_MARKS.format(marks=marks), "device": "cpu",
                                        "work_dir": work})
            self.assertTrue(loaded["ok"], loaded)
            answer = candidate.request({"type": "shutdown", "job": "c1"})
            self.assertEqual(answer, {"type": "shutdown.done", "job": "c1", "zeroed_bytes": 0, "message": ""})
            self.assertEqual(candidate.close(60), 0)
        self.assertEqual(os.listdir(marks), [], "the candidate's code ran after shutdown")

    def test_a_reference_worker_answers_shutdown_and_exits(self):
        with WorkerProcess("reference", log_path=os.path.join(self.dir, "reference.log")) as reference:
            self.assertEqual(reference.request({"type": "shutdown"})["type"], "shutdown.done")
            self.assertEqual(reference.close(60), 0)


if __name__ == "__main__":
    unittest.main()
