#!/usr/bin/env python3
"""verl's custom reward function judged by dicebench (dicebench.trainers.verl): this file is what
verl's config names, or run it with --dry-run to judge built-in tiny items on the CPU.

verl >= 0.8 (python -m verl.trainer.main_ppo ...; the default naive reward manager):
    reward.custom_reward_function.path=tools/examples/rl/verl_reward.py
    reward.custom_reward_function.name=compute_score          # async: concurrent samples judged together
    reward.num_workers=1                                       # one Evaluator; or DICEBENCH_URL for many workers
verl >= 0.8 with reward.reward_manager.name=remote, or verl <= 0.7 (naive):  ...name=compute_score_sync
verl <= 0.7 with reward_model.reward_manager=batch:  custom_reward_function.name=compute_score_batch
verl/trainer/main_eval.py:                            custom_reward_function.name=compute_score_value
(pkg://dicebench.trainers.verl with name=compute_score_async is the same without this file.)

Dataset rows (parquet): data_source, prompt (the chat messages), reward_model={"ground_truth": <the
problem: its PyTorch source, or a suite id such as kernelbench/level2/40>}. verl passes the response
alone (skip_special_tokens=True), and the suite's extraction finds its code.
Environment of the reward workers (Ray workers of a local ray.init inherit the driver's):
    DICEBENCH_SUITE=kernelbench DICEBENCH_KERNELBENCH_ROOT=/path/to/KernelBench
    DICEBENCH_REWARD=correctness          # or speedup, correct_plus_speedup, log_speedup
    DICEBENCH_URL=http://host:port        # judge on a `dicebench serve` instead of in each worker
    DICEBENCH_RAY_POOL=8                  # or on 8 actors of the trainer's Ray cluster (dicebench.ray),
                                          # on GPUs that declare the resource dicebench_gpu
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from dicebench.trainers.verl import compute_score as compute_score_sync
from dicebench.trainers.verl import compute_score_async as compute_score
from dicebench.trainers.verl import compute_score_batch, compute_score_value

__all__ = ["compute_score", "compute_score_batch", "compute_score_sync", "compute_score_value"]


def dry_run(device: str) -> int:
    """Scores the built-in tiny completions as verl's NaiveRewardManager.run_single calls them."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from dicebench.trainers.verl import configure
    from tiny_items import CANDIDATES, SUITE_ID, completion, suite_folder

    with suite_folder() as config:
        configure(device=device, suite="kernelbench-l1", config=config,
                  evaluator={"workers": 2, "timing_budget": 0.3, "timeout": 60})

        async def score_all() -> list[dict]:
            calls = [compute_score(data_source="dicebench/tiny", solution_str=completion(code), ground_truth=SUITE_ID,
                                   extra_info={"num_turns": None, "rollout_reward_scores": {}})
                     for code in CANDIDATES.values()]
            return await asyncio.gather(*calls)

        results = asyncio.run(score_all())
        configure()  # closes the Evaluator while the folder is still there
    for name, result in zip(CANDIDATES, results):
        print(f"{name:8} {result}")
    return 0 if [r["score"] for r in results] == [1.0, 0.0, 0.0] else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true", help="score built-in tiny completions and print them")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    args = parser.parse_args()
    if not args.dry_run:
        parser.error("this file is for verl's config (see above); run it with --dry-run to try it")
    return dry_run(args.device)


if __name__ == "__main__":
    sys.exit(main())
