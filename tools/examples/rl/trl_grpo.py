#!/usr/bin/env python3
"""GRPO with TRL, the reward judged by dicebench (dicebench.trainers.trl.KernelReward).

In a training script (TRL 1.16):
    from dicebench.trainers.trl import AsyncKernelReward      # KernelReward for the sync form
    trainer = GRPOTrainer(model=..., reward_funcs=[AsyncKernelReward("problem")], args=GRPOConfig(...),
                          train_dataset=dataset)               # rows: "prompt" and "problem"
where "problem" is each row's PyTorch source (Model, get_inputs, get_init_inputs) or a suite id
(kernelbench/level2/40). TRL before 1.14: AsyncKernelReward("problem").function(), or KernelReward.

Train (needs trl, datasets and a GPU; DICEBENCH_SUITE / DICEBENCH_KERNELBENCH_ROOT or DICEBENCH_URL):
    python tools/examples/rl/trl_grpo.py --model Qwen/Qwen2.5-Coder-1.5B-Instruct --data rows.jsonl --output grpo-out
rows.jsonl: one {"prompt": [{"role": "user", "content": ...}], "problem": ...} per line.
Try the reward alone on built-in tiny items, on the CPU, called as GRPOTrainer._calculate_rewards calls it:
    python tools/examples/rl/trl_grpo.py --dry-run
"""

from __future__ import annotations

import argparse
import os
import sys


def dry_run(device: str) -> int:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from dicebench.trainers import configure
    from dicebench.trainers.trl import KernelReward
    from tiny_items import CANDIDATES, SUITE_ID, chat_prompt, completion, suite_folder

    reward = KernelReward("problem")
    names = list(CANDIDATES)
    prompts = [[{"role": "user", "content": chat_prompt()}]] * len(names)  # one prompt, G = 3 generations
    completions = [[{"role": "assistant", "content": completion(CANDIDATES[n])}] for n in names]
    with suite_folder() as config:
        configure(device=device, suite="kernelbench-l1", config=config,
                  evaluator={"workers": 2, "timing_budget": 0.3, "timeout": 60})
        rewards = reward(prompts=prompts, completions=completions, completion_ids=[[0]] * len(names),
                         problem=[SUITE_ID] * len(names), trainer_state=None,
                         log_extra=lambda column, values: print(f"log_extra {column}: {values}"),
                         log_metric=lambda name, value: print(f"log_metric {name}: {value}"))
        configure()  # closes the Evaluator while the folder is still there
    for name, value in zip(names, rewards):
        print(f"{name:8} reward={value}")
    return 0 if rewards == [1.0, 0.0, 0.0] else 1


def train(args: argparse.Namespace) -> int:
    from datasets import load_dataset
    from trl import GRPOConfig, GRPOTrainer

    from dicebench.trainers.trl import AsyncKernelReward

    dataset = load_dataset("json", data_files=args.data, split="train")
    config = GRPOConfig(output_dir=args.output, num_generations=args.generations,
                        per_device_train_batch_size=args.generations, max_completion_length=args.max_completion_length,
                        log_completions=True)
    trainer = GRPOTrainer(model=args.model, reward_funcs=[AsyncKernelReward("problem")], args=config,
                          train_dataset=dataset)
    trainer.train()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true", help="call the reward on built-in tiny items and print them")
    parser.add_argument("--device", default="cpu", help="the dry run's device (default: cpu)")
    parser.add_argument("--model", help="the policy to train (a Hugging Face id or folder)")
    parser.add_argument("--data", help="JSON lines with prompt and problem")
    parser.add_argument("--output", default="grpo-out", help="GRPOConfig.output_dir")
    parser.add_argument("--generations", type=int, default=8, help="completions per prompt (GRPO's group)")
    parser.add_argument("--max-completion-length", type=int, default=2048)
    args = parser.parse_args()
    if args.dry_run:
        return dry_run(args.device)
    if not args.model or not args.data:
        parser.error("give --model and --data to train, or --dry-run")
    return train(args)


if __name__ == "__main__":
    sys.exit(main())
