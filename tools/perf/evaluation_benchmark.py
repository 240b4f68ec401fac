#!/usr/bin/env python3
"""Benchmark of candidate evaluation on a GPU: dicebench's pipeline (NVRTC fast path, workers,
CUPTI timing) next to torch's stock load_inline toolchain, on the same candidates, in one run.

usage: evaluation_benchmark.py --dicebench BIN --kernelbench-root DIR --candidates DIR
                               [--repeat-problem L/ID ...] [--repeats 10] [--set KEY=VALUE ...]
                               [--steps dicebench,stock,repeat] [--json FILE]

--candidates holds KernelBench-style files (level_L_problem_P_sample_0_kernel.py) of levels 1
and 2. Steps, each timed with a wall clock:
1. dicebench: one `dicebench run --model replay:<candidates>` per level, with a fresh compile
   cache, evaluating every candidate fully (compile, 5 correctness trials, timing, the check
   after timing, the baseline). Per candidate from the database: compile path and time, the
   evaluation's own time, verdict, speedup.
2. stock: every candidate's source executed with torch's own load_inline (a fresh extensions
   folder each, all candidates in parallel, one process per CPU core, as KernelBench precompiles),
   timing each candidate's compile.
3. repeat: each --repeat-problem candidate evaluated --repeats times in one run (the same file as
   samples 0..N-1); the spread of the medians is (max - min) / median of the N runtime medians.
--set passes settings to every `dicebench run` (e.g. eval.prefetch=0).
Prints a table per candidate and a summary against the targets, and writes everything as JSON.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

NAME = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")

STOCK_COMPILE = r"""
import json, sys, time, types
path = sys.argv[1]
source = open(path).read()
module = types.ModuleType("candidate")
module.__file__ = path
started = time.perf_counter()
try:
    exec(compile(source, path, "exec"), module.__dict__)
    ok, error = True, ""
except BaseException as e:  # noqa: BLE001
    ok, error = False, f"{type(e).__name__}: {str(e)[:300]}"
print(json.dumps({"ok": ok, "seconds": time.perf_counter() - started, "error": error}))
"""


def candidates(folder: str) -> list[dict]:
    found = []
    for name in sorted(os.listdir(folder)):
        match = NAME.match(name)
        if match:
            level, problem, sample = map(int, match.groups())
            found.append({"file": name, "level": level, "problem": problem, "sample": sample})
    return found


def run_dicebench(args, folder: str, level: int, problems: list[int], db: str, cache: str) -> float:
    command = [args.dicebench, "run", "--model", f"replay:{folder}", "--suite", f"kernelbench-l{level}",
               "--kernelbench-root", args.kernelbench_root, "--problems", ",".join(map(str, problems)),
               "--db", db, "--set", f"eval.fastpath_cache={cache}"]
    for setting in args.set:
        command += ["--set", setting]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"benchmark: dicebench run failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return seconds


def evaluations(db: str) -> list[dict]:
    connection = sqlite3.connect(db)
    connection.row_factory = sqlite3.Row
    rows = connection.execute(
        "SELECT p.level, s.problem_id, s.sample_index, p.name, e.status, e.compile_path, e.compile_reason, "
        "e.compile_seconds, e.runtime_ms, e.baseline_ms, e.speedup, e.custom_kernel_share, e.device_busy_ms, "
        "e.start_span_ms, e.launch_latency_ms, e.call_host_ms, "
        "json_extract(e.details, '$.seconds') AS seconds, json_extract(e.details, '$.runtime_trials') AS trials, "
        "json_extract(e.details, '$.baseline_trials') AS baseline_trials, json_extract(e.details, '$.phases') AS phases, "
        "json_extract(e.details, '$.timed_calls') AS timed_calls, e.margin, e.memory_floor_ms, "
        "(SELECT json_group_object(f.flag, f.detail) FROM evaluation_flags f WHERE f.sample = e.sample) AS flags, "
        "e.error_message FROM evaluations e JOIN samples s ON s.id = e.sample "
        "JOIN problems p ON p.run = s.run AND p.level = s.level AND p.problem_id = s.problem_id "
        "ORDER BY p.level, s.problem_id, s.sample_index"
    ).fetchall()
    connection.close()
    return [{**dict(r), "phases": json.loads(r["phases"] or "{}"), "timed_calls": json.loads(r["timed_calls"] or "null"),
             "flags": json.loads(r["flags"] or "{}")} for r in rows]


def stock_compile(python: str, path: str, work: str) -> dict:
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=tempfile.mkdtemp(dir=work))
    started = time.perf_counter()
    result = subprocess.run([python, "-c", STOCK_COMPILE, path], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    try:
        record = json.loads(result.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001
        record = {"ok": False, "seconds": wall, "error": result.stderr[-300:]}
    record["process_seconds"] = wall
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dicebench", required=True)
    parser.add_argument("--kernelbench-root", required=True)
    parser.add_argument("--candidates", required=True)
    parser.add_argument("--python", default=sys.executable, help="Python with torch, for the stock toolchain")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel stock compiles")
    parser.add_argument("--repeat-problem", action="append", default=[], help="L/ID of a candidate evaluated repeatedly")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--set", action="append", default=[], help="KEY=VALUE for every dicebench run")
    parser.add_argument("--steps", default="dicebench,stock,repeat", help="which steps to run")
    parser.add_argument("--skip-stock", action="store_true", help="the same as leaving stock out of --steps")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    steps = set(args.steps.split(","))
    if not steps <= {"dicebench", "stock", "repeat"}:
        parser.error(f"--steps takes dicebench, stock and repeat, not {args.steps!r}")
    if args.skip_stock:
        steps.discard("stock")

    found = candidates(args.candidates)
    if not found:
        sys.exit(f"benchmark: no level_L_problem_P_sample_S_kernel.py files in {args.candidates}")
    repeated_sources = {}
    for repeat_problem in args.repeat_problem:
        match = re.fullmatch(r"(\d+)/(\d+)", repeat_problem)
        source = match and next((c for c in found if (c["level"], c["problem"]) == tuple(map(int, match.groups()))), None)
        if not source:
            parser.error(f"--repeat-problem {repeat_problem!r}: not L/ID of a candidate in {args.candidates}")
        repeated_sources[repeat_problem] = source
    work = tempfile.mkdtemp(prefix="dicebench-bench-")
    report: dict = {"candidates": len(found), "settings": args.set}

    # 1. dicebench
    levels = sorted({c["level"] for c in found}) if "dicebench" in steps else []
    run_seconds, rows = 0.0, []
    for level in levels:
        problems = sorted({c["problem"] for c in found if c["level"] == level})
        db = os.path.join(work, f"l{level}.db")
        seconds = run_dicebench(args, os.path.abspath(args.candidates), level, problems, db,
                                os.path.join(work, "fastpath-cache"))
        run_seconds += seconds
        rows += evaluations(db)
        print(f"dicebench run, level {level}: {len(problems)} candidates in {seconds:.1f} s", flush=True)
    report["dicebench"] = {"wall_seconds": run_seconds, "evaluations": rows}

    # 2. stock toolchain, in parallel
    stock: dict = {}
    if "stock" in steps:
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {c["file"]: pool.submit(stock_compile, args.python, os.path.join(args.candidates, c["file"]), work)
                       for c in found}
            stock = {name: future.result() for name, future in futures.items()}
        report["stock"] = {"wall_seconds": time.perf_counter() - started, "jobs": args.jobs, "compiles": stock}
        print(f"stock load_inline: {len(stock)} candidates compiled in {report['stock']['wall_seconds']:.1f} s "
              f"with {args.jobs} parallel jobs", flush=True)

    # 3. repeated evaluations of one candidate each
    def spread_of(values):
        return (max(values) - min(values)) / statistics.median(values) if values else None

    report["repeat"] = []
    for repeat_problem in args.repeat_problem if "repeat" in steps else []:
        source = repeated_sources[repeat_problem]
        level, problem = source["level"], source["problem"]
        folder = os.path.join(work, f"repeat-{level}-{problem}")
        os.mkdir(folder)
        for sample in range(args.repeats):
            shutil.copy(os.path.join(args.candidates, source["file"]),
                        os.path.join(folder, f"level_{level}_problem_{problem}_sample_{sample}_kernel.py"))
        db = os.path.join(work, f"repeat-{level}-{problem}.db")
        seconds = run_dicebench(args, folder, level, [problem], db, os.path.join(work, "fastpath-cache"))
        repeated = [r for r in evaluations(db) if r["runtime_ms"]]
        medians = [r["runtime_ms"] for r in repeated]
        # Beside the runtime: the device-busy medians (union of the call's device intervals) and the
        # spans from the harness's start marker (what a timer started before the call measures:
        # the launch latency of the harness, CUPTI and Python included).
        def column(key):
            return [r[key] for r in repeated if r[key]]
        busy, start_spans = column("device_busy_ms"), column("start_span_ms")
        report["repeat"].append({"problem": repeat_problem, "runs": len(medians), "medians_ms": medians,
                                 "spread": spread_of(medians), "device_busy_medians_ms": busy,
                                 "device_busy_spread": spread_of(busy), "start_span_medians_ms": start_spans,
                                 "start_span_spread": spread_of(start_spans),
                                 "launch_latency_medians_ms": column("launch_latency_ms"),
                                 "call_host_medians_ms": column("call_host_ms"), "wall_seconds": seconds})

    # table
    print()
    header = (f"{'candidate':<34} {'verdict':<16} {'path':<8} {'compile s':>9} {'stock s':>8} {'eval s':>7} "
              f"{'runtime ms':>10} {'base ms':>9} {'speedup':>8} {'share':>6}")
    print(header)
    print("-" * len(header))
    for r in rows:
        name = f"L{r['level']} {r['name']}"[:34]
        file = f"level_{r['level']}_problem_{r['problem_id']}_sample_{r['sample_index']}_kernel.py"
        stock_s = stock.get(file, {}).get("seconds")

        def fmt(value, spec):
            return format(value, spec) if isinstance(value, (int, float)) else "-"
        print(f"{name:<34} {r['status']:<16} {r['compile_path'] or '-':<8} {fmt(r['compile_seconds'], '9.2f')} "
              f"{fmt(stock_s, '8.1f')} {fmt(r['seconds'], '7.1f')} {fmt(r['runtime_ms'], '10.4f')} "
              f"{fmt(r['baseline_ms'], '9.4f')} {fmt(r['speedup'], '8.3f')} {fmt(r['custom_kernel_share'], '6.2f')}")

    compile_times = [r["compile_seconds"] for r in rows if r["compile_seconds"] is not None]
    built = [r for r in rows if r["compile_path"] not in (None, "none")]
    nvrtc = [r for r in built if r["compile_path"] == "nvrtc"]
    summary = {
        "median_compile_seconds": statistics.median(compile_times) if compile_times else None,
        "nvrtc_share": len(nvrtc) / len(built) if built else None,
        "total_evaluation_seconds": run_seconds,
        "verdicts": {v: sum(1 for r in rows if r["status"] == v) for v in sorted({r["status"] for r in rows})},
    }
    if stock:
        ok = [s["seconds"] for s in stock.values() if s["ok"]]
        summary["stock_median_compile_seconds"] = statistics.median(ok) if ok else None
        summary["stock_wall_seconds"] = report["stock"]["wall_seconds"]
    summary["repeat_spreads"] = {r["problem"]: r["spread"] for r in report["repeat"]}
    report["summary"] = summary
    print()
    if rows:
        print(f"median compile: {summary['median_compile_seconds']:.2f} s (target <= 1 s)"
              + (f"; stock load_inline median {summary['stock_median_compile_seconds']:.1f} s, "
                 f"{summary['stock_wall_seconds']:.1f} s for all in parallel" if stock and ok else ""))
        print(f"NVRTC path: {len(nvrtc)} of {len(built)} candidates that build extensions"
              + (f" ({100 * summary['nvrtc_share']:.0f}%, target >= 90%)" if built else ""))
        print(f"{len(rows)} candidates fully evaluated in {run_seconds:.1f} s (target <= 40 s for 16)")
    for r in report["repeat"]:
        if r["spread"] is None:
            continue
        print(f"{r['runs']} evaluations of {r['problem']} (median {statistics.median(r['medians_ms']):.4f} ms): "
              f"medians spread {100 * r['spread']:.2f}% (target <= 1%)"
              + (f"; device-busy medians spread {100 * r['device_busy_spread']:.2f}%" if r["device_busy_spread"] is not None else "")
              + (f"; spans from the harness's start spread {100 * r['start_span_spread']:.2f}%"
                 if r["start_span_spread"] is not None else ""))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=2)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
