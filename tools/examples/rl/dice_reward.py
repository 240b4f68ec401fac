#!/usr/bin/env python3
"""DICE's kernel reward judged by dicebench (dicebench.trainers.dice).

With DICE (training/RL/reward/rl_execute_kernel.py, whose main() evaluates the kernel items of a
rollout file that rl_code_reward_kernel.py then turns into z-scored rewards), either:

  * the drop-in: after DICE's own `def evaluate_kernel_dataset` in rl_execute_kernel.py, add
        from dicebench.trainers.dice import evaluate_kernel_dataset
    and run DICE as before; or
  * this script, in place of that step, on the rollout file it would read:
        python tools/examples/rl/dice_reward.py --input ../PROJECT/temp_data/outputs-rl-MODEL-DATASET.json --flag train

Where it judges: DICEBENCH_URL=http://host:port (a `dicebench serve` shared by every node), else an
Evaluator here (DICEBENCH_DEVICE, default cuda where a GPU is visible; DICEBENCH_EVALUATOR='{"gpus": "0,1"}').
Try it on built-in tiny items, on the CPU:
    python tools/examples/rl/dice_reward.py --dry-run
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any


def dry_run(device: str) -> int:
    """Judges the built-in tiny items and prints DICE's fields."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import dicebench
    from dicebench.trainers.dice import evaluate_kernel_dataset
    from tiny_items import CANDIDATES, PROBLEM

    data: list[dict[str, Any]] = [{"idx": 0, "test_method": "kernel", "pytorch_code": PROBLEM,
                                   "extracted_output": list(CANDIDATES.values())}]
    # The checks of the adapter's own Evaluator (dice_settings): DICE's.
    with dicebench.Evaluator(device, workers=2, trials=1, tolerance="uniform", timeout=60, timing=False) as ev:
        evaluate_kernel_dataset(data, timeout=60, judge=ev)
    item = data[0]
    for name, compiled, correct, result in zip(CANDIDATES, item["compiled"], item["correctness"], item["execution_result"]):
        print(f"{name:8} compiled={compiled} correctness={correct} execution_result={json.dumps(result)[:160]}")
    expected = [[True], [False], [False]]
    return 0 if item["correctness"] == expected else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", help="DICE's rollout file (a JSON list of items); its kernel items are judged")
    parser.add_argument("--output", help="where to write the items (default: over --input, as DICE does)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per candidate (DICE's main() passes 300)")
    parser.add_argument("--flag", default=None, help="train or evaluation (taken, as DICE's, and ignored)")
    parser.add_argument("--dry-run", action="store_true", help="judge built-in tiny items and print the fields")
    parser.add_argument("--device", default=None, help="cpu or cuda (the dry run's default: cpu)")
    args = parser.parse_args()
    if args.dry_run:
        return dry_run(args.device or "cpu")
    if not args.input:
        parser.error("give --input FILE, or --dry-run")
    from dicebench.trainers.dice import evaluate_kernel_dataset

    with open(args.input, encoding="utf-8") as f:
        data = json.load(f)
    kernel_items = [item for item in data if item.get("test_method") == "kernel"]
    evaluate_kernel_dataset(kernel_items, timeout=args.timeout, flag=args.flag)  # in place, as DICE's
    with open(args.output or args.input, "w", encoding="utf-8", errors="surrogatepass") as f:
        json.dump(data, f, indent=2, ensure_ascii=False)
    candidates = sum(len(item["correctness"]) for item in kernel_items)
    correct = sum(x[0] for item in kernel_items for x in item["correctness"])
    print(f"{len(kernel_items)} kernel items, {candidates} candidates, {correct} correct", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
