"""evaluate(): candidates judged by dicebench's isolated workers, for scripts and for reinforcement-
learning trainers that use the verdict as a reward. An Evaluator holds the evaluation session of
`dicebench run` and `dicebench eval` (the same settings, sandbox check and, with a suite, the
suite's review and its flags): one evaluator per GPU (or `workers` on the CPU), each with a warm
reference worker and spare candidate workers, started once and kept for the Evaluator's life. A
batch (many candidates, many problems) is shared out over every slot, each keeping its prefetch
room full, and comes back in input order. Every candidate still runs in a fresh process of its
own, so one that crashes, hangs or misbehaves ends as a verdict and never harms the caller. Calls
release the GIL and may come from many threads. Results are cached in memory by (problem,
candidate) within an Evaluator (the settings are the Evaluator's own)."""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import os
import pathlib
import threading
import warnings
from collections.abc import Sequence
from typing import Any, overload

from . import _dicebench
from ._dicebench import Error
from ._errors import CandidateError, ProblemError
from ._record import Evaluation
from ._sources import check_candidate, check_problem


def _worker_executable() -> str:
    """$DICEBENCH_WORKER, else bin/dicebench-worker of the build tree or install this package is in
    (both put the package in lib/dicebench/python/dicebench)."""
    beside = pathlib.Path(__file__).resolve().parents[4] / "bin" / "dicebench-worker"
    worker = os.environ.get("DICEBENCH_WORKER") or str(beside)
    if not os.access(worker, os.X_OK):
        raise Error(f"no dicebench-worker at {worker} (build dicebench, or set DICEBENCH_WORKER)")
    return worker


class Evaluator:
    """Evaluates candidates with fixed settings through a pool of isolated workers.

    device: "cuda" or "cpu" (default: cuda where a GPU is visible). trials: correctness trials.
    tolerance: "per_dtype" (1e-4 for fp32 and other floats, 1e-2 for fp16/bf16) or "uniform" (1e-2
    for every float dtype); "kernelbench" and "compat" are their old names. timeout and compile_timeout: seconds
    a candidate may run, and take to start and compile. fastpath: NVRTC for load_inline calls
    (CUDA). model_mode: "train" (KernelBench's) or "eval". baseline: "eager" or "compile".
    timing_budget: seconds of timing per call site. workers: evaluators on the CPU (default 2);
    on CUDA there is one per GPU of `gpus` ("all" or a list such as "0,1"). spares: candidate
    workers each evaluator keeps started (torch imported) for the next calls (0 to 64). cache_size:
    results kept in memory (0: none). sandbox: "best" (every protection this machine allows around each
    candidate: namespaces, a read-only filesystem, limits; what is missing is warned about once),
    "require" (dicebench.Error unless all are available) or "off"; the `sandbox` property says
    which are active. suite: the suite the problems are from ("kernelbench-l1"; default none): its
    review flags each candidate as `dicebench run` does (backend_unused), and the workers' Python
    must have the modules its candidates import; a problem not in it is a dicebench.Error. config:
    any further setting as `--set` takes them ({"kernelbench.root": ..., "kernelbench.backend":
    "triton"}), not one an argument gives (ValueError), nor one nothing reads (dicebench.Error). db: a results database whose stored baselines, traits and bandwidths are used as a
    run uses them (read, never written). Use as a context manager, or call close()."""

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
    ):
        if not isinstance(fastpath, bool):  # "off" would read as True
            raise TypeError(f"fastpath is True or False, not {fastpath!r}")
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size < 0:
            raise ValueError(f"cache_size is a count of results (0: none), not {cache_size!r}")
        settings = {
            "eval.trials": str(trials),
            "eval.tolerance": tolerance,
            "eval.timeout_s": str(timeout),
            "eval.compile_timeout_s": str(compile_timeout),
            "eval.fastpath": "on" if fastpath else "off",
            "eval.model_mode": model_mode,
            "eval.baseline": baseline,
            "eval.timing_budget_s": str(timing_budget),
            "eval.cpu_workers": str(workers),
            "eval.gpus": gpus,
            "eval.sandbox": sandbox,
        }
        if device is not None:
            settings["eval.device"] = device
        if suite is not None:
            settings["suite"] = suite
        if db is not None:
            settings["db"] = os.fspath(db)
        # A setting has one place: config may not give again what an argument gives (and override it).
        given = {"eval.device", "suite", "db"} | set(settings)
        for key in config or {}:
            if str(key) in given:
                raise ValueError(f"config sets {key!r}, which an argument of Evaluator sets: give it there")
        settings.update({str(key): str(value) for key, value in (config or {}).items()})
        self._pool = _dicebench.EvaluationSession(settings, _worker_executable(), spares)
        self._sandbox = json.loads(self._pool.sandbox_json)
        missing = sorted(name for name, state in self._sandbox.get("protections", {}).items() if not state["active"])
        if self._sandbox.get("mode") == "off":
            warnings.warn("dicebench.Evaluator: the candidate sandbox is off (sandbox='off')", stacklevel=2)
        elif missing:
            warnings.warn(f"dicebench.Evaluator: this machine does not allow these sandbox protections: "
                          f"{', '.join(missing)}", stacklevel=2)
        self._cache: collections.OrderedDict[str, Evaluation] = collections.OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._closed = False

    @property
    def device(self) -> str:
        """"cpu" or "cuda"."""
        return self._pool.device

    @property
    def sandbox(self) -> dict:
        """The candidate sandbox: {"mode": ..., "protections": {name: {"active": bool, "detail": str}}}."""
        return self._sandbox

    @property
    def size(self) -> int:
        """How many candidates this Evaluator judges at once."""
        return self._pool.size

    @property
    def suite(self) -> str:
        """The suite whose review flags candidates ("" for none)."""
        return self._pool.suite

    @property
    def evaluators_started(self) -> int:
        """Evaluators (each with its reference worker) started so far: one per slot, once."""
        return self._pool.evaluators_started

    @overload
    def evaluate(self, problem: str, candidate: str) -> Evaluation: ...
    @overload
    def evaluate(self, problem: str | Sequence[str], candidate: Sequence[str]) -> list[Evaluation]: ...

    def evaluate(self, problem, candidate):
        """The verdict of `candidate` (source defining ModelNew) against `problem` (source defining
        Model, get_inputs and get_init_inputs). Given a list of candidates (and one problem for all,
        or a list of as many problems), the list of their verdicts in input order, the batch shared
        out over every slot. CandidateError / ProblemError for sources that are not a candidate /
        problem; dicebench.Error when the harness itself fails (the reference program cannot be
        built or run): in a batch, after the others' results are cached. A candidate's own failures
        are verdicts, never errors."""
        if isinstance(candidate, str):
            return self._evaluate_batch([(problem, candidate)])[0]
        candidates = list(candidate)
        problems = [problem] * len(candidates) if isinstance(problem, str) else list(problem)
        if len(problems) != len(candidates):
            raise ValueError(f"{len(problems)} problems for {len(candidates)} candidates: give one problem, or one per candidate")
        return self._evaluate_batch(list(zip(problems, candidates)))

    def _evaluate_batch(self, pairs: list[tuple[str, str]]) -> list[Evaluation]:
        results: list[Evaluation | None] = [None] * len(pairs)
        keys = []
        for problem, candidate in pairs:
            for what, source in (("problem", problem), ("candidate", candidate)):
                if not isinstance(source, str):
                    raise TypeError(f"the {what} must be source text (str), not {type(source).__name__}")
            keys.append(hashlib.sha256(f"{len(problem)}:{problem}{candidate}".encode()).hexdigest())
        with self._lock:
            if self._closed:  # as close() says, cached pairs included
                raise Error("this evaluation session is closed")
            for i, key in enumerate(keys):
                if key in self._cache:  # only checked sources get here
                    self._cache.move_to_end(key)
                    results[i] = dataclasses.replace(self._cache[key], cached=True)
        todo = [i for i, result in enumerate(results) if result is None]
        for i in todo:
            try:
                check_problem(pairs[i][0])
                check_candidate(pairs[i][1])
            except (CandidateError, ProblemError) as error:
                if len(pairs) == 1:
                    raise
                raise type(error)(f"item {i} of the batch: {error}") from None  # which one, in a batch
        failure = None
        for i, (ok, text) in zip(todo, self._pool.evaluate([pairs[i] for i in todo])):
            if not ok:
                failure = failure or text
                continue
            results[i] = evaluation = Evaluation.from_json(json.loads(text))
            if self._cache_size > 0:
                with self._lock:
                    self._cache[keys[i]] = evaluation
                    while len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
        if failure is not None:
            raise Error(failure)
        return results  # type: ignore[return-value]

    def close(self) -> None:
        """Waits for calls in progress, then ends the workers; later calls raise dicebench.Error."""
        with self._lock:
            self._closed = True
        self._pool.close()

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_shared: dict[tuple[Any, ...], Evaluator] = {}
_shared_lock = threading.Lock()


def evaluate(problem, candidate, device: str | None = None, trials: int = 5, **settings: Any):
    """Evaluates one candidate against one problem, or a batch: a list of candidates against one
    problem or against a list of as many problems, their verdicts in input order (see Evaluator for
    the settings and the batch). Calls with the same settings share one Evaluator, created on first
    use and kept for the process's life: its workers start once and stay warm, so a trainer's loop
    pays their start-up once, and its cache answers a repeated candidate at once."""
    key = (device, trials, *sorted((name, repr(value)) for name, value in settings.items()))
    with _shared_lock:
        evaluator = _shared.get(key)
        if evaluator is None:
            evaluator = _shared[key] = Evaluator(device, trials=trials, **settings)
    return evaluator.evaluate(problem, candidate)
