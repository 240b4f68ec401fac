#!/usr/bin/env python3
"""Degenerate traits of every KernelBench problem, judged from the reference alone: the check
`dicebench run` makes once per problem, device and tolerance (reference.traits in the worker's
harness, the same code), run over a whole KernelBench checkout.

usage: problem_traits.py --kernelbench-root DIR [--levels 1,2,3] [--device cuda] [--draws 3]
                         [--tolerance per_dtype] [--model-mode train] [--json FILE]

Each problem is prepared as the reference worker prepares it (Model(*get_init_inputs()) under a
seed, in KernelBench's training mode by default) and judged on --draws draws of get_inputs(): the
traits constant_output, zeros_pass, output_equals_input and near_constant_output (harness/worker/python/
dicebench_harness/reference.py says what each means). Prints the flagged problems as a table and
per-level counts, and writes every problem's traits, details and seconds as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
for concern in ("fastpath", "timing", "worker"):  # the harness's Python, each concern's python/ folder
    sys.path.insert(0, os.path.join(HERE, "..", "..", "harness", concern, "python"))

from dicebench_harness import protocol  # noqa: E402
from dicebench_harness.reference import ReferenceRole  # noqa: E402

PROBLEM_FILE = re.compile(r"^(\d+)_.*\.py$")


def problems(root: str, levels: list[int]) -> list[tuple[int, int, str]]:
    """(level, id, path) of every problem file, by level and id."""
    if os.path.isdir(os.path.join(root, "KernelBench")):
        root = os.path.join(root, "KernelBench")
    found = []
    for level in levels:
        folder = os.path.join(root, f"level{level}")
        if not os.path.isdir(folder):
            raise SystemExit(f"problem_traits.py: error: no folder level{level} in {root}")
        for name in os.listdir(folder):
            match = PROBLEM_FILE.match(name)
            if match:
                found.append((level, int(match.group(1)), os.path.join(folder, name)))
    return sorted(found)


def judge(role: ReferenceRole, work: str, path: str, args: argparse.Namespace, index: int) -> dict:
    handlers = role.handlers()
    job = f"p{index}"
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    started = time.perf_counter()
    prepared = handlers["reference.prepare"](protocol.validate_request({
        "type": "reference.prepare", "job": job, "problem_source": source, "device": args.device,
        "init_seed": 1000 + index, "work_dir": work, "tolerance": args.tolerance, "model_mode": args.model_mode,
        "problem_name": os.path.basename(path)}))
    try:
        if not prepared["ok"]:
            return {"ok": False, "message": prepared["message"], "seconds": time.perf_counter() - started}
        seeds = [7919 * (index + 1) + draw for draw in range(args.draws)]
        judged = handlers["reference.traits"](protocol.validate_request(
            {"type": "reference.traits", "job": job, "seeds": seeds}))
        return {"ok": judged["ok"], "message": judged["message"], "traits": judged["traits"],
                "details": judged["details"], "seconds": time.perf_counter() - started}
    finally:
        handlers["reference.release"]({"type": "reference.release", "job": job})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench-root", required=True)
    parser.add_argument("--levels", default="1,2,3")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--tolerance", default=protocol.TOLERANCE_MODES[0], choices=protocol.TOLERANCE_MODES)
    parser.add_argument("--model-mode", default="train", choices=protocol.MODEL_MODES)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    try:
        levels = [int(x) for x in args.levels.split(",")]
    except ValueError:
        raise SystemExit(f"problem_traits.py: error: --levels must be numbers such as 1,2,3, not {args.levels!r}")
    if not 2 <= args.draws <= 16:
        raise SystemExit("problem_traits.py: error: --draws must be 2 to 16")
    todo = problems(args.kernelbench_root, levels)
    work = tempfile.mkdtemp(prefix="dicebench-traits-")
    private = os.path.join(work, "private")
    os.mkdir(private)
    role = ReferenceRole(args.device, private)
    results = []
    began = time.perf_counter()
    try:
        for index, (level, problem_id, path) in enumerate(todo):
            result = judge(role, work, path, args, index)
            result.update(level=level, problem_id=problem_id, name=os.path.basename(path))
            results.append(result)
            mark = ",".join(result.get("traits") or []) if result["ok"] else "FAILED: " + result["message"][:80]
            print(f"[{index + 1}/{len(todo)}] L{level}/{problem_id} {result['seconds']:.1f} s {mark}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    flagged = [r for r in results if r["ok"] and r["traits"]]
    print(f"\n{'problem':<48} traits")
    for r in flagged:
        print(f"{'L%d/%s' % (r['level'], r['name'][:-3]):<48} {', '.join(r['traits'])}")
    print("\nlevel  problems  flagged  failed")
    for level in levels:
        mine = [r for r in results if r["level"] == level]
        print(f"{level:>5}  {len(mine):>8}  {sum(1 for r in mine if r['ok'] and r['traits']):>7}  "
              f"{sum(1 for r in mine if not r['ok']):>6}")
    print(f"total  {len(results):>8}  {len(flagged):>7}  {sum(1 for r in results if not r['ok']):>6}   "
          f"in {time.perf_counter() - began:.0f} s on {args.device}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"device": args.device, "tolerance": args.tolerance, "model_mode": args.model_mode,
                       "draws": args.draws, "problems": results}, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
