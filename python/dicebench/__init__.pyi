# Type stubs of the dicebench package's public API (the implementation is in _results.py,
# _evaluate.py and the compiled _dicebench).
import os
from collections.abc import Sequence
from typing import Any, overload

from ._dicebench import EVALUATION_FIELDS as EVALUATION_FIELDS
from ._dicebench import FLAGS as FLAGS
from ._dicebench import SCHEMA_VERSION as SCHEMA_VERSION
from ._dicebench import VERDICTS as VERDICTS
from ._dicebench import Error as Error

DEFAULT_DATABASE: str

class CandidateError(Error, ValueError): ...
class ProblemError(Error, ValueError): ...

class Results:
    path: str
    schema_version: int
    def __init__(self, path: str | os.PathLike[str]) -> None: ...
    def query(self, sql: str, frame: bool | None = None) -> Any: ...
    def runs(self, frame: bool | None = None) -> Any: ...
    def samples(self, run: int | None = None, text: bool = False, frame: bool | None = None) -> Any: ...
    def evaluations(self, run: int | None = None, frame: bool | None = None) -> Any: ...
    def sample_results(self, run: int | None = None, frame: bool | None = None) -> Any: ...
    def report(self, run: int) -> dict[str, Any]: ...

def open(path: str | os.PathLike[str] = ...) -> Results: ...
def report(run: int, db: str | os.PathLike[str] = ...) -> dict[str, Any]: ...

class Timing:
    median_ms: float
    mean_ms: float
    std_ms: float
    min_ms: float
    max_ms: float
    p10_ms: float
    p90_ms: float
    trials: int
    stop_reason: str
    warm_calls: int

class Evaluation:
    verdict: str
    correct: bool
    compiled: bool
    device: str
    runtime: Timing | None
    baseline: Timing | None
    speedup: float | None
    max_abs_diff: float | None
    mean_abs_diff: float | None
    failed_trial: int | None
    compile_path: str | None
    error_class: str
    error_message: str
    seconds: float
    cached: bool
    margin: float | None
    flags: dict[str, str]
    details: dict[str, Any]
    def to_dict(self) -> dict[str, Any]: ...

class Evaluator:
    def __init__(
        self,
        device: str | None = None,
        *,
        trials: int = 5,
        tolerance: str = "per_dtype",
        timeout: float = 300.0,
        compile_timeout: float = 600.0,
        fastpath: bool = True,
        model_mode: str = "train",
        baseline: str = "eager",
        timing_budget: float = 10.0,
        workers: int = 2,
        gpus: str = "all",
        spares: int = 1,
        cache_size: int = 4096,
        sandbox: str = "best",
        suite: str | None = None,
        config: dict[str, str] | None = None,
        db: str | os.PathLike[str] | None = None,
    ) -> None: ...
    @property
    def device(self) -> str: ...
    @property
    def sandbox(self) -> dict[str, Any]: ...
    @property
    def size(self) -> int: ...
    @property
    def suite(self) -> str: ...
    @property
    def evaluators_started(self) -> int: ...
    @overload
    def evaluate(self, problem: str, candidate: str) -> Evaluation: ...
    @overload
    def evaluate(self, problem: str | Sequence[str], candidate: Sequence[str]) -> list[Evaluation]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Evaluator: ...
    def __exit__(self, *exc: object) -> None: ...

@overload
def evaluate(problem: str, candidate: str, device: str | None = None, trials: int = 5, **settings: Any) -> Evaluation: ...
@overload
def evaluate(problem: str | Sequence[str], candidate: Sequence[str], device: str | None = None, trials: int = 5,
             **settings: Any) -> list[Evaluation]: ...
