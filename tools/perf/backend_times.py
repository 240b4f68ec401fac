#!/usr/bin/env python3
"""Compile and evaluation time per kernel language, on one problem: the same ReLU problem
(tests/data/eval/problem_linear_relu.py) answered by CUDA C++ candidates (load_inline: NVRTC fast
path or torch's toolchain) and by Triton candidates (compiled by Triton's JIT at the first launch).
Runs `dicebench eval --json` once per language with all of its candidates, prints a table of
medians, and writes the per-candidate figures as JSON.

Compile time: compile.seconds for CUDA (the load_inline build), compile.jit.seconds for Triton (the
JIT's compiles, which happen inside the first correctness trial). Evaluation time: the candidate's
whole evaluation (start, compile, trials, timing, baseline lookup), as `seconds` in its JSON.

  python3 tools/perf/backend_times.py --dicebench build/bin/dicebench --json out.json
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
EVAL = ROOT / "tests" / "data" / "eval"
PROBLEM = "problem_linear_relu.py"
CANDIDATES = {
    "cuda": ["cuda_relu_inline.py", "fused_ops_relu.py", "fused_ops_fmax.py", "fused_ops_copy.py"],
    "triton": ["triton_relu.py", "triton_autotuned.py", "triton_wrong.py", "triton_wrong_shape.py"],
}


def compile_seconds(backend: str, e: dict) -> float | None:
    if backend == "triton":
        jit = (e.get("compile") or {}).get("jit") or {}
        return jit.get("seconds")
    return (e.get("compile") or {}).get("seconds")


def run_backend(dicebench: str, backend: str, device: str) -> tuple[list[dict], float]:
    args = [dicebench, "eval", "--problem", str(EVAL / PROBLEM), "--json", "--device", device]
    for name in CANDIDATES[backend]:
        args += ["--candidate", str(EVAL / name)]
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"backend_times: {backend}: dicebench eval failed: {done.stderr.strip().splitlines()[-1:]}")
    rows = []
    for name, e in zip(CANDIDATES[backend], json.loads(done.stdout)):
        rows.append({"candidate": name, "verdict": e["verdict"], "compile_path": (e.get("compile") or {}).get("path"),
                     "compile_s": compile_seconds(backend, e), "evaluation_s": e.get("seconds")})
    return rows, wall


def median(values: list) -> float | None:
    values = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dicebench", default=str(ROOT / "build" / "bin" / "dicebench"))
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    report = {"problem": PROBLEM, "device": args.device, "backends": {}}
    print(f"{'backend':<8} {'candidates':>10} {'median compile s':>17} {'median evaluation s':>20} {'wall s':>7}  verdicts")
    for backend in CANDIDATES:
        rows, wall = run_backend(args.dicebench, backend, args.device)
        summary = {"median_compile_s": median([r["compile_s"] for r in rows]),
                   "median_evaluation_s": median([r["evaluation_s"] for r in rows]), "wall_s": round(wall, 2), "candidates": rows}
        report["backends"][backend] = summary
        fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        verdicts = ", ".join(f"{r['candidate']}={r['verdict']}" for r in rows)
        print(f"{backend:<8} {len(rows):>10} {fmt(summary['median_compile_s']):>17} {fmt(summary['median_evaluation_s']):>20} "
              f"{wall:>7.1f}  {verdicts}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
