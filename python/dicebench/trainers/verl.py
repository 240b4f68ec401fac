"""verl's custom reward function, judged by dicebench: the response is a raw completion (the suite's
extraction finds its code), the ground truth the problem (its PyTorch source, or a suite id such as
kernelbench/level2/40), the score the reward shape of the settings (DICEBENCH_REWARD, default
correctness: 1.0 when correct; the trainer normalises within the group, as GRPO does).

Written against verl 0.9.1; the calls below are those of 0.5 - 0.9. Which function to name:

  verl >= 0.8 (RewardLoopManager; the default `naive` reward manager, or `rate_limited`)
      reward.custom_reward_function.path=pkg://dicebench.trainers.verl
      reward.custom_reward_function.name=compute_score_async
    verl/trainer/ppo/reward.py::get_custom_reward_fn loads it (verl/utils/import_utils.py::
    load_extern_object) and, as inspect.iscoroutinefunction finds it async, wraps it in
    _call_with_kwargs_async; verl/experimental/reward_loop/reward_manager/naive.py::
    NaiveRewardManager.run_single then awaits it once per sample, all samples of a worker
    concurrently: compute_score(data_source=, solution_str=, ground_truth=, extra_info=). The
    concurrent calls are gathered by a micro-batcher into one judge() call.
  verl >= 0.8 with reward_manager.name=remote (RemoteRewardManager refuses async functions), or
  verl <= 0.7 with the naive manager (verl/workers/reward_manager/naive.py::NaiveRewardManager.__call__):
      ...name=compute_score     (sync, same keywords; concurrent calls from threads are micro-batched
                                 too, but the legacy naive manager calls one sample at a time: there
                                 the batch manager below judges the whole batch at once)
  verl <= 0.7 with reward_model.reward_manager=batch (verl/workers/reward_manager/batch.py::
  BatchRewardManager.verify, one call for the whole batch):
      custom_reward_function.name=compute_score_batch
  verl/trainer/main_eval.py::process_item (reward_fn(data_source, response, ground_truth), averaged):
      custom_reward_function.name=compute_score_value

The dict results have the same keys for every sample (verl's RewardLoopManager.compute_rm_score takes
the keys of the first sample: one missing later is a KeyError): score, plus acc, compiled, correct
(1.0 / 0.0), speedup (0.0 unless correct), verdict, status (text, which verl's metrics skip).

Dataset rows: data_source (any), reward_model: {"ground_truth": <problem>} (or the problem under
extra_info["pytorch_code"] / ["problem"], for DICE-style data). Settings: configure(...) or the
DICEBENCH_* variables (dicebench.trainers.Settings). Each verl reward worker is a process of its own
with its own Evaluator: with several (reward.num_workers, default 8) on one machine, run one
`dicebench serve` and set DICEBENCH_URL, or set reward.num_workers=1. Reward keyword arguments
(reward.custom_reward_function.reward_kwargs) may set `reward` (a shape) and `reward_params`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import dicebench
from dicebench.trainers._common import (
    Settings,
    current_settings,
    problem_of,
    reward_value,
    shared_batcher,
    summary,
)
from dicebench.trainers._common import configure as _configure

EXTRA_KEYS = ("acc", "compiled", "correct", "speedup", "verdict", "status")


def configure(**fields: Any) -> Settings:
    """Sets the settings of this process's adapters (dicebench.trainers.Settings' fields, over the
    DICEBENCH_* variables), e.g. configure(device="cuda", suite="kernelbench", reward="speedup")."""
    return _configure(**fields)


def _settings(kwargs: dict[str, Any]) -> Settings:
    """The process's settings for completions, with a reward shape from the call's keywords."""
    settings = current_settings().for_completions()
    shape, params = kwargs.get("reward"), kwargs.get("reward_params")
    changes: dict[str, Any] = {}
    if isinstance(shape, str) and shape != settings.reward:
        changes = {"reward": shape, "reward_params": {}}  # another shape: its own parameters
    if isinstance(params, Mapping):  # a dict, or the DictConfig of Hydra's reward_kwargs
        changes["reward_params"] = dict(params)
    return settings.replace(**changes) if changes else settings


def result(judgement: dicebench.Judgement, unjudged: float = 0.0) -> dict[str, Any]:
    """verl's dict for one judgement: score, then EXTRA_KEYS (acc is correct, as verl names accuracy)."""
    facts = summary(judgement)
    return {"score": reward_value(judgement, unjudged), "acc": facts["correct"], **facts}


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> dict[str, Any]:
    """One sample's score (sync): verl's NaiveRewardManager runs it in its loop's thread pool, the
    legacy one directly; concurrent calls are judged together."""
    settings = _settings(kwargs)
    future = shared_batcher(settings).submit(problem_of(ground_truth, extra_info), solution_str)
    return result(future.result(), settings.unjudged_reward)


async def compute_score_async(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                              **kwargs: Any) -> dict[str, Any]:
    """One sample's score (a plain async function, which verl detects as async and awaits): the
    calls a reward worker makes concurrently are gathered into one judge() call."""
    settings = _settings(kwargs)
    future = shared_batcher(settings).submit(problem_of(ground_truth, extra_info), solution_str)
    return result(await asyncio.wrap_future(future), settings.unjudged_reward)


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                        extra_infos: Sequence[Any] | None = None, **kwargs: Any) -> list[dict[str, Any]]:
    """The whole batch's scores in one judge() call (verl <= 0.7's BatchRewardManager), in order; a
    zscore reward is normalised within each problem's group of this batch."""
    settings = _settings(kwargs)
    extras = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    problems = [problem_of(truth, extra) for truth, extra in zip(ground_truths, extras)]
    judged = settings.judge_items(problems, list(solution_strs))
    return [result(j, settings.unjudged_reward) for j in judged]


def compute_score_value(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                        **kwargs: Any) -> float:
    """The score alone, a number (verl's main_eval averages what it gets; PrimeRewardManager takes
    no dict)."""
    return float(compute_score(data_source, solution_str, ground_truth, extra_info, **kwargs)["score"])
