"""The dicebench package without workers: it imports with its stubs, its Evaluation has the fields of
the evaluation record's one definition (dicebench.EVALUATION_FIELDS), and bad input (sources that
are not a candidate or a problem, databases that are missing, foreign or newer, runs that do not
exist) raises one clear exception each."""

import ast
import dataclasses
import os
import pathlib
import sqlite3
import tempfile
import unittest

import dicebench
from support import NOT_A_CANDIDATE, PROBLEM, read


class Package(unittest.TestCase):
    def test_public_names_and_stubs(self):
        for name in dicebench.__all__:
            self.assertTrue(hasattr(dicebench, name), name)
        folder = pathlib.Path(dicebench.__file__).parent
        self.assertTrue((folder / "py.typed").exists())
        stub = (folder / "__init__.pyi").read_text()
        for name in dicebench.__all__:
            self.assertIn(name, stub)
        self.assertTrue(dicebench.evaluate.__doc__ and dicebench.open.__doc__ and dicebench.report.__doc__)
        self.assertTrue(issubclass(dicebench.ProblemError, dicebench.Error))

    def test_evaluation_attributes_are_the_fields_table(self):
        # dicebench.EVALUATION_FIELDS and Evaluation are generated from core/spec/evaluation.toml;
        # Evaluation gives an attribute to each field the table names, and to nothing else but cached
        # (the Evaluator's own), typed in the generated module the stub re-exports.
        named = {f["python"] for f in dicebench.EVALUATION_FIELDS if f["python"]}
        attributes = {f.name for f in dataclasses.fields(dicebench.Evaluation)} - {"cached"}
        self.assertEqual(attributes, named)
        folder = pathlib.Path(dicebench.__file__).parent
        stub = ast.parse((folder / "__init__.pyi").read_text())
        reexported = {(n.module, a.name) for n in stub.body if isinstance(n, ast.ImportFrom) for a in n.names}
        self.assertIn(("_record", "Evaluation"), reexported)
        record = ast.parse((folder / "_record.py").read_text())
        [evaluation] = [n for n in record.body if isinstance(n, ast.ClassDef) and n.name == "Evaluation"]
        typed = {n.target.id for n in evaluation.body if isinstance(n, ast.AnnAssign)} - {"cached", "details"}
        self.assertEqual(typed, named - {"details"})
        self.assertIn("correct", dicebench.VERDICTS)
        self.assertIn("borderline", dicebench.FLAGS)
        for field in dicebench.EVALUATION_FIELDS:
            self.assertEqual(set(field), {"json", "stored", "python", "worker", "type", "unit", "meaning"})
        # Each field's JSON path is in eval --json's object (an evaluation's to_dict()).
        evaluation = dicebench.Evaluation.from_json({"verdict": "correct", "correct": True, "compiled": True,
                                                     "device": "cpu", "runtime": None})
        self.assertEqual(evaluation.verdict, "correct")
        self.assertIsNone(evaluation.runtime)


class BadSources(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.evaluator = dicebench.Evaluator("cpu")  # starts no worker before its first evaluation
        cls.problem = read(PROBLEM)

    @classmethod
    def tearDownClass(cls):
        cls.evaluator.close()

    def test_a_problem_that_is_not_one(self):
        # Not a problem: the reference cannot be built (a problem's failure, never a candidate's).
        with self.assertRaises(dicebench.ProblemError) as raised:
            self.evaluator.evaluate("class Model: pass\n", "class ModelNew: pass\n")
        self.assertIn("the reference program failed", str(raised.exception))
        with self.assertRaises(TypeError):
            self.evaluator.evaluate(self.problem, b"class ModelNew: pass")

    def test_bad_settings(self):
        with self.assertRaises(dicebench.Error) as raised:
            dicebench.Evaluator("cpu", tolerance="loose")
        self.assertIn("eval.tolerance must be per_dtype or uniform", str(raised.exception))
        with self.assertRaises(dicebench.Error):
            dicebench.Evaluator("tpu")
        # Values that would make every verdict wrong, or run the machine out of processes, are refused
        # when the Evaluator is made, not after (inf seconds became 0 ms: every candidate timed out).
        for settings, message in (({"timeout": float("inf")}, "eval.timeout_s"), ({"timeout": 1e16}, "eval.timeout_s"),
                                  ({"compile_timeout": float("nan")}, "eval.compile_timeout_s"),
                                  ({"timing_budget": 0}, "eval.timing_budget_s"), ({"workers": 10**6}, "eval.cpu_workers"),
                                  ({"gpu_slots": 99}, "eval.gpu_slots"),
                                  ({"spares": 100000}, "spares must be from 0 to 64"),
                                  ({"config": {"eval.bogus": "1"}}, "unknown setting 'eval.bogus'")):
            with self.assertRaises(dicebench.Error, msg=str(settings)) as raised:
                dicebench.Evaluator("cpu", **settings)
            self.assertIn(message, str(raised.exception))
        # An argument means what it says: not truthy text, nor overridden by config.
        with self.assertRaises(TypeError):
            dicebench.Evaluator("cpu", fastpath="off")
        with self.assertRaises(ValueError) as raised:
            dicebench.Evaluator("cpu", trials=3, config={"eval.trials": "9"})
        self.assertIn("config sets 'eval.trials', which an argument of Evaluator sets", str(raised.exception))
        for cache_size in ("x", None, -1):
            with self.assertRaises(ValueError):
                dicebench.Evaluator("cpu", cache_size=cache_size)

    def test_closed_evaluator_refuses(self):
        evaluator = dicebench.Evaluator("cpu")
        evaluator.close()
        with self.assertRaises(dicebench.Error) as raised:
            evaluator.evaluate(self.problem, read(os.path.join(os.path.dirname(PROBLEM), "correct.py")))
        self.assertIn("closed", str(raised.exception))


class BadDatabases(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.folder.name, "x.db")

    def tearDown(self):
        self.folder.cleanup()

    def assert_refused(self, message: str):
        with self.assertRaises(dicebench.Error) as raised:
            dicebench.open(self.path)
        self.assertIn(message, str(raised.exception))

    def test_missing(self):
        self.assert_refused(f"no database at {self.path}")
        self.assertFalse(os.path.exists(self.path))  # never created

    def test_another_programs_database(self):
        with sqlite3.connect(self.path) as db:
            db.execute("create table notes (text)")
        self.assert_refused("not a dicebench database")

    def test_not_sqlite(self):
        pathlib.Path(self.path).write_text("hello\n" * 100)
        with self.assertRaises(dicebench.Error):
            dicebench.open(self.path)

    def test_newer_schema(self):
        with sqlite3.connect(self.path) as db:
            db.execute("create table runs (id)")
            db.execute("pragma application_id = 1145652037")  # "DICE"
            db.execute(f"pragma user_version = {dicebench.SCHEMA_VERSION + 1}")
        self.assert_refused("was written by a newer dicebench")


if __name__ == "__main__":
    unittest.main()
