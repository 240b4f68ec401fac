#!/usr/bin/env python3
"""Replay folders for the dice-infill suite's sanity anchors, from an items file in DICE's format.

Writes OUT/reference/ (each item's reference middle as the answer: every candidate is the item's
cuda_code, so a run must find all of them correct) and OUT/empty/ (an empty middle: prefix + suffix
alone, which must fail), one raw completion per item, level_1_problem_<id>_sample_0.txt, holding the
middle in one ```python code block, so the suite's own extraction and assembly run. Then:

  tools/perf/dice_infill_replay.py ITEMS.json OUT
  dicebench run --model replay:OUT/reference --suite dice-infill --dice-infill-data ITEMS.json --device cuda
  dicebench run --model replay:OUT/empty --suite dice-infill --dice-infill-data ITEMS.json --device cuda
"""
import argparse
import json
import pathlib
import sys


def completion(middle: str) -> str:
    return "```python\n" + middle + ("" if middle.endswith("\n") or not middle else "\n") + "```\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("items", type=pathlib.Path, help="items JSON (DICE's kernel_infilling_evaluation.json format)")
    parser.add_argument("out", type=pathlib.Path, help="folder to write reference/ and empty/ under")
    args = parser.parse_args()
    items = json.loads(args.items.read_text())
    for name, middle_of in (("reference", lambda item: item["middle"]), ("empty", lambda item: "")):
        folder = args.out / name
        folder.mkdir(parents=True, exist_ok=True)
        for item in items:
            (folder / f"level_1_problem_{item['id']}_sample_0.txt").write_text(completion(middle_of(item)))
    print(f"wrote {len(items)} completions each to {args.out / 'reference'} and {args.out / 'empty'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
