"""TRL reward functions judged by dicebench: KernelReward (sync) and AsyncKernelReward, for
GRPOTrainer(reward_funcs=[...]) and RLOOTrainer. Written against TRL 1.16.0.

TRL calls a reward function once per generation batch, in trl/trainer/grpo_trainer.py::
GRPOTrainer._calculate_rewards (rloo_trainer.py::RLOOTrainer._calculate_rewards alike):

    reward_func(prompts=prompts, completions=completions, completion_ids=completion_ids_list, **reward_kwargs)

with every other dataset column as a keyword (a list, one value per completion: the problem column
among them), trainer_state, log_extra and log_metric; it needs a list of len(prompts) back, None
meaning "no reward for this one" (NaN to TRL). A completion is text, or (a conversational dataset)
a list of messages whose assistant content is the text. All B x G completions of the batch go to
one judge() call, shared out over the Evaluator's slots (or sent to `dicebench serve`).

    from dicebench.trainers.trl import KernelReward
    trainer = GRPOTrainer(model=..., reward_funcs=[KernelReward("problem")], train_dataset=...)

where each dataset row has a `problem` column: the problem's PyTorch source (Model, get_inputs,
get_init_inputs) or a suite id (kernelbench/level2/40). The reward shape is the settings'
(DICEBENCH_REWARD, default correctness) or the `reward` argument; TRL normalises within the group.

Versions: TRL reads the name for its metrics (rewards/<name>/mean) from `__name__` (required up to
1.8: an instance without it fails; since 1.9 trl/trainer/utils.py::get_callable_name), which both
classes set. An instance with `async def __call__` is taken as async only from TRL 1.14
(trl/trainer/utils.py::is_async_callable); with TRL 0.27 - 1.13 pass AsyncKernelReward(...).function(),
a plain async function. The instances hold no judge until their first call, so they pickle.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import dicebench
from dicebench.trainers._common import Judge, Settings, current_settings, problem_of, summary, text_of


class _KernelRewardBase:
    """What the sync and async forms share: reading TRL's arguments, one judge() call, logging."""

    def __init__(
        self,
        problem_column: str = "problem",
        *,
        reward: str | None = None,
        judge: Judge | None = None,
        name: str = "dicebench_kernel",
        log: bool = True,
        **reward_params: float,
    ):
        """problem_column: the dataset column holding each row's problem. reward and reward_params:
        the shape (default: the settings', DICEBENCH_REWARD). judge: a judge to use (an Evaluator,
        a RemoteJudge; default: the process's shared one, from the settings). name: what TRL's
        logs call it. log: add the verdicts to TRL's completions table (log_extra) and the rates
        correct, compiled and judged to its metrics (log_metric), where TRL passes those."""
        self.problem_column = problem_column
        self.reward = reward
        self.reward_params = dict(reward_params)
        self.judge = judge
        self.__name__ = name
        self.log = log
        if reward is not None or reward_params:  # checked now, not at the first batch
            Settings(reward=reward or "correctness", reward_params=self.reward_params)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.problem_column!r}, reward={self.reward!r})"

    def _settings(self) -> Settings:
        settings = current_settings().for_completions()
        if self.reward is not None:
            settings = settings.replace(reward=self.reward, reward_params=self.reward_params)
        elif self.reward_params:
            settings = settings.replace(reward_params=self.reward_params)
        return settings

    def _judge(self, prompts: Sequence[Any], completions: Sequence[Any], kwargs: dict[str, Any]) -> list[dicebench.Judgement]:
        if self.problem_column not in kwargs:
            columns = sorted(k for k in kwargs if k not in ("trainer_state", "log_extra", "log_metric", "environments"))
            raise KeyError(f"{self.__name__}: no dataset column {self.problem_column!r} with the problems "
                           f"(columns given: {', '.join(columns) or 'none'}); name it with KernelReward(problem_column=...)")
        problems = [problem_of(p) for p in kwargs[self.problem_column]]
        texts = [text_of(c) for c in completions]
        if not len(problems) == len(texts) == len(prompts):
            raise ValueError(f"{self.__name__}: {len(prompts)} prompts, {len(texts)} completions and "
                             f"{len(problems)} problems: TRL gives one of each per completion")
        settings = self._settings()
        return settings.judge_items(problems, texts, judge=self.judge)

    def _rewards(self, judged: list[dicebench.Judgement], kwargs: dict[str, Any]) -> list[float | None]:
        if self.log and judged:
            facts = [summary(j) for j in judged]
            log_extra, log_metric = kwargs.get("log_extra"), kwargs.get("log_metric")
            if callable(log_extra):
                log_extra(f"{self.__name__}_verdict", [f["verdict"] or f["status"] for f in facts])
            if callable(log_metric):
                count = len(facts)
                log_metric(f"{self.__name__}/correct", sum(f["correct"] for f in facts) / count)
                log_metric(f"{self.__name__}/compiled", sum(f["compiled"] for f in facts) / count)
                log_metric(f"{self.__name__}/judged", sum(f["status"] == "judged" for f in facts) / count)
        return [None if j.reward is None else float(j.reward) for j in judged]


class KernelReward(_KernelRewardBase):
    """A TRL reward function (sync): one reward per completion, None where dicebench could not judge
    it (its problem failed, or dicebench did)."""

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], completion_ids: Sequence[Any] | None = None,
                 **kwargs: Any) -> list[float | None]:
        return self._rewards(self._judge(prompts, completions, kwargs), kwargs)


class AsyncKernelReward(_KernelRewardBase):
    """A TRL reward function (async, TRL >= 1.14 for the instance itself): judged on a thread, so
    TRL's other async reward functions run meanwhile. function() gives a plain async function of
    it for TRL 0.27 - 1.13."""

    async def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                       completion_ids: Sequence[Any] | None = None, **kwargs: Any) -> list[float | None]:
        judged = await asyncio.to_thread(self._judge, prompts, completions, kwargs)
        return self._rewards(judged, kwargs)

    def function(self) -> Callable[..., Any]:
        """A plain `async def` calling this instance, named as it is (for TRL before 1.14, which
        checks inspect.iscoroutinefunction on the function itself)."""

        async def reward(prompts: Sequence[Any], completions: Sequence[Any], completion_ids: Sequence[Any] | None = None,
                         **kwargs: Any) -> list[float | None]:
            return await self(prompts, completions, completion_ids, **kwargs)

        reward.__name__ = reward.__qualname__ = self.__name__
        reward.__doc__ = type(self).__doc__
        return reward
