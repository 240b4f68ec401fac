#!/usr/bin/env python3
"""Benchmark of dicebench.evaluate() as a reinforcement-learning reward: candidates per minute
through one Evaluator (one GPU, or --workers evaluators on the CPU), the latency of each call, and
the latency of a call answered from the cache.

usage: evaluate_throughput.py --kernelbench-root DIR [--candidates DIR] [--device cuda|cpu]
                              [--passes 2] [--threads 2] [--workers 2] [--spares 1] [--json FILE]

--candidates holds KernelBench-style files (level_L_problem_P_sample_S_kernel.py; default
tools/perf/candidates); each is paired with problem P of level L under
--kernelbench-root (the repository root or the folder holding level1/). Steps, timed with a wall
clock in this process:
1. first call: one evaluation on a fresh Evaluator (reference and candidate workers start).
2. throughput: every candidate --passes times (each pass's sources differ by a comment, so none is
   answered from the cache), submitted by --threads threads at once; candidates per minute over
   the whole step, and each call's latency (queueing included) p50/p90.
3. cached: every candidate of the last pass once more, answered from the cache.
Prints a table and writes everything as JSON (--json).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import statistics
import sys
import time

import dicebench
from replay_files import NAME, problem_file, read

HERE = os.path.dirname(os.path.abspath(__file__))


def pairs(candidates: str, root: str) -> list[dict]:
    found = []
    for name in sorted(os.listdir(candidates)):
        match = NAME.match(name)
        if match:
            level, problem, _ = map(int, match.groups())
            path = problem_file(root, level, problem, "evaluate_throughput")
            found.append({"name": name, "problem_file": os.path.basename(path), "problem": read(path),
                          "candidate": read(os.path.join(candidates, name))})
    if not found:
        sys.exit(f"evaluate_throughput: no level_L_problem_P_sample_S_kernel.py files in {candidates}")
    return found


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(evaluator: dicebench.Evaluator, problem: str, candidate: str) -> tuple[dicebench.Evaluation, float]:
    started = time.perf_counter()
    result = evaluator.evaluate(problem, candidate)
    return result, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernelbench-root", required=True)
    parser.add_argument("--candidates", default=os.path.join(HERE, "candidates"))
    parser.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda where a GPU is visible")
    parser.add_argument("--passes", type=int, default=2, help="times every candidate is evaluated (distinct sources)")
    parser.add_argument("--threads", type=int, default=2, help="callers submitting at once")
    parser.add_argument("--workers", type=int, default=2, help="evaluators on the CPU (CUDA: one per GPU of --gpus)")
    parser.add_argument("--gpus", default="0", help="GPUs the Evaluator uses on CUDA (default: one GPU, 0)")
    parser.add_argument("--spares", type=int, default=1, help="candidate workers each evaluator keeps started")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    jobs = pairs(args.candidates, args.kernelbench_root)

    gpus = "all" if args.device == "cpu" else args.gpus  # a CPU evaluation names no GPU
    with dicebench.Evaluator(args.device, workers=args.workers, gpus=gpus, spares=args.spares) as evaluator:
        first, first_seconds = timed(evaluator, jobs[0]["problem"], jobs[0]["candidate"] + "\n# first call\n")
        calls = [(job, p, job["candidate"] + f"\n# pass {p}\n") for p in range(args.passes) for job in jobs]
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
            results = list(pool.map(lambda call: timed(evaluator, call[0]["problem"], call[2]), calls))
        wall = time.perf_counter() - started
        cached = [timed(evaluator, job["problem"], source)[1] for job, p, source in calls if p == args.passes - 1]
        device, size = evaluator.device, evaluator.size

    latencies = [seconds for _, seconds in results]
    summary = {
        "device": device,
        "evaluators": size,
        "threads": args.threads,
        "spares": args.spares,
        "candidates": len(calls),
        "first_call_s": first_seconds,
        "wall_s": wall,
        "candidates_per_minute": 60.0 * len(calls) / wall,
        "latency_p50_s": statistics.median(latencies),
        "latency_p90_s": percentile(latencies, 0.9),
        "cached_latency_p50_us": 1e6 * statistics.median(cached),
        "cached_latency_max_us": 1e6 * max(cached),
        "verdicts": dict(collections.Counter(r.verdict for r, _ in results)),
    }
    per_call = [{"candidate": job["name"], "problem": job["problem_file"], "pass": p, "verdict": r.verdict,
                 "latency_s": seconds, "evaluation_s": r.seconds, "speedup": r.speedup, "compile_path": r.compile_path}
                for (job, p, _), (r, seconds) in zip(calls, results)]

    print(f"{'candidate':44} {'pass':>4} {'verdict':16} {'latency s':>9} {'eval s':>7} {'speedup':>8}")
    for row in per_call:
        speedup = f"{row['speedup']:.3f}" if row["speedup"] is not None else "-"
        print(f"{row['candidate']:44} {row['pass']:>4} {row['verdict']:16} {row['latency_s']:9.2f} "
              f"{row['evaluation_s']:7.2f} {speedup:>8}")
    print()
    print(f"device {device}, {size} evaluator(s), {args.threads} thread(s), {len(calls)} candidates in {wall:.1f} s")
    print(f"throughput:     {summary['candidates_per_minute']:.1f} candidates/min")
    print(f"latency:        p50 {summary['latency_p50_s']:.2f} s, p90 {summary['latency_p90_s']:.2f} s "
          f"(first call on a fresh Evaluator: {first_seconds:.2f} s, {first.verdict})")
    print(f"cached call:    p50 {summary['cached_latency_p50_us']:.0f} us, max {summary['cached_latency_max_us']:.0f} us")
    print(f"verdicts:       {', '.join(f'{k} {v}' for k, v in sorted(summary['verdicts'].items()))}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"summary": summary, "calls": per_call}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
