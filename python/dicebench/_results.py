"""Reading a results database: runs, samples, evaluations and reports, as lists of dicts or, where
pandas is installed, DataFrames."""

import json
import os
from typing import Any

from . import _dicebench
from ._dicebench import Error

DEFAULT_DATABASE = "results/dicebench.db"


def _frame_wanted(frame: bool | None) -> bool:
    if frame is not None:
        if not isinstance(frame, bool):  # "no" would read as True
            raise TypeError(f"frame is True, False or None, not {frame!r}")
        return frame
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


class Results:
    """A dicebench results database, opened read-only (dicebench.open)."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self.schema_version: int = _dicebench.check_database(self.path)

    def __repr__(self) -> str:
        return f"dicebench.Results({self.path!r})"

    def query(self, sql: str, frame: bool | None = None) -> Any:
        """Rows of one read-only SQL statement: a DataFrame where pandas is installed (or
        frame=True), else a list of dicts (or frame=False)."""
        columns, rows = _dicebench.query(self.path, sql)
        if _frame_wanted(frame):
            import pandas

            return pandas.DataFrame.from_records(rows, columns=columns)
        return [dict(zip(columns, row)) for row in rows]

    def _run_filter(self, run: int | None, column: str = "run") -> str:
        """A where clause keeping one run's rows (nothing for None); Error when there is no such run."""
        if run is None:
            return ""
        if not isinstance(run, int) or isinstance(run, bool):
            raise TypeError(f"a run is an integer id, not {type(run).__name__}")
        if not _dicebench.query(self.path, f"select 1 from runs where id = {run}")[1]:
            raise Error(f"no run {run} in {self.path}")
        return f" where {column} = {run}"

    def runs(self, frame: bool | None = None) -> Any:
        """Every run, oldest first: model, suite, status, settings, versions."""
        return self.query("select * from runs order by id", frame)

    def samples(self, run: int | None = None, text: bool = False, frame: bool | None = None) -> Any:
        """Samples (of one run, or all), by id, with their level and extraction details (JSON or None);
        the completion and candidate sources with text=True."""
        # Samples carry their level since schema 7; before, it is their problem's.
        level = ("level" if self.schema_version >= 7 else
                 "(select p.level from problems p where p.run = samples.run and p.problem_id = samples.problem_id) as level")
        columns = f"id, run, {level}, problem_id, sample_index, prompt_hash, extraction, gen_stats, created"
        # What the suite measured about the answer (kernel infilling's exact match and edit distance), since schema 8.
        columns += ", extraction_details" if self.schema_version >= 8 else ", null as extraction_details"
        if not isinstance(text, bool):
            raise TypeError(f"text is True or False, not {text!r}")
        if text:
            columns += ", completion, candidate"
        return self.query(f"select {columns} from samples{self._run_filter(run)} order by id", frame)

    def evaluations(self, run: int | None = None, frame: bool | None = None) -> Any:
        """Evaluations (of one run, or all) with their sample's run, by sample id."""
        where = self._run_filter(run, "s.run")
        return self.query(
            f"select s.run as run, e.* from evaluations e join samples s on s.id = e.sample{where} order by e.sample",
            frame,
        )

    def sample_results(self, run: int | None = None, frame: bool | None = None) -> Any:
        """One row per sample with its problem, verdict, timings and speedup (the sample_results view)."""
        return self.query(f"select * from sample_results{self._run_filter(run)} order by sample", frame)

    def report(self, run: int) -> dict[str, Any]:
        """The figures of `dicebench report RUN --json`: per level and in total, compiled and correct
        rates, fast_p, geometric-mean speedup, pass@k and verdict counts."""
        if not isinstance(run, int) or isinstance(run, bool):
            raise TypeError(f"a run is an integer id, not {type(run).__name__}")
        return json.loads(_dicebench.report_json(self.path, run))


def open(path: str | os.PathLike[str] = DEFAULT_DATABASE) -> Results:  # noqa: A001 (dicebench.open)
    """Opens a dicebench results database read-only. dicebench.Error when the file is missing, is
    not a dicebench database, or was written by a newer dicebench."""
    return Results(path)


def report(run: int, db: str | os.PathLike[str] = DEFAULT_DATABASE) -> dict[str, Any]:
    """The figures of `dicebench report RUN --json` for a run of the database `db`."""
    return Results(db).report(run)
