#!/usr/bin/env python3
"""Benchmark: dicebench.evaluate() on a batch against `dicebench run` on the same candidates, per
candidate (issue #26: within 10%). Both hand their pairs to the one evaluation loop
(EvaluationSession::evaluate, core/run), so what it measures is the one loop's cost from two front
ends: the run's store writes and reads against the Python module's JSON, and each front end's
start-up.

usage: session_parity.py --kernelbench-root DIR [--candidates DIR] [--level 1] [--count 64]
                         [--device cuda|cpu] [--gpus 0] [--workers 2] [--spares 1] [--cli PATH] [--json FILE]

--candidates holds KernelBench-style files (level_L_problem_P_sample_S_kernel.py; default
tools/perf/candidates); --count copies are made of those of --level in turn (each with its own comment,
so that no two sources are the same) and paired with problem P of level L under --kernelbench-root.
Steps, each timed with a wall clock from this process, each from a cold start (fresh workers, a
fresh database, so each measures its own baselines):
1. run: `dicebench run --model replay:FOLDER --suite kernelbench-lL` on the copies (the replay model
   serves them as they are), the whole command's wall time, and its evaluation stage's from the
   summary (--json).
2. evaluate: a fresh dicebench.Evaluator(suite="kernelbench-lL") and one evaluate(problems, candidates)
   call on the same copies, worker start-up included as in the run.
3. warm: the same Evaluator on the copies again (new comments, so none is cached): a trainer's
   loop after its first step, without start-up.
Per-candidate seconds of each, evaluate / run, and whether the verdicts agree candidate by candidate.
Prints a table and writes everything as JSON (--json).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import dicebench
from replay_files import NAME, problem_file, read

HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 0.10  # evaluate()'s per-candidate time may differ from run's by this fraction


def copies(candidates: str, root: str, wanted_level: int, count: int) -> list[dict]:
    """`count` candidates of the level in turn from the folder, each a replay file name, its problem and source."""
    found = []
    for name in sorted(os.listdir(candidates)):
        if match := NAME.match(name):
            level, problem, _ = map(int, match.groups())
            if level != wanted_level:
                continue
            found.append((level, problem, read(os.path.join(candidates, name)), read(problem_file(root, level, problem, "session_parity"))))
    if not found:
        sys.exit(f"session_parity: no level_{wanted_level}_problem_P_sample_S_kernel.py files in {candidates}")
    samples: collections.Counter = collections.Counter()
    out = []
    for i in range(count):
        level, problem, source, problem_source = found[i % len(found)]
        sample = samples[(level, problem)]
        samples[(level, problem)] += 1
        out.append({"file": f"level_{level}_problem_{problem}_sample_{sample}_kernel.py", "level": level, "problem_id": problem,
                    "sample": sample, "problem": problem_source, "candidate": source + f"\n# session_parity copy {i}\n"})
    return out


def default_cli() -> str:
    beside = os.path.join(os.path.dirname(dicebench.__file__), "..", "..", "..", "..", "bin", "dicebench")
    return os.environ.get("DICEBENCH_CLI") or (beside if os.access(beside, os.X_OK) else shutil.which("dicebench") or "dicebench")


def by_run(args: argparse.Namespace, jobs: list[dict], tmp: str) -> dict:
    folder = os.path.join(tmp, "replay")
    os.makedirs(folder)
    for job in jobs:
        with open(os.path.join(folder, job["file"]), "w", encoding="utf-8") as f:
            f.write(job["candidate"])
    db, summary_file = os.path.join(tmp, "results.db"), os.path.join(tmp, "summary.json")
    command = [args.cli, "run", "--model", "replay:" + folder, "--suite", f"kernelbench-l{args.level}", "--kernelbench-root",
               args.kernelbench_root, "--db", db, "--json", summary_file, "--set", f"eval.cpu_workers={args.workers}"]
    if args.device != "cpu":  # a CPU evaluation names no GPU
        command += ["--gpus", args.gpus]
    if args.device:
        command += ["--device", args.device]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"session_parity: dicebench run failed:\n{done.stderr}")
    rows = dicebench.open(db).query("select s.level, s.problem_id, s.sample_index, e.status from samples s "
                                    "join evaluations e on e.sample = s.id", frame=False)
    verdicts = {(r["level"], r["problem_id"], r["sample_index"]): r["status"] for r in rows}
    summary = json.loads(read(summary_file))
    return {"wall_s": wall, "summary": summary, "verdicts": [verdicts.get((j["level"], j["problem_id"], j["sample"])) for j in jobs]}


def by_evaluate(args: argparse.Namespace, jobs: list[dict]) -> dict:
    started = time.perf_counter()
    evaluator = dicebench.Evaluator(args.device, workers=args.workers, gpus="all" if args.device == "cpu" else args.gpus,
                                    spares=args.spares,
                                    suite=f"kernelbench-l{args.level}", config={"kernelbench.root": args.kernelbench_root})
    with evaluator:
        cold = evaluator.evaluate([j["problem"] for j in jobs], [j["candidate"] for j in jobs])
        cold_wall = time.perf_counter() - started
        started = time.perf_counter()
        warm = evaluator.evaluate([j["problem"] for j in jobs], [j["candidate"] + "# warm\n" for j in jobs])
        warm_wall = time.perf_counter() - started
        device, size, started_evaluators = evaluator.device, evaluator.size, evaluator.evaluators_started
    return {"wall_s": cold_wall, "warm_wall_s": warm_wall, "device": device, "evaluators": size,
            "evaluators_started": started_evaluators, "verdicts": [e.verdict for e in cold],
            "warm_verdicts": [e.verdict for e in warm]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernelbench-root", required=True)
    parser.add_argument("--candidates", default=os.path.join(HERE, "candidates"))
    parser.add_argument("--level", type=int, default=1, help="the KernelBench level of the candidates taken (one suite for both)")
    parser.add_argument("--count", type=int, default=64, help="candidates in the batch")
    parser.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda where a GPU is visible")
    parser.add_argument("--gpus", default="0", help="GPUs both use on CUDA (default: one GPU, 0)")
    parser.add_argument("--workers", type=int, default=2, help="evaluators on the CPU (both)")
    parser.add_argument("--spares", type=int, default=1, help="candidate workers the Evaluator's evaluators keep started")
    parser.add_argument("--cli", default=None, help="the dicebench executable (default: beside this package, or on PATH)")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    args.cli = args.cli or default_cli()
    jobs = copies(args.candidates, args.kernelbench_root, args.level, args.count)

    with tempfile.TemporaryDirectory(prefix="session-parity-") as tmp:
        run = by_run(args, jobs, tmp)
    evaluate = by_evaluate(args, jobs)

    n = len(jobs)
    run_eval_s = (run["summary"].get("time") or {}).get("total", {}).get("gpu_seconds")
    rows = [("dicebench run (whole command)", run["wall_s"]), ("evaluate() batch, cold", evaluate["wall_s"]),
            ("evaluate() batch, warm", evaluate["warm_wall_s"])]
    ratio = evaluate["wall_s"] / run["wall_s"]
    agree = sum(a == b for a, b in zip(run["verdicts"], evaluate["verdicts"]))
    print(f"{'path':32} {'wall s':>8} {'per candidate s':>16}")
    for name, wall in rows:
        print(f"{name:32} {wall:8.2f} {wall / n:16.3f}")
    print()
    print(f"{n} candidates, device {evaluate['device']}, {evaluate['evaluators']} evaluator(s) "
          f"(started {evaluate['evaluators_started']} for both batches)")
    if run_eval_s is not None:
        print(f"run's evaluators' own time (eval s): {run_eval_s:.2f}")
    print(f"evaluate() / run per candidate: {ratio:.3f} ({'within' if abs(ratio - 1) <= TOLERANCE else 'NOT within'} "
          f"{TOLERANCE:.0%})")
    print(f"verdicts agreeing candidate by candidate: {agree}/{n}")
    print(f"verdicts: run {dict(collections.Counter(run['verdicts']))}, evaluate {dict(collections.Counter(evaluate['verdicts']))}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"candidates": n, "run": run, "evaluate": evaluate, "ratio": ratio, "within_tolerance": abs(ratio - 1) <= TOLERANCE,
                       "verdicts_agreeing": agree, "files": [j["file"] for j in jobs]}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
