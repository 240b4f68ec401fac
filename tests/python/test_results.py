"""dicebench.open and dicebench.report on a database made by a real CPU-device run: runs, samples,
evaluations and per-sample results as dicts and DataFrames, the same report as `dicebench report
--json`, and runs that do not exist."""

import importlib.util
import json
import os
import shutil
import tempfile
import unittest

import dicebench
from support import KERNELBENCH, cli

REPLAY = {
    # Problem 1 adds two tensors, 2 squares a ReLU, 10 sums rows: one right, one wrong, one without code.
    "level_1_problem_1_sample_0_kernel.py": "import torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x, y):\n        return x + y\n",
    "level_1_problem_2_sample_0_kernel.py": "import torch, torch.nn as nn\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n",
    "level_1_problem_10_sample_0.txt": "I would rather not.",
}


class ResultsOfARun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="dicebench-python-results-")
        replay = os.path.join(cls.folder, "replay")
        os.makedirs(replay)
        for name, text in REPLAY.items():
            with open(os.path.join(replay, name), "w") as f:
                f.write(text)
        cls.db = os.path.join(cls.folder, "results.db")
        done = cli("run", "--model", "replay:" + replay, "--suite", "kernelbench-l1", "--kernelbench-root", KERNELBENCH,
                   "--device", "cpu", "--db", cls.db)
        if done.returncode != 0:
            raise AssertionError(done.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.folder)

    def test_tables_as_dicts(self):
        db = dicebench.open(self.db)
        self.assertEqual(db.schema_version, dicebench.SCHEMA_VERSION)
        runs = db.runs(frame=False)
        self.assertEqual([(r["id"], r["suite"], r["status"]) for r in runs], [(1, "kernelbench-l1", "finished")])
        samples = db.samples(1, frame=False)
        self.assertEqual([s["problem_id"] for s in samples], [1, 2, 10])
        self.assertEqual([s["level"] for s in samples], [1, 1, 1])
        self.assertNotIn("completion", samples[0])
        self.assertEqual([s["extraction_details"] for s in samples], [None, None, None])  # a KernelBench run
        self.assertIn("x + y", db.samples(1, text=True, frame=False)[0]["candidate"])
        evaluations = db.evaluations(1, frame=False)
        self.assertEqual([e["status"] for e in evaluations], ["correct", "output_mismatch", "extraction_failed"])
        self.assertTrue(all(e["run"] == 1 for e in evaluations))
        results = db.sample_results(frame=False)
        self.assertEqual([(r["problem_id"], r["verdict"], r["correct"]) for r in results],
                         [(1, "correct", 1), (2, "output_mismatch", 0), (10, "extraction_failed", 0)])

    @unittest.skipUnless(importlib.util.find_spec("pandas"), "pandas is not installed")
    def test_tables_as_frames(self):
        import pandas

        frame = dicebench.open(self.db).evaluations(frame=True)
        self.assertIsInstance(frame, pandas.DataFrame)
        self.assertEqual(list(frame["status"]), ["correct", "output_mismatch", "extraction_failed"])

    def test_default_follows_pandas(self):
        runs = dicebench.open(self.db).runs()
        expected = "DataFrame" if importlib.util.find_spec("pandas") else "list"
        self.assertEqual(type(runs).__name__, expected)

    def test_report_equals_the_cli(self):
        done = cli("report", "1", "--db", self.db, "--json")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(dicebench.report(1, db=self.db), json.loads(done.stdout))
        total = dicebench.open(self.db).report(1)["total"]
        self.assertEqual((total["correct"], total["decided"]), (1, 3))

    def test_runs_that_do_not_exist(self):
        db = dicebench.open(self.db)
        for call in (lambda: db.report(7), lambda: db.samples(7), lambda: db.evaluations(7), lambda: dicebench.report(7, db=self.db)):
            with self.assertRaises(dicebench.Error) as raised:
                call()
            self.assertIn("no run 7", str(raised.exception))
        with self.assertRaises(TypeError):
            db.samples("1; drop table runs")
        for call in (lambda: db.report(True), lambda: db.samples(True), lambda: db.report("1"),  # True is not run 1
                     lambda: db.runs(frame="no"), lambda: db.samples(1, text="no")):  # nor "no" True
            with self.assertRaises(TypeError):
                call()
        with self.assertRaises(dicebench.Error):
            db.query("delete from runs")  # read-only


if __name__ == "__main__":
    unittest.main()
