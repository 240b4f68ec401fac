#!/usr/bin/env python3
"""How close the harness's time of a host-bound call comes to its steady-state time, with the
untimed warm call before each timed call (eval.warm_calls) on and off. Needs a CUDA GPU.

A tiny candidate (one load_inline elementwise kernel on 8192 floats: tens of microseconds a call,
nearly all of it host time) is timed through `dicebench eval --json --device cuda` with
eval.warm_calls=on and =off, alternating, --repeats times each (a fresh worker each time), and the
same call is timed in this process in steady state, with no harness work between calls, on
rotating pre-made inputs (--rotate sets of them), three ways:
- CUPTI: the harness's own timer (dicebench_timing.CuptiTimer: L2 flush, CUPTI begin/end, the same
  runtime_ms definition as the evaluation's) around each call, back to back;
- CUDA events: an event pair around each call, back to back, no synchronization between calls;
- throughput: the wall time of --steady-calls calls launched back to back, divided by their count.
Both sides build the kernel the same way: on the NVRTC fast path (as `dicebench eval` does) or, with
--no-fastpath, with torch's toolchain. eval.timing_spread is set tiny (--spread) so every evaluation
runs to max_trials or its budget (--budget seconds), for a full sample.

Prints a table (median, p10, p90 ms, trials, warm calls, and the median against the CUPTI steady
state) and writes everything as JSON (--json). From the repository root, after a build:

  .venv/bin/python tools/perf/warm_call_bias.py --json warm_call_bias.json

(--dicebench names another dicebench; its build tree's lib/dicebench/python must hold the
dicebench_cuda module, which this script imports for the CUPTI timer.)
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
ELEMENTS = 8192

PROBLEM = f'''
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, z):
        return torch.relu(x) * 2.0 + z


def get_inputs():
    return [torch.randn({ELEMENTS}), torch.randn({ELEMENTS})]


def get_init_inputs():
    return []
'''

CANDIDATE = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void relu2_add_kernel(const float* __restrict__ x, const float* __restrict__ z, float* __restrict__ y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = (x[i] > 0.f ? x[i] : 0.f) * 2.f + z[i];
}

torch::Tensor relu2_add(torch::Tensor x, torch::Tensor z) {
    auto y = torch::empty_like(x);
    long n = x.numel();
    int threads = 256;
    int blocks = (int)((n + threads - 1) / threads);
    relu2_add_kernel<<<blocks, threads>>>(x.data_ptr<float>(), z.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

ops = load_inline(
    name="dicebench_warm_call_bias",
    cpp_sources="torch::Tensor relu2_add(torch::Tensor x, torch::Tensor z);",
    cuda_sources=cuda_source,
    functions=["relu2_add"],
    verbose=False,
)


class ModelNew(nn.Module):
    def forward(self, x, z):
        return ops.relu2_add(x.contiguous(), z.contiguous())
'''


def quantiles(values: list[float]) -> dict:
    ordered = sorted(values)

    def at(q: float) -> float:
        position = q * (len(ordered) - 1)
        low = int(position)
        high = min(low + 1, len(ordered) - 1)
        return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

    return {"median_ms": at(0.5), "p10_ms": at(0.1), "p90_ms": at(0.9), "trials": len(ordered)}


def run_eval(dicebench: str, problem: str, candidate: str, warm: bool, args: argparse.Namespace) -> dict:
    command = [dicebench, "eval", "--problem", problem, "--candidate", candidate, "--device", "cuda", "--json",
               "--set", f"eval.warm_calls={'on' if warm else 'off'}", "--set", f"eval.timing_spread={args.spread}",
               "--set", f"eval.timing_budget_s={args.budget}"]
    if args.no_fastpath:
        command.append("--no-fastpath")
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"warm_call_bias: dicebench eval failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    e = json.loads(done.stdout)
    if e.get("verdict") != "correct":
        sys.exit(f"warm_call_bias: the candidate was judged {e.get('verdict')}: {e.get('error_message')}")
    runtime, profile = e["runtime"], e.get("profile") or {}
    return {"measure": f"eval, warm calls {'on' if warm else 'off'}", "warm_calls_setting": warm,
            "median_ms": runtime["median_ms"], "p10_ms": runtime["p10_ms"], "p90_ms": runtime["p90_ms"],
            "trials": runtime["trials"], "warm_calls": runtime.get("warm_calls"), "stop_reason": runtime.get("stop_reason"),
            "timed_calls": e["timed_calls"], "call_host_ms": profile.get("call_host_ms"), "busy_ms": profile.get("busy_ms"),
            "compile_path": (e.get("compile") or {}).get("path"), "baseline_median_ms": (e.get("baseline") or {}).get("median_ms"),
            "timing_s": (e.get("phases") or {}).get("timing"), "wall_s": round(time.perf_counter() - started, 2)}


def steady_state(candidate: str, args: argparse.Namespace) -> list[dict]:
    build = pathlib.Path(args.dicebench).resolve().parents[1]
    for folder in (build / "lib" / "dicebench" / "python", ROOT / "harness" / "timing" / "python",
                   ROOT / "harness" / "fastpath" / "python"):
        sys.path.insert(0, str(folder))
    import runpy

    import torch  # before dicebench_cuda, which shares its CUPTI and runtime

    import dicebench_timing

    compile_path = "fallback"
    if not args.no_fastpath:
        import dicebench_fastpath

        dicebench_fastpath.install(dicebench_fastpath.detect_arch(), tempfile.mkdtemp(prefix="warm-call-bias-"))
    module = runpy.run_path(candidate)
    if not args.no_fastpath:
        import dicebench_fastpath

        records = dicebench_fastpath.compile_records()
        compile_path = records[0]["path"] if records else "none"
    device = torch.device("cuda")
    model = module["ModelNew"]().to(device).eval()
    sets = []
    for index in range(args.rotate):
        torch.manual_seed(1000 + index)
        sets.append([torch.randn(ELEMENTS, device=device), torch.randn(ELEMENTS, device=device)])
    calls = args.steady_calls
    rows = []
    with torch.no_grad():
        for index in range(200):  # warm up: first launches, the allocator, the caches
            model(*sets[index % args.rotate])
        torch.cuda.synchronize()

        timer = dicebench_timing.CuptiTimer(device)
        cupti = [timer(lambda i=index: model(*sets[i % args.rotate])) for index in range(calls)]
        host = [t["call_host_ms"] for t in timer.trials]
        rows.append({"measure": "steady state, CUPTI timer", **quantiles(cupti),
                     "call_host_ms": statistics.median(host), "compile_path": compile_path})

        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(calls)]
        torch.cuda.synchronize()
        for index, (start, end) in enumerate(events):
            start.record()
            model(*sets[index % args.rotate])
            end.record()
        torch.cuda.synchronize()
        rows.append({"measure": "steady state, CUDA events", **quantiles([s.elapsed_time(e) for s, e in events]),
                     "compile_path": compile_path})

        torch.cuda.synchronize()
        started = time.perf_counter()
        for index in range(calls):
            model(*sets[index % args.rotate])
        torch.cuda.synchronize()
        per_call = (time.perf_counter() - started) * 1e3 / calls
        rows.append({"measure": "steady state, back-to-back throughput", "median_ms": per_call, "p10_ms": None,
                     "p90_ms": None, "trials": calls, "compile_path": compile_path})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dicebench", default=str(ROOT / "build" / "bin" / "dicebench"))
    parser.add_argument("--repeats", type=int, default=3, help="evaluations per setting (fresh workers each)")
    parser.add_argument("--budget", type=float, default=10.0, help="eval.timing_budget_s")
    parser.add_argument("--spread", type=float, default=0.0005, help="eval.timing_spread (tiny: run to max_trials)")
    parser.add_argument("--rotate", type=int, default=64, help="pre-made input sets the steady state rotates through")
    parser.add_argument("--steady-calls", type=int, default=2000)
    parser.add_argument("--no-fastpath", action="store_true", help="torch's toolchain on both sides")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    if not os.path.exists(args.dicebench):
        sys.exit(f"warm_call_bias: no dicebench at {args.dicebench} (build it, or give --dicebench)")

    folder = pathlib.Path(tempfile.mkdtemp(prefix="warm-call-bias-"))
    problem, candidate = folder / "problem.py", folder / "candidate.py"
    problem.write_text(PROBLEM)
    candidate.write_text(CANDIDATE)

    rows = []
    for repeat in range(args.repeats):
        for warm in (True, False):
            row = run_eval(args.dicebench, str(problem), str(candidate), warm, args)
            row["repeat"] = repeat
            rows.append(row)
            print(f"  eval {repeat + 1}/{args.repeats}, warm calls {'on ' if warm else 'off'}: "
                  f"{row['median_ms']:.4f} ms over {row['trials']} trials", flush=True)
    steady = steady_state(str(candidate), args)
    rows += steady
    reference = steady[0]["median_ms"]
    summary = {}
    for warm in (True, False):
        medians = [r["median_ms"] for r in rows if r.get("warm_calls_setting") is warm]
        summary[f"warm_calls_{'on' if warm else 'off'}"] = {
            "median_of_medians_ms": statistics.median(medians),
            "bias_vs_steady_cupti": statistics.median(medians) / reference - 1,
            "medians_ms": medians}

    def cell(value, digits=4):
        return "-" if value is None else f"{value:.{digits}f}"

    print(f"\n{'measure':<40} {'median ms':>10} {'p10 ms':>9} {'p90 ms':>9} {'trials':>7} {'warm':>5} "
          f"{'host ms':>8} {'vs steady':>10}")
    for r in rows:
        print(f"{r['measure'] + (' #' + str(r['repeat'] + 1) if 'repeat' in r else ''):<40} {cell(r['median_ms']):>10} "
              f"{cell(r.get('p10_ms')):>9} {cell(r.get('p90_ms')):>9} {r.get('trials', '-'):>7} "
              f"{'-' if r.get('warm_calls') is None else r['warm_calls']:>5} {cell(r.get('call_host_ms')):>8} "
              f"{(r['median_ms'] / reference - 1) * 100:>+9.1f}%")
    for name, s in summary.items():
        print(f"{name}: median of medians {s['median_of_medians_ms']:.4f} ms, "
              f"{s['bias_vs_steady_cupti'] * 100:+.1f}% against the CUPTI steady state")
    report = {"problem": "relu(x) * 2 + z", "elements": ELEMENTS, "settings": vars(args), "rows": rows,
              "steady_cupti_median_ms": reference, "summary": summary}
    try:
        import torch

        report["device"] = torch.cuda.get_device_name()
    except Exception:  # noqa: BLE001
        pass
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
