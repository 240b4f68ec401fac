"""What the trainer adapters share: their settings (configure(...) or DICEBENCH_* environment
variables), the judge each process creates once and keeps (a dicebench.Evaluator, or a RemoteJudge
for DICEBENCH_URL), the micro-batcher that gathers concurrent one-sample calls (verl >= 0.8 and
OpenRLHF score one sample per call) into one judge() call, and reading the problem and a
completion's text out of what trainers pass. No reward is computed here: judge() gives it."""

from __future__ import annotations

import atexit
import concurrent.futures
import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import dicebench
from dicebench.trainers.remote import RemoteJudge

logger = logging.getLogger("dicebench.trainers")

# Where a problem may sit in a dict a trainer passes (a label, verl's ground_truth or extra_info).
PROBLEM_KEYS = ("problem", "pytorch_code", "ground_truth", "reference")


class Judge(Protocol):
    """What the adapters call: dicebench.Evaluator, RemoteJudge, or a stand-in with the same judge()."""

    def judge(
        self,
        problems: str | Sequence[str],
        responses: Sequence[str],
        *,
        completions: bool = True,
        ids: Sequence[str] | None = None,
        reward: str | None = None,
        **reward_params: float,
    ) -> list[dicebench.Judgement]: ...


def _pairs(text: str, what: str) -> dict[str, str]:
    """A JSON object, or "key=value,key=value"."""
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"{what} is a JSON object or key=value,key=value, not {text!r}")
        return {str(k): v for k, v in data.items()}
    out = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{what}: {part!r} is not key=value")
        out[key.strip()] = value.strip()
    return out


@dataclasses.dataclass(frozen=True)
class Settings:
    """How the adapters judge, each field with the environment variable that sets it.

    judge: a judge object to use as it is (an Evaluator, a RemoteJudge, a stand-in); only through
      configure(judge=...). Else url (DICEBENCH_URL): `dicebench serve` there, with token
      (DICEBENCH_TOKEN); else, with ray_pool (DICEBENCH_RAY_POOL: a number of actors), a
      dicebench.ray.EvaluatorPool of that many actors on the Ray cluster the trainer runs on (joined
      with ray.init(address="auto") where this process has not joined one), each holding an
      Evaluator of the settings below (evaluator may also give the pool's own arguments: resource,
      chunk, depth); else an in-process Evaluator of device (DICEBENCH_DEVICE: cuda, cpu; default:
      cuda where a GPU is visible), suite (DICEBENCH_SUITE: the suite whose extraction finds code in a
      completion, e.g. kernelbench, kernelbench-l2; the completion adapters default to kernelbench,
      which needs kernelbench.root or DICEBENCH_KERNELBENCH_ROOT), config (DICEBENCH_CONFIG: further
      settings as `--set` takes them, JSON or key=value,...) and evaluator (DICEBENCH_EVALUATOR: a
      JSON object of further Evaluator arguments, e.g. {"timeout": 120, "gpus": "0,1"}).
    reward (DICEBENCH_REWARD): a shape of dicebench.REWARD_SHAPES, with reward_params
      (DICEBENCH_REWARD_PARAMS: JSON or key=value,...; dicebench.REWARD_SHAPES_PARAMS). A shape that
      needs no speedup (correctness) is judged faster untimed: DICEBENCH_EVALUATOR='{"timing": false}'.
    unjudged_reward (DICEBENCH_UNJUDGED_REWARD): what trainers that need a number (verl, OpenRLHF) get
      for an item dicebench could not judge (its problem failed, or dicebench did); TRL gets None.
    batch_window (DICEBENCH_BATCH_WINDOW_MS, in ms there) and max_batch (DICEBENCH_BATCH_MAX): how
      long the micro-batcher gathers one-sample calls after the first, and the most it puts in one
      judge() call."""

    judge: Judge | None = dataclasses.field(default=None, compare=False)
    url: str | None = None
    token: str | None = dataclasses.field(default=None, repr=False)
    ray_pool: int = 0
    device: str | None = None
    suite: str | None = None
    config: Mapping[str, str] = dataclasses.field(default_factory=dict)
    evaluator: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    reward: str = "correctness"
    reward_params: Mapping[str, float] = dataclasses.field(default_factory=dict)
    unjudged_reward: float = 0.0
    batch_window: float = 0.02
    max_batch: int = 256

    def __post_init__(self) -> None:
        if self.reward not in dicebench.REWARD_SHAPES:
            raise ValueError(f"no reward shape {self.reward!r}; the shapes: {', '.join(dicebench.REWARD_SHAPES)}")
        known = dicebench.REWARD_SHAPES_PARAMS.get(self.reward, {})
        for name in self.reward_params:
            if name not in known:
                raise ValueError(f"reward shape {self.reward!r} takes no parameter {name!r} "
                                 f"(it takes: {', '.join(known) or 'none'})")
        object.__setattr__(self, "reward_params", {k: float(v) for k, v in self.reward_params.items()})
        object.__setattr__(self, "config", {str(k): str(v) for k, v in self.config.items()})
        object.__setattr__(self, "evaluator", dict(self.evaluator))
        if isinstance(self.ray_pool, bool) or not isinstance(self.ray_pool, int) or self.ray_pool < 0:
            raise ValueError(f"ray_pool is a number of actors (0: none), not {self.ray_pool!r}")
        if self.batch_window < 0 or self.max_batch < 1:
            raise ValueError("batch_window is >= 0 seconds and max_batch >= 1")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings the DICEBENCH_* variables give (unset ones keep their defaults)."""
        env = os.environ if environ is None else environ
        fields: dict[str, Any] = {}
        for name, var in (("url", "DICEBENCH_URL"), ("token", "DICEBENCH_TOKEN"), ("device", "DICEBENCH_DEVICE"),
                          ("suite", "DICEBENCH_SUITE"), ("reward", "DICEBENCH_REWARD")):
            if env.get(var):
                fields[name] = env[var]
        if env.get("DICEBENCH_CONFIG"):
            fields["config"] = _pairs(env["DICEBENCH_CONFIG"], "DICEBENCH_CONFIG")
        if env.get("DICEBENCH_REWARD_PARAMS"):
            fields["reward_params"] = _pairs(env["DICEBENCH_REWARD_PARAMS"], "DICEBENCH_REWARD_PARAMS")
        if env.get("DICEBENCH_EVALUATOR"):
            evaluator = json.loads(env["DICEBENCH_EVALUATOR"])
            if not isinstance(evaluator, dict):
                raise ValueError("DICEBENCH_EVALUATOR is a JSON object of Evaluator arguments")
            fields["evaluator"] = evaluator
        if env.get("DICEBENCH_UNJUDGED_REWARD"):
            fields["unjudged_reward"] = float(env["DICEBENCH_UNJUDGED_REWARD"])
        if env.get("DICEBENCH_BATCH_WINDOW_MS"):
            fields["batch_window"] = float(env["DICEBENCH_BATCH_WINDOW_MS"]) / 1000.0
        if env.get("DICEBENCH_BATCH_MAX"):
            fields["max_batch"] = int(env["DICEBENCH_BATCH_MAX"])
        if env.get("DICEBENCH_RAY_POOL"):
            fields["ray_pool"] = int(env["DICEBENCH_RAY_POOL"])
        return cls(**fields)

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def for_completions(self) -> Settings:
        """These settings for raw completions, which need a suite's extraction: kernelbench unless
        one is named (or a judge or a service, which have their own)."""
        if self.suite or self.judge is not None or self.url:
            return self
        return self.replace(suite="kernelbench")

    @property
    def zscore(self) -> bool:
        return bool(self.reward_params.get("zscore"))

    def key(self) -> str:
        """What makes two settings judge alike (the judge they share)."""
        if self.judge is not None:
            return f"object:{id(self.judge)}"
        if self.url:
            return json.dumps(["url", self.url, self.token])
        return json.dumps(["evaluator", self.ray_pool, self.device, self.suite, self.config, self.evaluator],
                          sort_keys=True, default=str)

    def make_judge(self) -> Judge:
        """A new judge of these settings (shared_judge() keeps one per process)."""
        if self.judge is not None:
            return self.judge
        if self.url:
            return RemoteJudge(self.url, token=self.token)
        arguments = dict(self.evaluator)
        if self.suite:
            arguments["suite"] = self.suite
        if self.config:
            arguments["config"] = {**dict(arguments.get("config") or {}), **self.config}
        if self.ray_pool:
            from dicebench.ray import EvaluatorPool  # Ray is needed only here

            # The actors hold the cluster's GPUs (DICEBENCH_DEVICE=cpu for CPU actors), whatever this
            # process sees.
            return EvaluatorPool(self.device or "cuda", size=self.ray_pool, address="auto", **arguments)
        return dicebench.Evaluator(self.device, **arguments)

    def judge_items(self, problems: Sequence[str], responses: Sequence[str], *, completions: bool = True,
                    judge: Judge | None = None) -> list[dicebench.Judgement]:
        """One judge() call with these settings' reward, on `judge` (default: the shared one)."""
        return call_judge(shared_judge(self) if judge is None else judge, problems, responses,
                          completions=completions, reward=self.reward, params=self.reward_params)


def call_judge(judge: Judge, problems: str | Sequence[str], responses: Sequence[str], *, completions: bool,
               reward: str | None, params: Mapping[str, float]) -> list[dicebench.Judgement]:
    """judge.judge() with a reward shape and its parameters given as a mapping."""
    keywords: dict[str, Any] = dict(params)
    return judge.judge(problems, responses, completions=completions, reward=reward, **keywords)


# The process's state: its settings (configure() or the environment), and the judges and batchers
# created from them, one per settings key, kept for the process's life.
_lock = threading.Lock()
_configured: Settings | None = None
_judges: dict[str, Judge] = {}
_batchers: dict[str, MicroBatcher] = {}
_left_behind: list[Any] = []  # a forked child's copies of its parent's judges, never used nor closed


def configure(**fields: Any) -> Settings:
    """Sets this process's settings: the environment's, with `fields` (Settings' names) over them;
    judges made from earlier settings are closed. Returns the settings."""
    global _configured
    settings = Settings.from_env().replace(**fields)
    with _lock:
        _configured = settings
    _close_all()
    return settings


def current_settings() -> Settings:
    """This process's settings: configure()'s, else the environment's (read on first use)."""
    global _configured
    with _lock:
        if _configured is None:
            _configured = Settings.from_env()
        return _configured


def shared_judge(settings: Settings | None = None) -> Judge:
    """The judge of `settings` (default: current_settings()), created on first use and kept: an
    Evaluator's workers start once and stay warm for every later call of this process."""
    settings = current_settings() if settings is None else settings
    key = settings.key()
    with _lock:
        judge = _judges.get(key)
        if judge is None:
            judge = _judges[key] = settings.make_judge()
        return judge


def shared_batcher(settings: Settings | None = None) -> MicroBatcher:
    """The micro-batcher of `settings`' judge and reward, created on first use."""
    settings = current_settings() if settings is None else settings
    if settings.zscore:
        raise ValueError("a zscore reward is normalised within each call's groups, which one-sample calls gathered "
                         "by time would make arbitrary: let the trainer normalise (GRPO does), or use a batch form")
    key = json.dumps([settings.key(), settings.reward, settings.reward_params, settings.batch_window,
                      settings.max_batch], sort_keys=True)
    with _lock:
        batcher = _batchers.get(key)
        if batcher is None:

            def call(problems: list[str], responses: list[str], completions: bool) -> list[dicebench.Judgement]:
                return settings.judge_items(problems, responses, completions=completions)

            batcher = _batchers[key] = MicroBatcher(call, window=settings.batch_window, max_batch=settings.max_batch)
        return batcher


def _close_all() -> None:
    """Closes the batchers and the judges this process made (not one given by configure(judge=))."""
    with _lock:
        batchers, judges = list(_batchers.values()), list(_judges.items())
        _batchers.clear()
        _judges.clear()
    for batcher in batchers:
        batcher.close()
    for key, judge in judges:
        close = getattr(judge, "close", None)
        if close is not None and not key.startswith("object:"):
            try:
                close()
            except Exception as e:  # noqa: BLE001 - at exit or on reconfiguring, one failed close stops no other
                logger.warning("dicebench.trainers: closing %r failed: %s", judge, e)


def _forget_after_fork() -> None:
    """In a forked child: the parent's judges and batcher threads are not this process's; they are
    left alone (closing them would end the parent's workers) and made anew on first use."""
    global _lock, _configured
    _lock = threading.Lock()
    _left_behind.extend([*_judges.values(), *_batchers.values()])
    _judges.clear()
    _batchers.clear()


atexit.register(_close_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


@dataclasses.dataclass
class _Pending:
    problem: str
    response: str
    completions: bool
    future: concurrent.futures.Future[dicebench.Judgement]


class MicroBatcher:
    """Gathers one-sample calls made at about the same time (from threads or event loops) into one
    judge() call: the first call waits at most `window` seconds for others, up to `max_batch` items;
    each caller gets its own item's Judgement through a Future. Batches are judged on a small
    thread pool, so a long batch does not hold the next one back (the Evaluator shares concurrent
    calls out over its slots). A judge() that raises fails the futures of its batch alone."""

    def __init__(self, judge: Callable[[list[str], list[str], bool], list[dicebench.Judgement]], *,
                 window: float = 0.02, max_batch: int = 256, concurrency: int = 8):
        self._judge = judge
        self.window = window
        self.max_batch = max_batch
        self._pending: list[_Pending] = []
        self._first_at = 0.0
        self._cond = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=concurrency,
                                                           thread_name_prefix="dicebench-judge")
        self.batches = 0  # judge() calls made, for tests and logs

    def submit(self, problem: str, response: str, *, completions: bool = True) -> concurrent.futures.Future[dicebench.Judgement]:
        """The Future of this item's Judgement (cancelling it before its batch starts drops the item)."""
        if not isinstance(problem, str) or not isinstance(response, str):
            raise TypeError("the problem and the response are text (str)")
        future: concurrent.futures.Future[dicebench.Judgement] = concurrent.futures.Future()
        with self._cond:
            if self._closed:
                raise dicebench.Error("this micro-batcher is closed")
            if not self._pending:
                self._first_at = time.monotonic()
            self._pending.append(_Pending(problem, response, completions, future))
            if self._thread is None:
                self._thread = threading.Thread(target=self._gather, name="dicebench-batcher", daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return future

    def _gather(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if not self._pending:
                    return  # closed, nothing left
                while len(self._pending) < self.max_batch and not self._closed:
                    left = self._first_at + self.window - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch, self._pending = self._pending[:self.max_batch], self._pending[self.max_batch:]
                self._first_at = time.monotonic()
            # Items whose caller gave up are dropped; the rest can no longer be cancelled.
            live = [p for p in batch if p.future.set_running_or_notify_cancel()]
            for completions in (True, False):
                group = [p for p in live if p.completions is completions]
                if group:
                    self.batches += 1
                    self._pool.submit(self._run, group)

    def _run(self, group: list[_Pending]) -> None:
        try:
            judged = self._judge([p.problem for p in group], [p.response for p in group], group[0].completions)
            if len(judged) != len(group):
                raise dicebench.Error(f"judge() gave {len(judged)} judgements for {len(group)} items")
        except BaseException as e:  # noqa: BLE001 - handed to each waiting caller, who raises it
            for p in group:
                p.future.set_exception(e)
            return
        for p, judgement in zip(group, judged):
            p.future.set_result(judgement)

    def close(self) -> None:
        """Judges what is pending, then stops (later submits raise dicebench.Error)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self._pool.shutdown(wait=True)


def problem_of(value: Any, extra: Any = None) -> str:
    """The problem (a PyTorch source or a suite id) in what a trainer passes as the reference: the
    text itself, or a dict holding it under one of PROBLEM_KEYS; else the same in `extra` (verl's
    extra_info). TypeError when there is none: the data's mistake, not an item's failure."""
    for source in (value, extra):
        if isinstance(source, str) and source:
            return str(source)
        if isinstance(source, Mapping):
            for key in PROBLEM_KEYS:
                found = source.get(key)
                if isinstance(found, str) and found:
                    return str(found)
    raise TypeError(f"no problem in {type(value).__name__} {str(value)[:80]!r}: give the problem's PyTorch source "
                    f"or its suite id (kernelbench/level1/19), as text or under one of {', '.join(PROBLEM_KEYS)}")


def text_of(completion: Any) -> str:
    """A completion's text: the text itself, or (a conversational completion, a list of messages
    {"role", "content"}) the content of its last assistant message; content given as parts
    ([{"type": "text", "text": ...}]) is joined."""
    if isinstance(completion, str):
        return completion
    message: Any = completion
    if isinstance(completion, Sequence) and not isinstance(completion, (str, bytes)):
        messages = [m for m in completion if isinstance(m, Mapping)]
        if not messages:
            raise TypeError(f"a completion is text or a list of messages, not {completion!r:.80}")
        assistant = [m for m in messages if m.get("role") == "assistant"]
        message = (assistant or messages)[-1]
    if isinstance(message, Mapping):
        content = message.get("content")
        if content is None:
            return ""
        if isinstance(content, str):
            return content
        if isinstance(content, Sequence):
            return "".join(p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content)
    raise TypeError(f"a completion is text or a list of messages, not {type(completion).__name__}")


def reward_value(judgement: dicebench.Judgement, unjudged: float) -> float:
    """The judgement's reward, or `unjudged` where it has none (not judged)."""
    return float(judgement.reward) if judgement.reward is not None else float(unjudged)


def summary(judgement: dicebench.Judgement) -> dict[str, Any]:
    """The same few facts of every item, for the trainers' logs (numbers and text only, never None):
    compiled, correct (1.0 or 0.0), speedup (0.0 unless correct), verdict ("" when not judged), status."""
    evaluation = judgement.evaluation
    correct = bool(evaluation is not None and evaluation.correct)
    speedup = evaluation.speedup if evaluation is not None and correct else None
    return {
        "compiled": 1.0 if evaluation is not None and evaluation.compiled else 0.0,
        "correct": 1.0 if correct else 0.0,
        "speedup": float(speedup) if speedup is not None else 0.0,
        "verdict": evaluation.verdict if evaluation is not None else "",
        "status": judgement.status,
    }
