# Type stubs of the dicebench package's public API (the implementation is in _results.py,
# _evaluate.py and the compiled _dicebench; Evaluation, Judgement, Timing and the vocabularies are generated
# from core/spec into _record.py and _spec.py, typed there).
import os
from collections.abc import Sequence
from typing import Any, overload

from ._dicebench import SCHEMA_VERSION as SCHEMA_VERSION
from ._dicebench import Error as Error
from ._record import Evaluation as Evaluation
from ._record import Judgement as Judgement
from ._record import Timing as Timing
from ._spec import EVALUATION_FIELDS as EVALUATION_FIELDS
from ._spec import FLAGS as FLAGS
from ._spec import ITEM_STATUSES as ITEM_STATUSES
from ._spec import REWARD_SHAPES as REWARD_SHAPES
from ._spec import REWARD_SHAPES_PARAMS as REWARD_SHAPES_PARAMS
from ._spec import VERDICTS as VERDICTS

DEFAULT_DATABASE: str

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
        timing: bool = True,
        workers: int = 2,
        gpus: str = "all",
        gpu_slots: int | str = "auto",
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
    def judge(
        self,
        problems: str | Sequence[str],
        responses: Sequence[str],
        *,
        completions: bool = True,
        ids: Sequence[str] | None = None,
        reward: str | None = None,
        **reward_params: float,
    ) -> list[Judgement]: ...
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
