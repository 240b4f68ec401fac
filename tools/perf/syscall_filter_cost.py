#!/usr/bin/env python3
"""Benchmark: what the sandbox's system-call filter and Landlock rules cost a candidate (issue #39).

usage: syscall_filter_cost.py [--sandbox build/bin/dicebench-sandbox] [--python PYTHON] [--device cpu|cuda]
                              [--launches 30] [--bare-launches 100] [--calls 2000000] [--call-rounds 10]
                              [--program 'COMMAND'] [--json FILE]

0. The launcher's own cost: --bare-launches rounds of `true` under the sandbox, both ways (below):
   the filter's compilation and loading and the Landlock rules, without a program's noise.
1. Start-up: --launches rounds, each launching the same program under dicebench-sandbox twice, once
   as the host launches it (filter and Landlock on) and once with --no-syscall-filter --no-landlock
   (the launcher's options for this measurement only), in an order drawn at random per round so
   that drift in the machine falls on both alike. The program is `PYTHON -c 'import torch'`, and
   with --device cuda one that also initialises CUDA and runs a kernel (a candidate worker's
   start-up); --program replaces it. Each launch's wall time is taken from this process, the
   sandbox's own set-up (namespaces, mount view, cgroup) included in both.
2. Per call: a C loop of --calls getpid() system calls (compiled here with cc; without cc, a Python
   loop of os.getpid()), run under the sandbox with and without the filter, nanoseconds per call.
   getpid is allowed by the filter whatever its arguments, so the kernel's seccomp action cache
   (Linux 5.11) may pass it without running the filter at all; clone and socket, which the filter
   checks by argument, always run it.
Per variant: median, p10 and p90; the difference of the medians (filtered - unfiltered) with a 95%
bootstrap interval, and the median of the per-round differences with its own interval. Prints a
table and writes everything as JSON (--json). On the GPU host set PYTHONPATH=build/lib/dicebench/python
where the environment needs it (the sandbox passes PYTHONPATH on).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
UNPROTECTED = ["--no-syscall-filter", "--no-landlock"]
VARIANTS = {"filter+landlock": [], "neither": UNPROTECTED}
LIMITS = ["--memory-max", str(16 << 30), "--pids-max", "1024"]  # as the host passes them (cgroup set-up in both)

CUDA_PROGRAM = (
    "import torch\n"
    "torch.cuda.init()\n"
    "x = torch.ones(1024, 1024, device='cuda')\n"
    "(x @ x).sum().item()\n"
    "torch.cuda.synchronize()\n"
)

GETPID_LOOP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char** argv) {
  long calls = atol(argv[1]);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = 0; i < calls; ++i) syscall(SYS_getpid);
  clock_gettime(CLOCK_MONOTONIC, &end);
  printf("%.3f\n", ((end.tv_sec - start.tv_sec) * 1e9 + (end.tv_nsec - start.tv_nsec)) / calls);
  return 0;
}
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    at = (len(ordered) - 1) * q
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def bootstrap(statistic, samples: list[list[float]], rounds: int = 2000, seed: int = 39) -> tuple[float, float]:
    """A 95% interval of statistic(*resampled) over `rounds` resamplings of each sample."""
    rng = random.Random(seed)
    values = sorted(statistic(*[rng.choices(s, k=len(s)) for s in samples]) for _ in range(rounds))
    return values[int(0.025 * rounds)], values[int(0.975 * rounds) - 1]


def launch(sandbox: str, job: str, options: list[str], program: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    command = [sandbox, "--mode", "best", "--job-dir", job, *LIMITS, *options, "--", *program]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done


def summary(values: list[float]) -> dict:
    return {"n": len(values), "median": statistics.median(values), "p10": percentile(values, 0.1),
            "p90": percentile(values, 0.9), "min": min(values), "max": max(values)}


def compare(times: dict[str, list[float]]) -> dict:
    filtered, plain = times["filter+landlock"], times["neither"]
    paired = [a - b for a, b in zip(filtered, plain)]
    return {
        "median_difference": statistics.median(filtered) - statistics.median(plain),
        "median_difference_95": bootstrap(lambda a, b: statistics.median(a) - statistics.median(b), [filtered, plain]),
        "paired_median_difference": statistics.median(paired),
        "paired_median_difference_95": bootstrap(statistics.median, [paired]),
    }


def interleaved(args, job: str, program: list[str], rounds: int, rng: random.Random, what: str):
    """`rounds` rounds of one launch per variant, in a shuffled order each round (A/B interleaved, so
    drift in the machine's load falls on both alike): yields (variant, seconds, completed process);
    a failed launch ends the tool naming `what`."""
    for _ in range(rounds):
        order = list(VARIANTS.items())
        rng.shuffle(order)
        for name, options in order:
            seconds, done = launch(args.sandbox, job, options, program)
            if done.returncode != 0:
                sys.exit(f"syscall_filter_cost: {what} failed ({name}):\n{done.stderr[-2000:]}")
            yield name, seconds, done


def start_up(args, job: str, program: list[str], launches: int) -> dict:
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for name, options in VARIANTS.items():  # one unmeasured launch each: page cache, cgroup hierarchy
        _, done = launch(args.sandbox, job, options, program)
        if done.returncode != 0:
            sys.exit(f"syscall_filter_cost: the program failed under the sandbox ({name}):\n{done.stderr[-2000:]}")
        protections = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        print(f"{name}: {protections}", file=sys.stderr)
    for name, seconds, _ in interleaved(args, job, program, launches, random.Random(39), "a launch"):
        times[name].append(seconds)
    return {"program": program, "seconds": times, "summary": {n: summary(t) for n, t in times.items()},
            "comparison": compare(times)}


def per_call(args, job: str) -> dict:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc:
        source = os.path.join(job, "getpid_loop.c")
        binary = os.path.join(job, "getpid_loop")
        with open(source, "w", encoding="utf-8") as f:
            f.write(GETPID_LOOP)
        subprocess.run([cc, "-O2", "-o", binary, source], check=True)
        program, how = [binary, str(args.calls)], "C loop of syscall(SYS_getpid)"
    else:
        loop = f"import os, time\nt = time.perf_counter_ns()\nfor _ in range({args.calls}): os.getpid()\n" \
               f"print((time.perf_counter_ns() - t) / {args.calls})\n"
        program, how = [args.python, "-c", loop], "Python loop of os.getpid() (no cc here)"
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for name, _, done in interleaved(args, job, program, args.call_rounds, random.Random(40), "the getpid loop"):
        times[name].append(float(done.stdout.strip()))
    return {"how": how, "calls": args.calls, "ns_per_call": times, "summary": {n: summary(t) for n, t in times.items()},
            "comparison": compare(times)}


def print_table(title: str, result: dict, unit: str, scale: float) -> None:
    print(f"\n{title}")
    print(f"{'variant':<18}{'median':>12}{'p10':>12}{'p90':>12}   ({unit})")
    for name, s in result["summary"].items():
        print(f"{name:<18}{s['median'] * scale:>12.3f}{s['p10'] * scale:>12.3f}{s['p90'] * scale:>12.3f}")
    c = result["comparison"]
    low, high = c["median_difference_95"]
    plow, phigh = c["paired_median_difference_95"]
    print(f"difference of medians (filter+landlock - neither): {c['median_difference'] * scale:+.3f} {unit} "
          f"[95% bootstrap {low * scale:+.3f}, {high * scale:+.3f}]")
    print(f"median per-round difference: {c['paired_median_difference'] * scale:+.3f} {unit} "
          f"[95% bootstrap {plow * scale:+.3f}, {phigh * scale:+.3f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sandbox", default=os.path.join(ROOT, "build", "bin", "dicebench-sandbox"))
    parser.add_argument("--python", default=sys.executable, help="the Python with torch (default: this one)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--launches", type=int, default=30, help="rounds of start-up launches (one of each variant)")
    parser.add_argument("--bare-launches", type=int, default=100, help="rounds of `true` under the sandbox")
    parser.add_argument("--calls", type=int, default=2_000_000, help="getpid calls per loop")
    parser.add_argument("--call-rounds", type=int, default=10, help="rounds of the getpid loop")
    parser.add_argument("--program", help="the start-up program instead (a shell-split command line)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    if args.program:
        program = shlex.split(args.program)
    elif args.device == "cuda":
        program = [args.python, "-c", CUDA_PROGRAM]
    else:
        program = [args.python, "-c", "import torch"]
    with tempfile.TemporaryDirectory(prefix="syscall-filter-cost-") as job:
        bare = start_up(args, job, ["true"], args.bare_launches)
        startup = start_up(args, job, program, args.launches)
        calls = per_call(args, job)
    print(f"\nmachine: {platform.node()} {platform.machine()}, Linux {platform.release()}, {os.cpu_count()} CPUs")
    print_table(f"the launcher alone ('true'), {args.bare_launches} rounds", bare, "ms", 1e3)
    print_table(f"start-up per candidate ({args.device}; {' '.join(program)[:70]!r}), {args.launches} rounds",
                startup, "ms", 1e3)
    print_table(f"per system call: {calls['how']}, {args.calls} calls, {args.call_rounds} rounds", calls, "ns", 1.0)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"device": args.device, "machine": platform.node(), "kernel": platform.release(),
                       "launcher": bare, "start_up": startup, "per_call": calls}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
