"""Reward adapters for reinforcement-learning trainers: each a thin layer over judge() (an in-process
dicebench.Evaluator, or `dicebench serve` through RemoteJudge when DICEBENCH_URL is set), taking what
the trainer passes and giving back what it expects; the rewards themselves are dicebench's shapes
(dicebench.REWARD_SHAPES), never computed here.

    dicebench.trainers.dice       evaluate_kernel_dataset(): DICE's training/RL/reward/rl_execute_kernel.py
    dicebench.trainers.verl       compute_score / compute_score_async / compute_score_batch (verl 0.5 - 0.9)
    dicebench.trainers.trl        KernelReward / AsyncKernelReward for GRPOTrainer(reward_funcs=...) (TRL)
    dicebench.trainers.openrlhf   reward_func(queries, prompts, labels) (--reward.remote_url file.py)
    dicebench.trainers.remote     RemoteJudge: the stdlib HTTP client of `dicebench serve`

Settings come from configure(...) or the environment: DICEBENCH_URL (and DICEBENCH_TOKEN), else an
Evaluator of DICEBENCH_DEVICE, DICEBENCH_SUITE, DICEBENCH_CONFIG and DICEBENCH_EVALUATOR; the reward
from DICEBENCH_REWARD and DICEBENCH_REWARD_PARAMS (see Settings). The adapter modules are imported
one by one (`from dicebench.trainers.verl import compute_score_async`); none imports its trainer.
"""

from dicebench.trainers._common import Judge, Settings, configure, current_settings, shared_judge
from dicebench.trainers.remote import RemoteError, RemoteJudge

__all__ = ["Judge", "RemoteError", "RemoteJudge", "Settings", "configure", "current_settings", "shared_judge"]
