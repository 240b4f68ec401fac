"""dicebench from Python: read results databases and evaluate candidates.

    import dicebench
    db = dicebench.open("results/dicebench.db")
    db.runs()                      # lists of dicts, or pandas DataFrames when pandas is installed
    dicebench.report(3)            # the figures of `dicebench report 3`, as a dict
    e = dicebench.evaluate(problem_src, candidate_src, device="cuda")
    e.verdict, e.correct, e.speedup
    dicebench.VERDICTS, dicebench.FLAGS   # the names a verdict and its flags take
    dicebench.EVALUATION_FIELDS    # each field of an evaluation: where it is kept, its unit, what it means

evaluate() runs each candidate in a fresh, isolated dicebench-worker process (the same workers
as `dicebench run` and `dicebench eval`), keeps the reference worker warm between calls, may be
called from many threads at once, and answers a repeated (problem, candidate) from memory.
"""

from ._dicebench import EVALUATION_FIELDS, FLAGS, SCHEMA_VERSION, VERDICTS, Error
from ._errors import CandidateError, ProblemError
from ._evaluate import Evaluation, Evaluator, Timing, evaluate
from ._results import DEFAULT_DATABASE, Results, open, report

__all__ = [
    "DEFAULT_DATABASE",
    "EVALUATION_FIELDS",
    "FLAGS",
    "SCHEMA_VERSION",
    "VERDICTS",
    "CandidateError",
    "Error",
    "Evaluation",
    "Evaluator",
    "ProblemError",
    "Results",
    "Timing",
    "evaluate",
    "open",
    "report",
]
