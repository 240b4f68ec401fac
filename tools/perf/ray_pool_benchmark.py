#!/usr/bin/env python3
"""Benchmark of dicebench.ray.EvaluatorPool's own cost: what Ray's scheduling and transfers add per
task and per candidate, on a local multi-node Ray cluster (ray.cluster_utils.Cluster) with CPU
actors, against one local Evaluator judging the same batch; and, from those figures and a measured
per-candidate time on one GPU, the makespan of an RL step on many GPUs.

usage: ray_pool_benchmark.py --kernelbench-root DIR [--nodes 2] [--actors 2] [--items 256]
                             [--real 16] [--gpu-seconds 2.13] [--tail-seconds 120] [--json FILE]

Steps (wall clock in this process; the actors on the nodes of one machine):
1. overhead: --items completions without a code block for a fixture problem (the suite judges each
   extraction_failed without starting a worker: the Evaluator's own work is about a millisecond), in
   tasks of one item (chunk=1, depth=1: one task in flight per actor, so a round trip is never a
   wait behind another task) and of 16; per task: the round trip (submission to result) minus the
   Evaluator's time inside the actor (EvaluatorActor.judge measures it) is Ray's cost.
2. real: --real candidates (correct elementwise adds of the fixture's level 1 problem 1, each
   distinct) through the pool (--actors actors of one CPU worker each, tasks of 4, two in flight
   each) and through one local Evaluator with as many workers, both warmed by one candidate a
   worker first: the makespans and their ratio.
3. scale on paper: for 1,024 candidates on 8, 32 and 64 GPUs, the makespan from the per-candidate
   time of one GPU (--gpu-seconds: the RL step benchmark's figure on an H100) plus Ray's per-task
   cost, and the bound a single slow item sets (--tail-seconds: a torch-toolchain build and its
   re-judge, or a hang's timeout).
Prints tables and writes everything as JSON (--json).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from population_benchmark import Parser, fail  # one error line naming this tool, exit 2 or 1

PROG = "ray_pool_benchmark"
HERE = os.path.dirname(os.path.abspath(__file__))
ADD = ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def __init__(self, *args):\n"
       "        super().__init__()\n\n    def forward(self, a, b):\n        return a + b  # variant {n}\n")


def overhead(pool, problem: str, items: int, per_task: int) -> dict:
    """Ray's cost per task and per item for tasks of per_task items of near-zero work."""
    pool.chunk = per_task
    before = {s["actor"]: (s["task_seconds"], s["evaluator_seconds"], s["tasks_judged"]) for s in pool.stats()}
    started = time.perf_counter()
    judged = pool.judge(problem, [f"attempt {n}: no code this time" for n in range(items)])
    wall = time.perf_counter() - started
    assert all(j.evaluation.verdict == "extraction_failed" for j in judged), "unexpected verdicts"
    round_trip = evaluator = 0.0
    tasks = 0
    for s in pool.stats():
        t0, e0, n0 = before.get(s["actor"], (0.0, 0.0, 0))
        round_trip += s["task_seconds"] - t0
        evaluator += s["evaluator_seconds"] - e0
        tasks += s["tasks_judged"] - n0
    ray_s = round_trip - evaluator
    return {"items": items, "items_per_task": per_task, "tasks": tasks, "wall_s": wall,
            "round_trip_per_task_ms": 1000 * round_trip / tasks, "evaluator_per_task_ms": 1000 * evaluator / tasks,
            "ray_per_task_ms": 1000 * ray_s / tasks, "ray_per_item_ms": 1000 * ray_s / items,
            "wall_per_item_ms": 1000 * wall / items}


def main() -> int:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench-root", default=os.path.join(HERE, "..", "..", "tests", "data", "kernelbench"))
    parser.add_argument("--nodes", type=int, default=2, help="worker nodes of the local cluster (default 2)")
    parser.add_argument("--actors", type=int, default=2, help="CPU actors, one evaluator worker each (default 2)")
    parser.add_argument("--items", type=int, default=256, help="near-zero-work items for the overhead (default 256)")
    parser.add_argument("--real", type=int, default=16, help="real candidates, pool against local (default 16)")
    parser.add_argument("--gpu-seconds", type=float, default=2.13,
                        help="one GPU's seconds per candidate of an RL step (default 2.13: an H100, 4 slots)")
    parser.add_argument("--tail-seconds", type=float, default=120.0,
                        help="the slowest single item's seconds (default 120: a toolchain build and its re-judge)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    for name in ("nodes", "actors", "items"):
        if getattr(args, name) < 1:
            fail(f"--{name} is at least 1")
    if args.real < 0:
        fail("--real is 0 or more")
    root = os.path.abspath(args.kernelbench_root)
    if not os.path.isdir(os.path.join(root, "level1")):
        fail(f"--kernelbench-root {root}: no level1/ folder there")
    try:
        import ray
        from ray.cluster_utils import Cluster
    except ImportError:
        fail("Ray is not installed (pip install ray)")
    import dicebench
    import dicebench.ray

    settings = {"suite": "kernelbench-l1", "config": {"kernelbench.root": root}, "timing": False, "trials": 1,
                "timeout": 60.0, "workers": 1, "spares": 1}
    problem = "kernelbench/level1/1"
    report: dict = {"benchmark": PROG, "format": 1, "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
                    "ray": ray.__version__, "nodes": args.nodes, "actors": args.actors, "cpus": os.cpu_count()}
    print(f"{PROG}: a local Ray {ray.__version__} cluster of {args.nodes} node(s), {args.actors} CPU actor(s), "
          f"{os.cpu_count()} CPU(s) on this machine", flush=True)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    per_node = -(-args.actors // args.nodes)
    for _ in range(args.nodes):
        cluster.add_node(num_cpus=per_node, resources={"dicebench_cpu": per_node})
    ray.init(address=cluster.address, logging_level="ERROR", include_dashboard=False)
    try:
        started = time.perf_counter()
        pool = dicebench.ray.EvaluatorPool("cpu", size=args.actors, resource="dicebench_cpu", depth=1, **settings)
        report["pool_start_s"] = time.perf_counter() - started
        print(f"  pool started in {report['pool_start_s']:.1f} s", flush=True)
        overhead(pool, problem, 2 * args.actors, 1)  # warm: the actors' first calls
        report["overhead"] = [overhead(pool, problem, args.items, per_task) for per_task in (1, 16)]
        if args.real:
            candidates = [ADD.format(n=n) for n in range(args.real)]
            pool.chunk, pool.depth = 1, 1
            pool.judge(problem, [ADD.format(n=-1 - n) for n in range(args.actors)], completions=False)  # warm
            pool.chunk, pool.depth = 4, 2
            started = time.perf_counter()
            judged = pool.judge(problem, candidates, completions=False)
            pool_s = time.perf_counter() - started
            pool_verdicts = [j.evaluation.verdict for j in judged]
            pool.close()
            with dicebench.Evaluator("cpu", **{**settings, "workers": args.actors}) as local:
                local.judge(problem, [ADD.format(n=-1)], completions=False)  # warm, as the pool's actors were
                started = time.perf_counter()
                local_judged = local.judge(problem, candidates, completions=False)
                local_s = time.perf_counter() - started
            report["real"] = {"candidates": args.real, "pool_s": pool_s, "local_s": local_s,
                              "pool_over_local": pool_s / local_s,
                              "same_verdicts": pool_verdicts == [j.evaluation.verdict for j in local_judged],
                              "verdicts": sorted(set(pool_verdicts))}
        else:
            pool.close()
    finally:
        ray.shutdown()
        cluster.shutdown()

    ray_task_ms = report["overhead"][1]["ray_per_task_ms"]
    scale = []
    for gpus in (8, 32, 64):
        per_gpu = -(-1024 // gpus)
        tasks = -(-per_gpu // 16)
        work = per_gpu * args.gpu_seconds
        scale.append({"gpus": gpus, "candidates_per_gpu": per_gpu, "work_s": work,
                      "ray_s": tasks * ray_task_ms / 1000, "tail_s": args.tail_seconds,
                      "makespan_s": max(work + tasks * ray_task_ms / 1000, args.tail_seconds),
                      "bound": "per-GPU work" if work > args.tail_seconds else "the slowest item"})
    report["scale"] = {"candidates": 1024, "gpu_seconds_per_candidate": args.gpu_seconds,
                       "tail_seconds": args.tail_seconds, "rows": scale}

    print("\n  Ray's cost (round trip minus the Evaluator's own time, one task in flight per actor):")
    print(f"   {'items/task':>10} {'tasks':>6} {'round trip ms':>14} {'evaluator ms':>13} {'Ray ms/task':>12} "
          f"{'Ray ms/item':>12} {'wall ms/item':>13}")
    for row in report["overhead"]:
        print(f"   {row['items_per_task']:>10} {row['tasks']:>6} {row['round_trip_per_task_ms']:>14.2f} "
              f"{row['evaluator_per_task_ms']:>13.2f} {row['ray_per_task_ms']:>12.2f} {row['ray_per_item_ms']:>12.3f} "
              f"{row['wall_per_item_ms']:>13.2f}")
    if "real" in report:
        r = report["real"]
        print(f"\n  {r['candidates']} real candidates: pool {r['pool_s']:.1f} s, one local Evaluator with "
              f"{args.actors} workers {r['local_s']:.1f} s (pool / local {r['pool_over_local']:.2f}); "
              f"same verdicts: {r['same_verdicts']} ({', '.join(r['verdicts'])})")
    print(f"\n  1,024 candidates on paper ({args.gpu_seconds:.2f} s per candidate on one GPU, "
          f"Ray {ray_task_ms:.1f} ms per task of 16, the slowest item {args.tail_seconds:.0f} s):")
    print(f"   {'GPUs':>5} {'cands/GPU':>9} {'work s':>8} {'Ray s':>7} {'makespan s':>11}  bound")
    for row in scale:
        print(f"   {row['gpus']:>5} {row['candidates_per_gpu']:>9} {row['work_s']:>8.1f} {row['ray_s']:>7.2f} "
              f"{row['makespan_s']:>11.1f}  {row['bound']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as file:
            json.dump(report, file, indent=1)
        print(f"\n  written: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
