#!/usr/bin/env python3
"""OpenRLHF's reward function judged by dicebench (dicebench.trainers.openrlhf): this file is what
--reward.remote_url names, or run it with --dry-run to judge built-in tiny items on the CPU.

OpenRLHF >= 0.10.2 (python -m openrlhf.cli.train_ppo_ray ...; <= 0.10.1: --remote_rm_url):
    --reward.remote_url tools/examples/rl/openrlhf_reward.py
    --data.input_key prompt --data.label_key problem     # the label: the problem's PyTorch source or suite id
Environment of the vLLM engines that load it (each makes its own Evaluator; with several, use a server):
    DICEBENCH_SUITE=kernelbench DICEBENCH_KERNELBENCH_ROOT=/path/to/KernelBench  DICEBENCH_REWARD=correctness
Or let `dicebench serve` answer OpenRLHF's HTTP call itself, with no file:
    --reward.remote_url http://HOST:PORT/v1/openrlhf
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from dicebench.trainers.openrlhf import reward_func

__all__ = ["reward_func"]


def dry_run(device: str) -> int:
    """Calls reward_func as OpenRLHF's SingleTurnAgentExecutor does: one sample a call, from threads."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from dicebench.trainers import configure
    from tiny_items import CANDIDATES, SUITE_ID, chat_prompt, completion, suite_folder

    prompt = chat_prompt()
    queries = [prompt + completion(code) + "<|im_end|>" for code in CANDIDATES.values()]

    async def rollouts() -> list[dict]:
        return await asyncio.gather(*(asyncio.to_thread(reward_func, [q], [prompt], [SUITE_ID]) for q in queries))

    with suite_folder() as config:
        configure(device=device, suite="kernelbench-l1", config=config,
                  evaluator={"workers": 2, "timing_budget": 0.3, "timeout": 60})
        results = asyncio.run(rollouts())
        configure()  # closes the Evaluator while the folder is still there
    for name, result in zip(CANDIDATES, results):
        print(f"{name:8} {result}")
    return 0 if [r["rewards"] for r in results] == [[1.0], [0.0], [0.0]] else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true", help="judge built-in tiny items and print the results")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    args = parser.parse_args()
    if not args.dry_run:
        parser.error("this file is for --reward.remote_url (see above); run it with --dry-run to try it")
    return dry_run(args.device)


if __name__ == "__main__":
    sys.exit(main())
