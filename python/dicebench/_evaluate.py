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
from ._errors import ProblemError
from ._record import Evaluation, Judgement


def _worker_executable() -> str:
    """$DICEBENCH_WORKER, else bin/dicebench-worker of the build tree or install this package is in
    (both put the package in lib/dicebench/python/dicebench)."""
    beside = pathlib.Path(__file__).resolve().parents[4] / "bin" / "dicebench-worker"
    worker = os.environ.get("DICEBENCH_WORKER") or str(beside)
    if not os.access(worker, os.X_OK):
        raise Error(f"no dicebench-worker at {worker} (build dicebench, or set DICEBENCH_WORKER)")
    return worker


def judge_arguments(problems: str | Sequence[str], responses: Sequence[str], ids: Sequence[str] | None,
                    reward: str | None, reward_params: dict[str, Any],
                    default_ids: Sequence[str] | None = None) -> tuple[list[tuple[str, str, str]], dict[str, float]]:
    """judge()'s batch, checked: its items (id, problem, response) and the reward's parameters.
    TypeError or ValueError for the caller's mistakes. Items without ids get default_ids (else "")."""
    if isinstance(responses, str):
        raise TypeError("responses is a list of strings (one per item), not one string")
    texts = list(responses)
    problem_list = [problems] * len(texts) if isinstance(problems, str) else list(problems)
    if len(problem_list) != len(texts):
        raise ValueError(f"{len(problem_list)} problems for {len(texts)} responses: give one problem, or one per response")
    if ids is not None:
        id_list = [str(i) for i in ids]
    else:
        id_list = list(default_ids) if default_ids is not None else [""] * len(texts)
    if len(id_list) != len(texts):
        raise ValueError(f"{len(id_list)} ids for {len(texts)} responses")
    for what, values in (("problem", problem_list), ("response", texts)):
        for value in values:
            if not isinstance(value, str):
                raise TypeError(f"each {what} must be text (str), not {type(value).__name__}")
    if reward is None and reward_params:
        raise ValueError("reward parameters without a reward shape: give reward=...")
    return list(zip(id_list, problem_list, texts)), {str(k): float(v) for k, v in reward_params.items()}


class Evaluator:
    """Evaluates candidates with fixed settings through a pool of isolated workers.

    device: "cuda" or "cpu" (default: cuda where a GPU is visible). trials: correctness trials.
    tolerance: "per_dtype" (1e-4 for fp32 and other floats, 1e-2 for fp16/bf16) or "uniform" (1e-2
    for every float dtype); "kernelbench" and "compat" are their old names. timeout and compile_timeout: seconds
    a candidate may run, and take to start and compile. fastpath: NVRTC for load_inline calls
    (CUDA). model_mode: "train" (KernelBench's) or "eval". baseline: "eager" or "compile".
    timing_budget: seconds of timing per call site. timing: False judges correctness only (no runtime,
    baseline or speedup: DICE's reward, KernelBench's measure_performance=False). workers: evaluators on the CPU (default 2);
    on CUDA there are gpu_slots per GPU of `gpus` ("all" or a list such as "0,1"): "auto" is 4 when
    timing is False (checks side by side, as DICE's reward shares a GPU four ways; a hang holds only
    its own slot) and 1 when timed (timing has the GPU to itself either way). spares: candidate
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
    ):
        for name, flag in (("fastpath", fastpath), ("timing", timing)):
            if not isinstance(flag, bool):  # "off" would read as True
                raise TypeError(f"{name} is True or False, not {flag!r}")
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
            "eval.timing": "on" if timing else "off",
            "eval.cpu_workers": str(workers),
            "eval.gpus": gpus,
            "eval.gpu_slots": str(gpu_slots),
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
        self._open(settings, spares, cache_size)

    @classmethod
    def from_settings(cls, settings: dict[str, str], spares: int = 1, cache_size: int = 4096) -> Evaluator:
        """An Evaluator with every setting as `dicebench run` reads it (eval.* keys, "suite", ...),
        each as given and the rest at run's defaults, not this class's arguments' (how `dicebench run
        --ray` makes its actors' Evaluators: with the run's own settings)."""
        evaluator = cls.__new__(cls)
        evaluator._open({str(key): str(value) for key, value in settings.items()}, spares, cache_size)
        return evaluator

    def _open(self, settings: dict[str, str], spares: int, cache_size: int) -> None:
        self._pool = _dicebench.EvaluationSession(settings, _worker_executable(), spares)
        self._sandbox = json.loads(self._pool.sandbox_json)
        missing = sorted(name for name, state in self._sandbox.get("protections", {}).items() if not state["active"])
        if self._sandbox.get("mode") == "off":
            warnings.warn("dicebench.Evaluator: the candidate sandbox is off (sandbox='off')", stacklevel=3)
        elif missing:
            warnings.warn(f"dicebench.Evaluator: this machine does not allow these sandbox protections: "
                          f"{', '.join(missing)}", stacklevel=3)
        self._cache: collections.OrderedDict[str, Judgement] = collections.OrderedDict()
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

    def _prime_baselines(self, records: list[str]) -> None:
        """Gives this Evaluator baselines other Evaluators timed (records of _measured_baselines()),
        each used where its key (problem, GPU, torch, timing method) is that of a problem it
        judges, as a baseline of `db` is; from the first call on, it keeps those it times. How
        dicebench.ray's actors of one GPU model time each problem once."""
        self._pool.prime_baselines(records)

    def _measured_baselines(self) -> list[tuple[str, str]]:
        """(key, record) of each baseline this Evaluator timed since the last call (JSON; none before
        _prime_baselines)."""
        return self._pool.measured_baselines()

    def judge(
        self,
        problems: str | Sequence[str],
        responses: Sequence[str],
        *,
        completions: bool = True,
        ids: Sequence[str] | None = None,
        reward: str | None = None,
        **reward_params: float,
    ) -> list[Judgement]:
        """Judges what a policy wrote: one Judgement per response, in input order, never an exception
        for an item. `problems`: one for every response, or one each; a problem is its source
        (defining Model, get_inputs, get_init_inputs) or an id of the Evaluator's suite
        ("kernelbench/level2/40"). `responses`: raw completions (completions=True: the suite's
        extraction finds the code, backend-aware as `dicebench run` does; a completion without code
        is judged extraction_failed) or candidate code (completions=False). A candidate's failure of
        any kind is its verdict; a problem that cannot be used is status "problem_failed", dicebench's
        own failure "harness_failed" (see dicebench.ITEM_STATUSES). `reward`: a shape of
        dicebench.REWARD_SHAPES with its parameters (dicebench.REWARD_SHAPES_PARAMS), e.g.
        reward="correct_plus_speedup", correct_weight=0.3; each judged item then has its reward, and
        the record says which shape and parameters made it. dicebench.Error only for the caller's
        mistakes: completions without a suite, an unknown shape or parameter, a closed Evaluator."""
        batch, params = judge_arguments(problems, responses, ids, reward, reward_params)
        with self._lock:
            if self._closed:
                raise Error("this evaluation session is closed")
        items = [(i, p, r, completions) for i, p, r in batch]
        return [self._judgement(json.loads(text)) for text in self._pool.judge(items, reward, params)]

    def _judgement(self, data: dict[str, Any]) -> Judgement:
        """A Judgement whose evaluation has the `sandbox` of `dicebench eval --json`."""
        if data.get("evaluation") is not None:
            data["evaluation"]["sandbox"] = self._sandbox
        return Judgement.from_json(data)

    @overload
    def evaluate(self, problem: str, candidate: str) -> Evaluation: ...
    @overload
    def evaluate(self, problem: str | Sequence[str], candidate: Sequence[str]) -> list[Evaluation]: ...

    def evaluate(self, problem, candidate):
        """The verdict of `candidate` (source defining ModelNew) against `problem` (source defining
        Model, get_inputs and get_init_inputs, or an id of the suite: "kernelbench/level1/19").
        Given a list of candidates (and one problem for all, or a list of as many problems), the
        list of their verdicts in input order, the batch shared out over every slot. A candidate's
        failures of every kind (not Python, no ModelNew, a crash, a hang) are verdicts, as `dicebench
        eval` gives them. ProblemError for a problem that cannot be used and dicebench.Error for
        the harness's own failure: in a batch, raised once every item is judged (and cached), with
        every item's Judgement in the exception's `judgements`. Trainers use judge(), which never
        raises for an item."""
        if isinstance(candidate, str):
            return self._evaluate_batch([(problem, candidate)])[0]
        candidates = list(candidate)
        problems = [problem] * len(candidates) if isinstance(problem, str) else list(problem)
        if len(problems) != len(candidates):
            raise ValueError(f"{len(problems)} problems for {len(candidates)} candidates: give one problem, or one per candidate")
        return self._evaluate_batch(list(zip(problems, candidates)))

    def _evaluate_batch(self, pairs: list[tuple[str, str]]) -> list[Evaluation]:
        results: list[Judgement | None] = [None] * len(pairs)
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
                if key in self._cache:
                    self._cache.move_to_end(key)
                    cached = self._cache[key]
                    assert cached.evaluation is not None  # only judged items are cached
                    results[i] = dataclasses.replace(cached, evaluation=dataclasses.replace(cached.evaluation, cached=True))
        todo = [i for i, result in enumerate(results) if result is None]
        judged = self.judge([pairs[i][0] for i in todo], [pairs[i][1] for i in todo], completions=False)
        for i, judgement in zip(todo, judged):
            results[i] = judgement
            if judgement.evaluation is not None and self._cache_size > 0:
                with self._lock:
                    self._cache[keys[i]] = judgement
                    while len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
        failed = [(i, j) for i, j in enumerate(results) if j is not None and j.evaluation is None]
        if failed:
            index, first = failed[0]
            where = f"item {index} of the batch: " if len(pairs) > 1 else ""
            error = (ProblemError if first.status == "problem_failed" else Error)(where + first.error)
            error.judgements = list(results)  # type: ignore[attr-defined]
            raise error
        return [j.evaluation for j in results if j is not None and j.evaluation is not None]

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
