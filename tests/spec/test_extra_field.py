"""A field added to the evaluation record in one place (tests/spec/extra_field.toml, generated into a
test build of the record) reaches every output: `dicebench eval --json`, the database (a column of
the next schema version; the probe stores a row and reads it back with sqlite3 here too), the flat
export record, eval's text, and the Python module's Evaluation.to_dict() and EVALUATION_FIELDS.

    test_extra_field.py PROBE GENERATED_PYTHON_DIR
"""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import unittest

PROBE, GENERATED = sys.argv[1], sys.argv[2]
sys.path.insert(0, GENERATED)

import _record  # noqa: E402  (the overlay's dicebench package record)
import dicebench_spec  # noqa: E402


class ExtraField(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        cls.database = os.path.join(cls.folder.name, "results.db")
        done = subprocess.run([PROBE, cls.database], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise AssertionError(f"the probe failed: {done.stderr}")
        cls.out = json.loads(done.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_eval_json(self):
        self.assertEqual(self.out["eval_json"]["probe_ms"], 1.25)

    def test_database(self):
        self.assertEqual(self.out["schema_version"], 10)  # the column's version, with no step written for it
        self.assertEqual(self.out["row_probe_ms"], 1.25)
        with sqlite3.connect(self.database) as db:
            columns = [row[1] for row in db.execute("PRAGMA table_info(evaluations)")]
            self.assertIn("probe_ms", columns)
            self.assertEqual(db.execute("SELECT probe_ms FROM evaluations").fetchone()[0], 1.25)
            self.assertEqual(db.execute("PRAGMA user_version").fetchone()[0], 10)

    def test_export_record(self):
        self.assertEqual(self.out["export_record"]["probe_ms"], 1.25)
        self.assertEqual(list(self.out["export_record"])[-1], "probe_ms")  # where the spec put it

    def test_text(self):
        self.assertIn("probe: 1.25 ms\n", self.out["text"])

    def test_python(self):
        evaluation = _record.Evaluation.from_json(self.out["eval_json"])
        self.assertEqual(evaluation.probe_ms, 1.25)
        self.assertEqual(evaluation.to_dict()["probe_ms"], 1.25)
        fields = {f["json"]: f for f in dicebench_spec.EVALUATION_FIELDS}
        self.assertEqual(fields["probe_ms"]["stored"], "evaluations.probe_ms")
        self.assertEqual(fields["probe_ms"]["python"], "probe_ms")
        self.assertEqual(fields["probe_ms"]["unit"], "ms")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
