"""dicebench from Python: read results databases and evaluate candidates.

    import dicebench
    db = dicebench.open("results/dicebench.db")
    db.runs()                      # lists of dicts, or pandas DataFrames when pandas is installed
    dicebench.report(3)            # the figures of `dicebench report 3`, as a dict
    e = dicebench.evaluate(problem_src, candidate_src, device="cuda")
    e.verdict, e.correct, e.speedup
    dicebench.evaluate(problems, candidates, device="cuda")   # a batch: verdicts in input order
    with dicebench.Evaluator(suite="kernelbench") as ev:       # a trainer's reward: raw completions,
        ev.judge("kernelbench/level2/40", completions, reward="correctness")  # every item judged
    dicebench.VERDICTS, dicebench.FLAGS   # the names a verdict and its flags take
    dicebench.EVALUATION_FIELDS    # each field of an evaluation: where it is kept, its unit, what it means

evaluate() runs each candidate in a fresh, isolated dicebench-worker process through the evaluation
session of `dicebench run` and `dicebench eval` (with suite=..., the suite's review and its flags
too), keeps its evaluators and reference workers warm between calls, shares a batch out over every
GPU (or CPU worker), may be called from many threads at once, and answers a repeated (problem,
candidate) from memory.
"""

from ._dicebench import SCHEMA_VERSION, Error
from ._errors import ProblemError
from ._evaluate import Evaluator, evaluate
from ._record import Evaluation, Judgement, Timing
from ._spec import EVALUATION_FIELDS, FLAGS, ITEM_STATUSES, REWARD_SHAPES, REWARD_SHAPES_PARAMS, VERDICTS
from ._results import DEFAULT_DATABASE, Results, open, report

__all__ = [
    "DEFAULT_DATABASE",
    "EVALUATION_FIELDS",
    "FLAGS",
    "ITEM_STATUSES",
    "REWARD_SHAPES",
    "REWARD_SHAPES_PARAMS",
    "SCHEMA_VERSION",
    "VERDICTS",
    "Error",
    "Evaluation",
    "Evaluator",
    "Judgement",
    "ProblemError",
    "Results",
    "Timing",
    "evaluate",
    "open",
    "report",
]
