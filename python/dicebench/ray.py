"""dicebench on a Ray cluster: EvaluatorPool, one actor per GPU (or per CPU evaluator) placed by Ray
on any node, each holding one dicebench.Evaluator for its life. A batch is shared out in chunks with
problem affinity (a problem's items go where its reference worker is warm), every actor's queue is
kept full, and the Judgements come back in input order, as one local Evaluator gives them: each
actor judges with the same Evaluator and settings. An actor (or its node) that dies has its chunks
judged again by the others, and a replacement actor is asked for; a chunk's items come back once,
from the one actor that finished it, so nothing is lost and no item has two results. Baselines are
timed per GPU model: what an actor timed comes back with its results, and the pool hands it, with
the next tasks of that problem, to every other actor, whose Evaluator uses it where its own key
(problem, GPU model, torch, timing method) is the same, as it uses a baseline stored in `db`.

    import dicebench.ray
    pool = dicebench.ray.EvaluatorPool("cuda", size=8, suite="kernelbench-l2", timing=False)
    judged = pool.judge(problems, completions, reward="correctness")   # list[dicebench.Judgement]
    pool.stats()                                                       # per actor: node, load, failures

Actors ask Ray for one GPU each (num_gpus=1, which also makes it the only GPU their Evaluator sees)
and one unit of a custom resource, `dicebench_gpu` by default, that only the nodes (or GPUs) given
to the reward declare (`ray start --resources '{"dicebench_gpu": 4}'`), so that reward actors never
take a trainer's GPU; resource=None drops that requirement. On the CPU an actor asks for as many
CPUs as its Evaluator has workers (`workers`, default 2) and no custom resource unless given one.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any

import ray

from ._dicebench import Error
from ._evaluate import judge_arguments
from ._record import Judgement

DEFAULT_GPU_RESOURCE = "dicebench_gpu"


@ray.remote
class EvaluatorActor:
    """One dicebench.Evaluator for the actor's life, on the node Ray placed it on."""

    def __init__(self, device: str, evaluator_args: dict[str, Any], settings: dict[str, str] | None = None):
        from ._evaluate import Evaluator

        self.evaluator = (Evaluator.from_settings(settings, **evaluator_args) if settings is not None
                          else Evaluator(device, **evaluator_args))

    def where(self) -> dict[str, Any]:
        """The node, host, process and GPUs (Ray's ids) of this actor."""
        context = ray.get_runtime_context()
        return {"node": context.get_node_id(), "host": socket.gethostname(), "pid": os.getpid(),
                "gpus": [str(g) for g in ray.get_gpu_ids()], "size": self.evaluator.size,
                "sandbox": self.evaluator.sandbox}

    def judge(self, items: list[tuple[str, str, str]], completions: bool, reward: str | None,
              params: dict[str, float],
              baselines: list[str]) -> tuple[list[dict[str, Any]], float, list[tuple[str, str]]]:
        """The Judgements (as plain data) of items (id, problem, response), in order, the seconds the
        Evaluator took for them (the rest of a task's round trip is Ray's), and the baselines it
        timed for them as (key, record). `baselines`: records other actors timed, given to the
        Evaluator before it judges (it takes those under its own keys)."""
        started = time.perf_counter()
        self.evaluator._prime_baselines(baselines)
        judged = self.evaluator.judge([item[1] for item in items], [item[2] for item in items],
                                      completions=completions, ids=[item[0] for item in items],
                                      reward=reward, **params)
        return ([judgement.to_dict() for judgement in judged], time.perf_counter() - started,
                self.evaluator._measured_baselines())

    def close(self) -> None:
        self.evaluator.close()


@dataclasses.dataclass
class _Actor:
    index: int
    handle: Any
    where: dict[str, Any] = dataclasses.field(default_factory=dict)
    alive: bool = True
    ready: bool = False  # its Evaluator started (it answered where()): it takes tasks from then on
    ready_ref: Any = None  # where() asked of a replacement, while it starts
    asked: float = 0.0  # when it was asked for (time.monotonic())
    items_judged: int = 0
    chunks_judged: int = 0
    judge_seconds: float = 0.0  # round trips of its tasks (submitted -> result here)
    evaluator_seconds: float = 0.0  # of which its Evaluator's own work
    in_flight: int = 0
    baselines: set[str] = dataclasses.field(default_factory=set)  # keys of those it timed or was given
    baselines_timed: int = 0
    baselines_given: int = 0


@dataclasses.dataclass
class _Chunk:
    problem: str
    entries: list[tuple[Any, tuple[str, str, str]]]  # (the key it came with, (id, problem, response))


class _Inbox:
    """Items on their way to a pool's stream(), as (key, (id, problem, response)): put() from any
    thread, close() once no more will come."""

    def __init__(self) -> None:
        self._items: list[tuple[Any, tuple[str, str, str]]] = []
        self._closed = False
        self.abandoned = False
        self._changed = threading.Condition()

    def put(self, entries: list[tuple[Any, tuple[str, str, str]]]) -> None:
        with self._changed:
            self._items.extend(entries)
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def abandon(self) -> None:
        """Whoever fed it is gone: stream() returns at once, judging nothing more."""
        with self._changed:
            self._closed = self.abandoned = True
            self._items = []
            self._changed.notify_all()

    def closed(self) -> bool:
        with self._changed:
            return self._closed and not self._items

    def take(self) -> list[tuple[Any, tuple[str, str, str]]]:
        with self._changed:
            taken, self._items = self._items, []
            return taken

    def wait(self, timeout: float) -> None:
        with self._changed:
            if not self._items and not self._closed:
                self._changed.wait(timeout)


class EvaluatorPool:
    """Evaluators on a Ray cluster: `size` actors, each holding dicebench.Evaluator(device,
    **evaluator_args) for its life (see the module's docstring for their placement).

    device: "cuda" or "cpu". size: how many actors. resource: the custom resource each actor takes
    one unit of ("auto": "dicebench_gpu" on CUDA, none on the CPU; None: none). chunk: items a task
    carries at most (a problem's items go together; a trainer's group of 16 is one task; with a
    reward normalised within each problem's items, zscore, a problem's items are one task). depth:
    tasks each actor holds at once (the next one is there when one ends). replacements: how many
    actors that died are replaced over the pool's life (default: size); a replacement takes tasks
    once it has started, wherever Ray finds room for it. actor_options: more of Ray's options for
    the actors (runtime_env, scheduling_strategy: "SPREAD" by default, ...). address: the cluster to
    join when Ray is not initialized in this process yet (ray.init(address=...)). start_timeout:
    seconds an actor may take to start (its Evaluator's workers included) before dicebench.Error.
    settings: the actors' Evaluators made with Evaluator.from_settings(settings, spares=...,
    cache_size=...) instead of Evaluator's arguments (`dicebench run --ray`: the run's own [eval]).
    `chunk` and `depth` may be changed between batches. Use as a context manager, or call close()."""

    def __init__(self, device: str = "cuda", size: int = 1, *, resource: str | None = "auto",
                 chunk: int = 16, depth: int = 2, replacements: int | None = None,
                 actor_options: dict[str, Any] | None = None, address: str | None = None,
                 start_timeout: float = 600.0, settings: dict[str, str] | None = None, **evaluator_args: Any):
        if device not in ("cuda", "cpu"):
            raise ValueError(f"device is 'cuda' or 'cpu', not {device!r}")
        for name, value, least in (("size", size, 1), ("chunk", chunk, 1), ("depth", depth, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"{name} is a whole number from {least}, not {value!r}")
        if not ray.is_initialized():
            ray.init(address=address, logging_level=logging.ERROR, include_dashboard=False)
        if resource == "auto":
            resource = DEFAULT_GPU_RESOURCE if device == "cuda" else None
        if settings is not None and evaluator_args.keys() - {"spares", "cache_size"}:
            raise ValueError("settings replace the Evaluator's arguments: give one or the other")
        cpu_workers = settings.get("eval.cpu_workers", 1) if settings is not None else evaluator_args.get("workers", 2)
        options: dict[str, Any] = {"num_gpus": 1, "num_cpus": 1} if device == "cuda" else {
            "num_cpus": int(cpu_workers)}
        if resource is not None:
            options["resources"] = {str(resource): 1}
        options["scheduling_strategy"] = "SPREAD"  # over the nodes: a node lost takes few actors with it
        options.update(actor_options or {})
        self.device = device
        self._options = options
        self._evaluator_args = dict(evaluator_args)
        self._settings = None if settings is None else {**settings, "eval.device": device}
        self.chunk = chunk
        self.depth = depth
        self._start_timeout = float(start_timeout)
        self._replacements_left = size if replacements is None else replacements
        self._lock = threading.Lock()  # one batch at a time
        self._closed = False
        self._affinity: dict[str, int] = {}  # problem -> the actor whose reference is warm for it
        self._baselines: dict[str, str] = {}  # every baseline an actor timed: key -> record (JSON)
        self._problem_baselines: dict[str, list[str]] = {}  # problem (as tasks carry it) -> keys timed for it
        self.failures: list[dict[str, Any]] = []  # per actor lost: which, where, why, items judged again
        self._actors: list[_Actor] = []
        for _ in range(size):
            self._start_actor()
        # Every actor has started (its Evaluator made, or its failure known) before the first batch.
        for actor in list(self._actors):
            try:
                actor.where = ray.get(actor.handle.where.remote(), timeout=start_timeout)
            except (ray.exceptions.RayError, ray.exceptions.GetTimeoutError) as error:
                self.close()
                raise Error(f"dicebench.ray: an evaluator actor did not start within {start_timeout:g} s (does the "
                            f"cluster have {self._options.get('resources') or self._options}?): "
                            f"{_first_line(error)}") from None
            actor.ready = True

    def _start_actor(self) -> _Actor:
        remote_class: Any = EvaluatorActor  # ray.remote's class (mypy sees the plain one)
        actor = _Actor(index=len(self._actors), handle=remote_class.options(**self._options).remote(
            self.device, self._evaluator_args, self._settings))
        self._actors.append(actor)
        return actor

    @property
    def size(self) -> int:
        """Actors alive now."""
        return sum(actor.alive for actor in self._actors)

    def stats(self) -> list[dict[str, Any]]:
        """Per actor (every one started, alive or not): its node, host, GPUs, whether alive, and its
        load: items and tasks judged, the seconds those tasks took from submission to result
        (task_seconds) and of those its Evaluator's own (evaluator_seconds: the rest, queueing
        behind its other task included, is Ray's and the wait), tasks in flight, the baselines it
        timed (baselines_timed) and those other actors timed that it was given (baselines_given: it
        uses those of its own GPU model). The actors lost are in `failures`: which, where, why, and
        how many items others judged instead."""
        return [{"actor": a.index, **a.where, "alive": a.alive, "items_judged": a.items_judged,
                 "tasks_judged": a.chunks_judged, "task_seconds": round(a.judge_seconds, 3),
                 "evaluator_seconds": round(a.evaluator_seconds, 3), "in_flight": a.in_flight,
                 "baselines_timed": a.baselines_timed, "baselines_given": a.baselines_given}
                for a in self._actors]

    def judge(self, problems: str | Sequence[str], responses: Sequence[str], *, completions: bool = True,
              ids: Sequence[str] | None = None, reward: str | None = None, **reward_params: float) -> list[Judgement]:
        """Evaluator.judge() over the pool: one Judgement per response, in input order, never an
        exception for an item (see dicebench.Evaluator.judge for the arguments). dicebench.Error for
        the caller's mistakes, and when no actor is left to judge what remains."""
        items, params = judge_arguments(problems, responses, ids, reward, reward_params)
        with self._lock:
            if self._closed:
                raise Error("this evaluator pool is closed")
            return self._judge(items, completions, reward, params)

    def stream(self, inbox: _Inbox, emit: Any, completions: bool = False, reward: str | None = None,
               params: dict[str, float] | None = None) -> None:
        """Judges items as they arrive in `inbox` until it is closed and every item is judged: each
        task's Judgements (as plain data) go to emit(keys, judged) as the task ends, with the keys
        the items came with. judge() is one closed inbox; the bridge of `dicebench run --ray`
        (dicebench._ray_bridge) feeds one while it runs. dicebench.Error when no actor is left."""
        with self._lock:
            if self._closed:
                raise Error("this evaluator pool is closed")
            self._stream(inbox, emit, completions, reward, params or {})

    def _chunks(self, arrived: list[tuple[Any, tuple[str, str, str]]], whole_problems: bool) -> list[_Chunk]:
        """Tasks of the items that arrived: each problem's items in arrival order, `chunk` at a time,
        or fewer where too few are waiting to give every actor `depth` tasks of that size; with
        whole_problems (a reward normalised within each problem's items), each problem's items in
        one task (a batch's: judge() hands them over together)."""
        size = len(arrived) if whole_problems else max(
            1, min(self.chunk, math.ceil(len(arrived) / max(1, self.size * self.depth))))
        by_problem: dict[str, list[tuple[Any, tuple[str, str, str]]]] = {}
        for entry in arrived:
            by_problem.setdefault(entry[1][1], []).append(entry)
        return [_Chunk(problem, entries[start:start + size])
                for problem, entries in by_problem.items() for start in range(0, len(entries), size)]

    def _next_chunk(self, queue: collections.deque[_Chunk], actor: _Actor) -> _Chunk | None:
        """The task for `actor`: one of a problem it is warm for, else one of a problem no live actor
        is, else (an actor with nothing to do) any."""
        live = {a.index for a in self._actors if a.alive}
        for wanted in (lambda c: self._affinity.get(c.problem) == actor.index,
                       lambda c: self._affinity.get(c.problem) not in live,
                       lambda c: actor.in_flight == 0):
            for chunk in queue:
                if wanted(chunk):
                    queue.remove(chunk)
                    if self._affinity.get(chunk.problem) not in live:
                        self._affinity[chunk.problem] = actor.index
                    return chunk
        return None

    def _judge(self, items: list[tuple[str, str, str]], completions: bool, reward: str | None,
               params: dict[str, float]) -> list[Judgement]:
        results: list[Judgement | None] = [None] * len(items)
        inbox = _Inbox()
        inbox.put(list(enumerate(items)))
        inbox.close()

        def emit(keys: list[Any], judged: list[dict[str, Any]]) -> None:
            for index, data in zip(keys, judged):
                results[index] = Judgement.from_json(data)

        self._stream(inbox, emit, completions, reward, params)
        return [judgement for judgement in results if judgement is not None]

    def _stream(self, inbox: _Inbox, emit: Any, completions: bool, reward: str | None,
                params: dict[str, float]) -> None:
        queue: collections.deque[_Chunk] = collections.deque()
        running: dict[Any, tuple[_Actor, _Chunk, float]] = {}  # task ref -> actor, chunk, start
        while not inbox.abandoned:
            arrived = inbox.take()
            if arrived:
                queue.extend(self._chunks(arrived, bool(params.get("zscore"))))
            if not queue and not running and inbox.closed():
                return
            while queue:  # a task at a time to the least loaded actor that takes one
                free = sorted((a for a in self._actors if a.alive and a.ready and a.in_flight < self.depth),
                              key=lambda a: a.in_flight)
                taken = next(((a, c) for a in free if (c := self._next_chunk(queue, a)) is not None), None)
                if taken is None:
                    break
                actor, chunk = taken
                ref = actor.handle.judge.remote([item for _, item in chunk.entries], completions, reward, params,
                                                self._baselines_for(actor, chunk.problem))
                running[ref] = (actor, chunk, time.monotonic())
                actor.in_flight += 1
            starting = {a.ready_ref: a for a in self._actors if a.alive and not a.ready and a.ready_ref is not None}
            if queue and not running and not starting:
                raise Error(f"dicebench.ray: no evaluator actor is left to judge {sum(len(c.entries) for c in queue)} "
                            f"item(s) ({len(self.failures)} lost, the last: "
                            f"{self.failures[-1]['error'] if self.failures else 'none'})")
            if not running and not starting:
                inbox.wait(1.0)  # nothing out: wait for items to arrive
                continue
            # While items may still arrive, look at the inbox again every 50 ms.
            done, _ = ray.wait(list(running) + list(starting), num_returns=1,
                               timeout=0.05 if not inbox.closed() else (None if running else 1.0))
            if not done and not running:  # replacements that never started (no room for them)
                for actor in starting.values():
                    if time.monotonic() - actor.asked > self._start_timeout:
                        self._lose(actor, Error(f"it did not start within {self._start_timeout:g} s"), running, queue)
                continue
            for ref in done:
                if ref in starting:
                    self._started(starting[ref], ref, running, queue)
                    continue
                actor, chunk, started = running.pop(ref)
                actor.in_flight -= 1
                try:
                    judged, evaluator_seconds, timed = ray.get(ref)
                except ray.exceptions.RayActorError as error:
                    self._lose(actor, error, running, queue, chunk)
                    continue
                self._timed(actor, chunk.problem, timed)
                emit([key for key, _ in chunk.entries], judged)
                actor.items_judged += len(chunk.entries)
                actor.chunks_judged += 1
                actor.judge_seconds += time.monotonic() - started
                actor.evaluator_seconds += evaluator_seconds

    def _baselines_for(self, actor: _Actor, problem: str) -> list[str]:
        """The baselines other actors timed for `problem` that `actor` has not had yet (each actor
        takes those of its own GPU model and software: the key says which)."""
        given = [key for key in self._problem_baselines.get(problem, ()) if key not in actor.baselines]
        actor.baselines.update(given)
        actor.baselines_given += len(given)
        return [self._baselines[key] for key in given]

    def _timed(self, actor: _Actor, problem: str, timed: list[tuple[str, str]]) -> None:
        """Baselines `actor` timed in a task of `problem` (an actor judges one task at a time: they
        are that problem's), for the actors that judge it next."""
        keys = self._problem_baselines.setdefault(problem, [])
        for key, record in timed:
            if key not in keys:
                keys.append(key)
            self._baselines[key] = record
            actor.baselines.add(key)
            actor.baselines_timed += 1

    def _started(self, actor: _Actor, ref: Any, running: dict, queue: collections.deque[_Chunk]) -> None:
        """A replacement's where() came back: it takes tasks from now on (or it failed to start)."""
        actor.ready_ref = None
        try:
            actor.where = ray.get(ref)
            actor.ready = True
        except ray.exceptions.RayError as error:
            self._lose(actor, error, running, queue)

    def _lose(self, actor: _Actor, error: BaseException, running: dict, queue: collections.deque[_Chunk],
              failed: _Chunk | None = None) -> None:
        """An actor died: its tasks in flight go back to the queue's front, to be judged by the others,
        and a replacement is asked for while replacements are left (Ray places it where there is room;
        it takes tasks once started)."""
        again = ([failed] if failed else []) + [chunk for a, chunk, _ in running.values() if a is actor]
        for ref in [r for r, (a, _, _) in running.items() if a is actor]:
            del running[ref]
        for lost in reversed(again):
            queue.appendleft(lost)
        if not actor.alive:
            return
        actor.alive = False
        actor.in_flight = 0
        self.failures.append({"actor": actor.index, "node": actor.where.get("node", ""),
                              "host": actor.where.get("host", ""), "error": _first_line(error),
                              "items_judged_again": sum(len(chunk.entries) for chunk in again)})
        try:
            ray.kill(actor.handle)
        except Exception:  # noqa: BLE001 - already gone
            pass
        if self._replacements_left > 0:
            self._replacements_left -= 1
            replacement = self._start_actor()
            replacement.ready_ref = replacement.handle.where.remote()
            replacement.asked = time.monotonic()

    def close(self, wait: bool = True) -> None:
        """Ends every actor (their Evaluators' workers with them); later calls raise dicebench.Error.
        wait=False kills them at once, their tasks in flight with them (whoever wanted them is gone)."""
        self._closed = True
        for actor in self._actors:
            if actor.alive:
                try:
                    if wait:
                        ray.get(actor.handle.close.remote(), timeout=60)
                except ray.exceptions.RayError:
                    pass
                ray.kill(actor.handle)
                actor.alive = False

    def __enter__(self) -> EvaluatorPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
