#!/usr/bin/env python3
"""One RL reward step (tasks x responses) judged three ways on the same GPU, in one invocation.

What it is for: our users train kernel-writing LLMs with RL, and one training step judges every
response of every task as its reward; the step waits for the slowest verdict. This benchmark
measures that step as a trainer sees it, through the three paths a trainer can take:
  in-process  dicebench.Evaluator(...).judge(problems, completions, completions=True,
              reward="correctness"): the Python package, workers warm between steps;
  serve       `dicebench serve` (a fresh --db), the same items sent over HTTP (POST
              /v1/evaluate/batch through dicebench.trainers.remote.RemoteJudge, or many concurrent
              POST /v1/evaluate), stopped with SIGTERM;
  dice        DICE's own reward path (training/RL/reward/ of DICE, given with --dice-reward and
              imported from there, never copied): rl_execute_kernel.evaluate_kernel_dataset(...,
              timeout=180, flag="train"), i.e. KernelBench's eval_kernel_against_ref in a fresh
              `python eval_script.py` per kernel, four at a time per GPU, one correctness trial,
              measure_performance=False, torch's own load_inline toolchain for every kernel.
Every path judges correctness only, as DICE's reward does: dicebench with eval.timing=off,
eval.trials=1, eval.tolerance=uniform (DICE's allclose(atol=rtol=1e-2)), the correctness reward,
eval.timeout_s and eval.compile_timeout_s --timeout and --compile-timeout (default 180, DICE's limit;
the hang costs --timeout), eval.prefetch=8, fresh compile caches per path, and --set KEY=VALUE on top;
both dicebench paths get the same settings (Evaluator's own defaults passed to serve too).
DICE's path builds each kernel with torch's toolchain (about a minute each), so it judges a subset
of the SAME candidates (--dice-subset, stratified over the kinds), and its step figure is an
extrapolation (labelled so).

Tasks: drawn deterministically (--seed) from DICE's RL task set (--dice-data,
end_to_end_kernel_generation_4000.json: {idx, level, pytorch_code, ...}), keeping problems the
candidate generator can wrap: Model returns one finite float32 tensor of more than one element from
modest inputs (<= 64 MiB in, <= 64 MiB out), its forward is deterministic (no dropout or random
ops), runs within 1 s on one CPU thread, and the `wrong` kind's output (x * 1.05 + 0.05) is outside
the tolerance. That is checked by running each drawn problem on the CPU in a subprocess with torch
(--python; with no torch there, a static check only). --select-only FILE writes the chosen tasks
(sources included) to a small JSON, and --tasks-file FILE reads it back: that is how a GPU host with
no network and no copy of DICE's data gets them.

Candidates: made by tools/perf/population_benchmark.py's generator (problem_candidates(), imported,
not copied): each is the task's own source, a load_inline of a small elementwise CUDA kernel and
`class ModelNew(Model)`, named pop_l<L>_p<idx>_s<S>, wrapped as a raw completion (prose around one
```python block), as a policy writes. Per task, the 16 responses have the population benchmark's
failure mix and its expected verdicts:
  correct 5, wrong 3, compile_device 1, runtime 1, compile_host 1, syntax 1, shape 1, crash 1,
  load_error 1, fallback_correct 1; and one hang for the whole step (it takes the place of one
  correct response of the first task: the step stays tasks x responses).
--responses R other than the mix's total takes R kinds per task from the mix's interleaved deck,
rotated by task (so every kind still appears across the step); --mix KIND=N changes a count.

Measured per path: makespan (wall time of the step's call(s), start-up and a one-item warm-up
apart), per-candidate mean (makespan / candidates), latency from submission to verdict p50/p99
(the record's latency_seconds; for serve, each request's round trip timed by the client too), each
item's latency over its own work (its non-waiting phases plus its compile seconds), GPU busy (mean
nvidia-smi utilisation sampled every 0.2 s; n/a without a GPU), CPU busy (all cores, /proc/stat, over
the same span) and its core-seconds by kind of process (population_benchmark.ProcessCpu: candidate,
reference and toolchain workers, torch's toolchain's compilers, the fast path's), candidates built by torch's toolchain
(compile path fallback or mixed, or toolchain builds in the record; for DICE, the extension folders
its builds left), verdict counts, and every verdict that is not one its kind expects (for DICE:
rewards that differ from the expected correctness, and its outcome classes). For DICE: its makespan on
the subset, per-candidate mean, the dicebench paths' time on the same candidates (their evaluation
seconds, details.seconds, in the step run), and the makespan ratio DICE/dicebench on the subset and
extrapolated to the step. The issue's targets are printed beside the numbers: >= 10x DICE's path in
makespan, <= 1 s per candidate, p99 latency under 2x the item's own work, serve within 10% of
in-process.

Run it (GPU host, repository root; .gpu/rl_bench.sh does this with a time budget):
  python3 tools/perf/rl_step_benchmark.py --tasks-file tasks.json --dice-reward dice/reward \\
      --device cuda --json rl_step.json
Choose tasks where DICE's data is (no GPU needed):
  python3 tools/perf/rl_step_benchmark.py --select-only tasks.json --tasks 16 --seed 0
Small CPU run (DICE's path needs a GPU and is skipped on the CPU, saying so):
  python3 tools/perf/rl_step_benchmark.py --device cpu --tasks 2 --responses 4 --stages in-process,serve
Stages from several invocations (a time limit per command): --merge A.json B.json [--json all.json].
--budget S keeps the invocation within S seconds: a dicebench path (which cannot be cut short) starts
only with the time the one before took (and 30 s) left, and DICE's (the last) is stopped at the
deadline, keeping the kernels judged by then (its makespan then a lower bound). The --json report is
rewritten after each stage.
Needs the built dicebench (build/bin/dicebench and its Python package, found beside it) for its two
paths; DICE's path needs torch and CUDA in --python, and the DICE modules' imports (numpy, torch,
termcolor, omegaconf, pydantic, requests, tqdm): a missing one of the last five gets a small stub of
this script's (named in the report; on the GPU hosts here termcolor, omegaconf and pydantic are
missing), anything else stops the stage with the module's name. DICE's kernels build in a fresh
TORCH_EXTENSIONS_DIR, so no build of another path (or run) is reused.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import hashlib
import inspect
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

PROG = "rl_step_benchmark"
SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(SCRIPT_DIR))
SHARED = os.path.join(os.path.dirname(REPO_ROOT), "shared")
sys.path.insert(0, SCRIPT_DIR)
import population_benchmark as pop  # noqa: E402  (the candidate generator, GpuSampler, quantile)

STAGES = ["in-process", "serve", "dice"]
DEFAULT_MIX = [("correct", 5), ("wrong", 3), ("compile_device", 1), ("runtime", 1), ("compile_host", 1),
               ("syntax", 1), ("shape", 1), ("crash", 1), ("load_error", 1), ("fallback_correct", 1)]
KINDS = [kind for kind, _ in DEFAULT_MIX] + ["hang"]
SUITE = "kernelbench"
REWARD = "correctness"
# DICE's eval.py: one correctness trial, torch.allclose(atol=1e-2, rtol=1e-2), no timing.
BASE_SETTINGS = {"eval.timing": "off", "eval.trials": "1", "eval.tolerance": "uniform", "eval.prefetch": "8"}
# Settings Evaluator takes as arguments (the rest go in its config), with their types.
EVALUATOR_ARGS = {
    "eval.trials": ("trials", int), "eval.tolerance": ("tolerance", str), "eval.timeout_s": ("timeout", float),
    "eval.compile_timeout_s": ("compile_timeout", float), "eval.fastpath": ("fastpath", "bool"),
    "eval.model_mode": ("model_mode", str), "eval.baseline": ("baseline", str),
    "eval.timing_budget_s": ("timing_budget", float), "eval.timing": ("timing", "bool"),
    "eval.cpu_workers": ("workers", int), "eval.gpus": ("gpus", str), "eval.gpu_slots": ("gpu_slots", "slots"),
    "eval.sandbox": ("sandbox", str),
}
# Task filter: modest sizes, a quick forward on the CPU.
TASK_LIMITS = {"input_bytes": 64 << 20, "output_bytes": 64 << 20, "forward_ms": 1000.0, "seconds": 20}
RANDOM_IN_FORWARD = re.compile(r"dropout|\brand|bernoulli|multinomial|normal_|uniform_|randperm|exponential_", re.I)
TARGETS = {"dice_ratio": 10.0, "per_candidate_s": 1.0, "latency_over_work_p99": 2.0, "serve_over_in_process": 1.10}
MIN_STAGE_S = 30.0  # --budget: a stage that would start with less left is skipped
DICE_WORKERS_PER_GPU = 4  # rl_execute_kernel.evaluate_kernel_dataset with flag="train"


Parser, fail = pop.Parser, pop.fail  # one error line naming this tool, exit 2 (arguments) or 1


def fmt(value, spec: str = ".2f", none: str = "-") -> str:
    return format(value, spec) if isinstance(value, (int, float)) and not isinstance(value, bool) else none


def busy_text(value) -> str:
    return f"{100 * value:.0f}%" if isinstance(value, (int, float)) else "n/a"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ------------------------------------------------------------------------------------------------
# Tasks: drawn from DICE's RL set, checked on the CPU


CHECK_SCRIPT = r'''
import json, signal, sys, time
import torch
torch.set_num_threads(1)
limits = json.loads(sys.argv[1])

class Late(Exception):
    pass

def late(*_):
    raise Late()

signal.signal(signal.SIGALRM, late)
for line in sys.stdin:
    task = json.loads(line)
    out = {"idx": task["idx"], "reject": None}
    try:
        signal.alarm(int(limits["seconds"]))
        ns = {"__name__": "dicebench_task"}
        exec(compile(task["pytorch_code"], "task_%s.py" % task["idx"], "exec"), ns)
        torch.manual_seed(0)
        model = ns["Model"](*ns["get_init_inputs"]())
        torch.manual_seed(1)
        inputs = ns["get_inputs"]()
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        out["input_bytes"] = sum(x.numel() * x.element_size() for x in tensors)
        with torch.no_grad():
            started = time.perf_counter()
            y = model(*inputs)
            out["forward_ms"] = 1000 * (time.perf_counter() - started)
            again = model(*inputs)
        signal.alarm(0)
        if not isinstance(y, torch.Tensor):
            out["reject"] = "returns %s, not one tensor" % type(y).__name__
        else:
            out["shape"], out["dtype"] = list(y.shape), str(y.dtype).replace("torch.", "")
            out["output_bytes"] = y.numel() * y.element_size()
            if y.dtype != torch.float32:
                out["reject"] = "output is %s, not float32" % out["dtype"]
            elif y.numel() < 2:
                out["reject"] = "output has fewer than two elements"
            elif out["input_bytes"] > limits["input_bytes"] or out["output_bytes"] > limits["output_bytes"]:
                out["reject"] = "inputs or output too large"
            elif out["forward_ms"] > limits["forward_ms"]:
                out["reject"] = "forward slower than %g ms on one CPU thread" % limits["forward_ms"]
            elif not bool(torch.isfinite(y).all()):
                out["reject"] = "output not finite"
            elif not isinstance(again, torch.Tensor) or not torch.equal(y, again):
                out["reject"] = "forward not deterministic"
            elif torch.allclose(y, y * 1.05 + 0.05, atol=1e-2, rtol=1e-2):
                out["reject"] = "the wrong kind's output is within tolerance"
    except Late:
        out["reject"] = "slower than %s s on the CPU" % limits["seconds"]
    except BaseException as e:
        out["reject"] = ("%s: %s" % (type(e).__name__, e))[:160]
    finally:
        signal.alarm(0)
    print(json.dumps(out), flush=True)
'''


def static_reject(source: str):
    """Why a task cannot be wrapped, from its source alone (None when it can)."""
    if not re.search(r"^class Model\(", source, re.M):
        return "no `class Model(` at the top level"
    if "def get_inputs" not in source or "def get_init_inputs" not in source:
        return "no get_inputs() or get_init_inputs()"
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return f"not Python: {error.msg}"
    model = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model"), None)
    forward = model and next((n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    if forward is None:
        return "Model has no forward()"
    if RANDOM_IN_FORWARD.search(ast.get_source_segment(source, forward) or ""):
        return "randomness in forward()"
    if re.search(r"\b(ModelNew|load_inline)\b", source):
        return "defines ModelNew or builds extensions itself"
    return None


def torch_available(python: str) -> bool:
    try:
        return subprocess.run([python, "-c", "import torch"], check=False, capture_output=True, timeout=300).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def check_tasks(python: str, tasks: list) -> dict:
    """{idx: check record} of running each task's Model on the CPU (one subprocess for the batch)."""
    lines = "".join(json.dumps({"idx": t["idx"], "pytorch_code": t["pytorch_code"]}) + "\n" for t in tasks)
    limit = 120 + TASK_LIMITS["seconds"] * len(tasks)
    try:
        done = subprocess.run([python, "-c", CHECK_SCRIPT, json.dumps(TASK_LIMITS)], check=False, input=lines, capture_output=True,
                              text=True, timeout=limit, env=dict(os.environ, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1"))
        out = done.stdout
    except subprocess.TimeoutExpired as error:
        out = error.stdout.decode() if isinstance(error.stdout, bytes) else (error.stdout or "")
    found = {}
    for line in out.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and "idx" in record:
            found[record["idx"]] = record
    for t in tasks:  # the checker died on it (or before it)
        found.setdefault(t["idx"], {"idx": t["idx"], "reject": "the CPU check died on it"})
    return found


def select_tasks(args) -> dict:
    """Draws --tasks tasks from DICE's set (deterministic in --seed) that pass the checks."""
    try:
        with open(args.dice_data, encoding="utf-8") as handle:
            text = handle.read()
        data = json.loads(text)
    except (OSError, ValueError) as error:
        fail(f"--dice-data {args.dice_data}: cannot read it ({error}); on a host without DICE's data give "
             "--tasks-file (written by --select-only)")
    if not isinstance(data, list) or not all(isinstance(d, dict) and "pytorch_code" in d for d in data):
        fail(f"--dice-data {args.dice_data}: not a list of {{idx, level, pytorch_code}} items")
    order = list(range(len(data)))
    random.Random(args.seed).shuffle(order)
    dynamic = torch_available(args.python)
    print(f"selecting {args.tasks} tasks from {len(data)} in {os.path.basename(args.dice_data)} (seed {args.seed}); "
          + ("each drawn problem run on the CPU with torch" if dynamic else
             f"static check only (no torch in {args.python})"), flush=True)
    chosen, rejected, position = [], {}, 0
    while len(chosen) < args.tasks and position < len(order):
        batch = []
        while position < len(order) and len(batch) < max(4, 2 * (args.tasks - len(chosen))):
            item = data[order[position]]
            position += 1
            task = {"idx": int(item.get("idx", order[position - 1])), "level": int(str(item.get("level", 0)) or 0),
                    "pytorch_code": item["pytorch_code"]}
            reason = static_reject(task["pytorch_code"])
            if reason:
                rejected[reason] = rejected.get(reason, 0) + 1
            else:
                batch.append(task)
        checks = check_tasks(args.python, batch) if dynamic and batch else {}
        for task in batch:
            check = checks.get(task["idx"], {"reject": None, "static_only": True})
            if check.get("reject"):
                reason = re.sub(r"\d+", "N", check["reject"]) if ":" in check["reject"] else check["reject"]
                rejected[reason] = rejected.get(reason, 0) + 1
            elif len(chosen) < args.tasks:
                task["check"] = {k: v for k, v in check.items() if k not in ("idx", "reject")}
                chosen.append(task)
    if len(chosen) < args.tasks:
        fail(f"only {len(chosen)} of {len(data)} tasks pass the checks, not {args.tasks}")
    return {"generator": "tools/perf/rl_step_benchmark.py --select-only", "data": os.path.basename(args.dice_data),
            "data_sha256": sha256(text), "seed": args.seed, "checked": "cpu" if dynamic else "static",
            "drawn": position, "rejected": dict(sorted(rejected.items(), key=lambda kv: -kv[1])), "tasks": chosen}


def read_tasks(path: str, count: int) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError) as error:
        fail(f"--tasks-file {path}: cannot read it ({error})")
    tasks = document.get("tasks") if isinstance(document, dict) else None
    if not isinstance(tasks, list) or not all(isinstance(t, dict) and {"idx", "level", "pytorch_code"} <= set(t)
                                              for t in tasks):
        fail(f"--tasks-file {path}: not a file written by --select-only")
    if count > len(tasks):
        fail(f"--tasks {count}: {path} holds {len(tasks)} tasks")
    for t in tasks:
        reason = static_reject(t["pytorch_code"])
        if reason:
            fail(f"--tasks-file {path}: task {t['idx']}: {reason}")
    document["tasks"] = tasks[:count]
    return document


def print_tasks(document: dict) -> None:
    print(f"{len(document['tasks'])} tasks (checked: {document.get('checked', '?')}, drawn {document.get('drawn', '?')}, "
          f"seed {document.get('seed', '?')}):")
    for t in document["tasks"]:
        c = t.get("check") or {}
        shape = "x".join(map(str, c["shape"])) if c.get("shape") else "?"
        print(f"  idx {t['idx']:>5} level {t['level']}  output {shape:<18} forward {fmt(c.get('forward_ms'), '.1f')} ms "
              f"(CPU)  inputs {fmt((c.get('input_bytes') or 0) / 2**20, '.1f')} MiB")
    if document.get("rejected"):
        print("  rejected: " + "; ".join(f"{n} {why}" for why, n in document["rejected"].items()))
    print(flush=True)


# ------------------------------------------------------------------------------------------------
# The step's candidates


def parse_mix(values: list) -> list:
    counts = dict(DEFAULT_MIX)
    for value in values:
        for item in value.split(","):
            match = re.fullmatch(r"\s*([a-z_]+)\s*=\s*(\d+)\s*", item)
            if not match or match.group(1) not in counts:
                fail(f"--mix takes KIND=N with KIND one of {', '.join(counts)}, not {item!r}", 2)
            counts[match.group(1)] = int(match.group(2))
    if not sum(counts.values()):
        fail("--mix leaves no responses", 2)
    return [(kind, counts[kind]) for kind, _ in DEFAULT_MIX]


def deck(mix: list) -> list:
    """The per-task kinds interleaved, each spread evenly (smooth weighted round-robin), in a fixed order."""
    current, out = {kind: 0 for kind, _ in mix}, []
    total = sum(count for _, count in mix)
    for _ in range(total):
        for kind, count in mix:
            current[kind] += count
        pick = max((kind for kind, count in mix if count), key=lambda kind: current[kind])  # first of the largest
        current[pick] -= total
        out.append(pick)
    return out


def completion_text(source: str, name: str) -> str:
    """What a policy writes: prose around one fenced block holding the candidate."""
    return (f"The model's output now goes through a custom CUDA kernel ({name}), built with load_inline; "
            "ModelNew keeps Model's interface.\n\n```python\n" + source.rstrip() + "\n```\n\n"
            "It computes the same output as Model and should be at least as fast.\n")


def build_step(tasks: list, responses: int, mix: list, hang: bool) -> list:
    cards = deck(mix)
    step = []
    for t, task in enumerate(tasks):
        kinds = [cards[(t * responses + j) % len(cards)] for j in range(responses)]
        if hang and t == 0:  # one hang for the step, in place of a correct response of the first task
            at = kinds.index("correct") if "correct" in kinds else len(kinds) - 1
            kinds[at] = "hang"
        seen, planned = {}, []
        for kind in kinds:
            planned.append((kind, seen.get(kind, 0)))
            seen[kind] = seen.get(kind, 0) + 1
        for file, sample, kind, source in pop.problem_candidates(task["level"], task["idx"], task["pytorch_code"], planned):
            name = f"pop_l{task['level']}_p{task['idx']}_s{sample}"
            step.append({"name": name, "file": file, "task": t, "idx": task["idx"], "level": task["level"],
                         "sample": sample, "kind": kind, "expected": pop.EXPECTED[kind], "source": source,
                         "completion": completion_text(source, name)})
    return step


def stratified_subset(step: list, size: int) -> list:
    """size candidates of the step, stratified over kinds: one of each kind first (KINDS' order),
    the rest by the kinds' shares (largest remainder); within a kind, round-robin over the tasks,
    each kind starting at the task after the last one taken (so the subset spreads over tasks)."""
    by_kind = {kind: [c for c in step if c["kind"] == kind] for kind in KINDS}
    present = [kind for kind in KINDS if by_kind[kind]]
    size = min(size, len(step))
    take = {kind: 0 for kind in present}
    for kind in present[:size]:
        take[kind] = 1
    left = size - sum(take.values())
    spare = {kind: len(by_kind[kind]) - take[kind] for kind in present}
    total = sum(spare.values())
    if left > 0 and total:
        shares = {kind: left * spare[kind] / total for kind in present}
        for kind in present:
            take[kind] += min(spare[kind], math.floor(shares[kind]))
        by_remainder = sorted(present, key=lambda k: (-(shares[k] - math.floor(shares[k])), KINDS.index(k)))
        while sum(take.values()) < size:
            for kind in by_remainder:
                if sum(take.values()) < size and take[kind] < len(by_kind[kind]):
                    take[kind] += 1
    tasks = max(c["task"] for c in step) + 1
    chosen, at = set(), 0
    for kind in present:
        rank, ranked = {}, []
        for c in by_kind[kind]:
            rank[c["task"]] = rank.get(c["task"], -1) + 1
            ranked.append(((rank[c["task"]], (c["task"] - at) % tasks), c))
        picked = [c for _, c in sorted(ranked, key=lambda pair: pair[0])[: take[kind]]]
        chosen.update(c["name"] for c in picked)
        if picked:
            at = (picked[-1]["task"] + 1) % tasks
    return [c["name"] for c in step if c["name"] in chosen]


def print_step(step: list, tasks: int, responses: int, mix: list, subset: list) -> None:
    print(f"step: {tasks} tasks x {responses} responses = {len(step)} candidates "
          f"(digest {pop.population_digest({c['file']: c['source'] for c in step})[:16]})")
    print(f"  {'kind':<17} {'per task':>8} {'in step':>7} {'DICE subset':>11}  expected")
    per_task = dict(mix)
    for kind in KINDS:
        n = sum(1 for c in step if c["kind"] == kind)
        if not n and not per_task.get(kind):
            continue
        m = sum(1 for c in step if c["kind"] == kind and c["name"] in subset)
        label = "step" if kind == "hang" else str(per_task.get(kind, 0))
        print(f"  {kind:<17} {label:>8} {n:>7} {m:>11}  {' | '.join(pop.EXPECTED[kind])}")
    print(flush=True)


# ------------------------------------------------------------------------------------------------
# Settings


def evaluator_parameters() -> dict:
    import dicebench
    return {name: p.default for name, p in inspect.signature(dicebench.Evaluator.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty}


def as_text(value) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def stage_settings(args, work: str) -> dict:
    """Every eval setting of a dicebench path, as text: Evaluator's defaults for the settings it takes as
    arguments (so serve gets the same), then DICE's checking, the run limits, fresh caches, and --set."""
    defaults = evaluator_parameters()
    settings = {key: as_text(defaults[param]) for key, (param, _) in EVALUATOR_ARGS.items() if param in defaults}
    settings.update(BASE_SETTINGS)
    settings.update({"eval.timeout_s": str(args.timeout), "eval.compile_timeout_s": str(args.compile_timeout),
                     "eval.cpu_workers": str(args.cpu_workers), "kernelbench.root": args.kernelbench_root,
                     "eval.fastpath_cache": os.path.join(work, "fastpath-cache"),
                     "eval.toolchain_cache": os.path.join(work, "toolchain-cache")})
    for setting in args.set:
        key, value = setting.split("=", 1)
        settings[key] = value
    return settings


def evaluator_arguments(settings: dict) -> tuple:
    """(keyword arguments, config) of dicebench.Evaluator for these settings."""
    parameters = evaluator_parameters()
    kwargs, config = {}, {}
    for key, value in settings.items():
        param, kind = EVALUATOR_ARGS.get(key, (None, None))
        if param is None or param not in parameters:
            config[key] = value
        elif kind == "bool":
            kwargs[param] = value.strip().lower() in ("on", "true", "1", "yes")
        elif kind == "slots":
            kwargs[param] = int(value) if value.strip().isdigit() else value
        else:
            kwargs[param] = kind(value)
    return kwargs, config


# ------------------------------------------------------------------------------------------------
# dicebench's paths: in-process and serve


def own_work(details: dict):
    """An item's own work: its phases that are not waits, plus its compile seconds."""
    phases = pop.flatten_phases(details.get("phases") or {})
    compile_info = details.get("compile") or {}
    work = sum(v for k, v in phases.items() if not k.split(".")[-1].endswith("_wait"))
    seconds = compile_info.get("seconds") if isinstance(compile_info, dict) else None
    work += seconds if isinstance(seconds, (int, float)) else 0.0
    return work if work > 0 else None


def item_record(candidate: dict, judgement, client=None) -> dict:
    e = judgement.evaluation if judgement is not None else None
    d = e.details if e is not None else {}
    toolchain = d.get("toolchain") if isinstance(d.get("toolchain"), dict) else {}
    compile_info = d.get("compile") if isinstance(d.get("compile"), dict) else {}
    path = compile_info.get("path")
    built = path in ("fallback", "mixed") or bool(toolchain.get("builds"))
    latency = d.get("latency_seconds")
    work = own_work(d) if e is not None else None
    return {
        "name": candidate["name"], "kind": candidate["kind"], "expected": candidate["expected"],
        "status": judgement.status if judgement is not None else "not judged",
        "verdict": e.verdict if e is not None else None,
        "reward": judgement.reward if judgement is not None else None,
        "latency_s": latency if isinstance(latency, (int, float)) else None,
        "seconds": e.seconds if e is not None else None, "own_work_s": work,
        "compile_path": path, "compile_seconds": compile_info.get("seconds"), "toolchain_built": built,
        "toolchain_builds": toolchain.get("builds"), "toolchain_with_header": toolchain.get("with_header") or 0,
        "toolchain_build_s": toolchain.get("build_seconds") or 0.0,
        "toolchain_queued_s": toolchain.get("queued_seconds") or 0.0, "rejudged": d.get("fastpath_outcome") is not None,
        "client_s": client,
        "error": ((e.error_message if e is not None else (judgement.error if judgement is not None else "")) or "")
        .strip().split("\n")[0][:200],
    }


def summarize_dicebench(items: list, makespan: float, gpu) -> dict:
    n = len(items)
    latency = [i["latency_s"] for i in items if i["latency_s"] is not None]
    work = [i["own_work_s"] for i in items if i["own_work_s"]]
    ratios = [i["latency_s"] / i["own_work_s"] for i in items if i["latency_s"] is not None and i["own_work_s"]]
    client = [i["client_s"] for i in items if i["client_s"] is not None]
    seconds = [i["seconds"] for i in items if i["seconds"] is not None]
    return {
        "candidates": n, "judged": sum(1 for i in items if i["status"] == "judged"),
        "makespan_s": makespan, "per_candidate_s": makespan / n if n else None,
        "latency_p50_s": pop.quantile(latency, 0.5), "latency_p99_s": pop.quantile(latency, 0.99),
        "latency_max_s": max(latency) if latency else None,
        "own_work_p50_s": pop.quantile(work, 0.5), "own_work_p99_s": pop.quantile(work, 0.99),
        "latency_over_work_p50": pop.quantile(ratios, 0.5), "latency_over_work_p99": pop.quantile(ratios, 0.99),
        "client_p50_s": pop.quantile(client, 0.5), "client_p99_s": pop.quantile(client, 0.99),
        "seconds_total": sum(seconds), "gpu_busy": gpu.busy(), "gpu_samples": len(gpu.values), "cpu_busy": gpu.cpu_busy(),
        "cpu_s": gpu.cpu_seconds(), "cpu_by_kind": gpu.processes.by_kind(),
        "toolchain_built": sum(1 for i in items if i["toolchain_built"]),
        "toolchain_with_header": sum(i.get("toolchain_with_header", 0) for i in items),
        "toolchain_build_s": [i["toolchain_build_s"] for i in items if i.get("toolchain_build_s")],
        # waiting for a place in the toolchain pool (eval.toolchain_jobs builds at once): the pool's saturation
        "toolchain_queued_s": [i.get("toolchain_queued_s") or 0.0 for i in items if i.get("toolchain_build_s")],
        "rejudged": sum(1 for i in items if i["rejudged"]),
        "compile_paths": pop.counts(i["compile_path"] or "-" for i in items),
        "verdicts": pop.counts(i["verdict"] or i["status"] for i in items),
        "reward_total": sum(i["reward"] or 0.0 for i in items),
        "unexpected": [{"name": i["name"], "kind": i["kind"], "expected": i["expected"],
                        "verdict": i["verdict"] or i["status"], "error": i["error"]}
                       for i in items if i["verdict"] not in i["expected"]],
    }


def warmup_item(step: list, tasks: list) -> tuple:
    """A correct candidate of the first task under a name of its own (no cache answers the step's)."""
    task = tasks[0]
    name = f"pop_l{task['level']}_p{task['idx']}_warm"
    return task["pytorch_code"], completion_text(pop.candidate_source(task["pytorch_code"], "correct", name), name)


def run_in_process(args, step: list, tasks: list, work: str) -> dict:
    import dicebench
    settings = stage_settings(args, work)
    kwargs, config = evaluator_arguments(settings)
    print(f"in-process: dicebench.Evaluator({args.device!r}, suite={SUITE!r}, "
          + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + f", config={config})", flush=True)
    started = time.perf_counter()
    evaluator = dicebench.Evaluator(args.device, suite=SUITE, config=config, **kwargs)
    try:
        startup = time.perf_counter() - started
        problem, text = warmup_item(step, tasks)
        started = time.perf_counter()
        warm = evaluator.judge([problem], [text], reward=REWARD)[0]
        warmup = time.perf_counter() - started
        print(f"in-process: evaluator started in {startup:.1f} s ({evaluator.size} slot(s) on {evaluator.device}); "
              f"warm-up item {warmup:.1f} s ({warm.evaluation.verdict if warm.evaluation else warm.status})", flush=True)
        # One judge() call per task's group, from a thread each, as a trainer's per-group reward calls
        # come (and as serve's requests do by default); their candidates join the Evaluator's one queue.
        groups: dict = {}
        for index, c in enumerate(step):
            groups.setdefault(c["task"], []).append(index)

        def judge_group(indices: list) -> list:
            return evaluator.judge([tasks[step[i]["task"]]["pytorch_code"] for i in indices],
                                   [step[i]["completion"] for i in indices], ids=[step[i]["name"] for i in indices],
                                   reward=REWARD)

        judged: list = [None] * len(step)
        with pop.GpuSampler() as gpu, concurrent.futures.ThreadPoolExecutor(len(groups)) as pool:
            started = time.perf_counter()
            futures = {pool.submit(judge_group, indices): indices for indices in groups.values()}
            pending = set(futures)
            while pending:
                done, pending = concurrent.futures.wait(pending, timeout=20)
                for future in done:
                    for i, judgement in zip(futures[future], future.result()):
                        judged[i] = judgement
                print(f"in-process: {time.perf_counter() - started:.0f} s: {len(groups) - len(pending)} of "
                      f"{len(groups)} tasks' groups judged", flush=True)
            makespan = time.perf_counter() - started
    finally:
        evaluator.close()
    items = [item_record(c, j) for c, j in zip(step, judged)]
    summary = summarize_dicebench(items, makespan, gpu)
    summary.update({"startup_s": startup, "warmup_s": warmup, "slots": evaluator.size, "settings": settings})
    print(f"in-process: {len(step)} candidates in {makespan:.1f} s", flush=True)
    return {"summary": summary, "items": items}


def http_json(url: str, body=None, timeout: float = 30.0) -> tuple:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        text = error.read().decode("utf-8", "replace")
        try:
            return error.code, json.loads(text)
        except ValueError:
            return error.code, text


def start_server(args, settings: dict, work: str) -> tuple:
    """(process, base URL, log path, seconds until /health answered ok)."""
    db = os.path.join(work, "serve.db")
    command = [args.dicebench, "serve", "--host", "127.0.0.1", "--port", "0", "--db", db, "--device", args.device,
               "--suite", SUITE, "--reward", REWARD, "--wait", str(args.serve_wait)]
    for key, value in settings.items():
        command += ["--set", f"{key}={value}"]
    log_path = os.path.join(work, "serve.log")
    print(f"serve: {' '.join(command)}\n  log: {log_path}", flush=True)
    started = time.perf_counter()
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:  # the server keeps its own copy
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url, deadline = None, time.monotonic() + args.serve_start_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if url is None:
            with open(log_path, encoding="utf-8", errors="replace") as handle:
                match = re.search(r"listening on ([0-9.]+):(\d+)", handle.read())
            if match:
                url = f"http://{match.group(1)}:{match.group(2)}"
        if url is not None:
            try:
                status, body = http_json(url + "/health", timeout=5)
                if status == 200 and isinstance(body, dict) and body.get("status") == "ok":
                    return process, url, log_path, time.perf_counter() - started, body
            except (OSError, ValueError):
                pass
        time.sleep(0.2)
    stop_server(process)
    with open(log_path, encoding="utf-8", errors="replace") as handle:
        tail = handle.read()[-2000:]
    fail(f"dicebench serve did not answer /health within {args.serve_start_timeout:.0f} s "
         f"(exit code {process.returncode}); its log's end:\n{tail}")


def stop_server(process) -> float:
    started = time.perf_counter()
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return time.perf_counter() - started


def run_serve(args, step: list, tasks: list, work: str) -> dict:
    import dicebench
    from dicebench.trainers.remote import RemoteJudge
    settings = stage_settings(args, work)
    process, url, log_path, startup, health = start_server(args, settings, work)
    run_id = uuid.uuid4().hex[:12]
    wait = max(60.0, float(args.serve_wait))
    client = {}
    try:
        problem, text = warmup_item(step, tasks)
        started = time.perf_counter()
        status, warm = http_json(url + "/v1/evaluate", {"id": f"{run_id}-warm", "problem": problem, "completion": text,
                                                        "reward": {"shape": REWARD, "params": {}}, "timeout_s": wait},
                                 timeout=wait + 60)
        warmup = time.perf_counter() - started
        if status != 200:
            raise RuntimeError(f"the warm-up request got {status}: {str(warm)[:300]}")
        print(f"serve: /health ok after {startup:.1f} s ({health.get('slots')} slot(s) on {health.get('device')}); "
              f"warm-up item {warmup:.1f} s", flush=True)
        problems = [tasks[c["task"]]["pytorch_code"] for c in step]
        ids = [f"{run_id}-{c['name']}" for c in step]
        judged = [None] * len(step)

        def batch(indices: list):
            began = time.perf_counter()
            out = RemoteJudge(url, wait=wait, timeout=None).judge([problems[i] for i in indices],
                                                                   [step[i]["completion"] for i in indices],
                                                                   ids=[ids[i] for i in indices], reward=REWARD)
            took = time.perf_counter() - began
            for i, j in zip(indices, out):
                judged[i], client[i] = j, took

        def single(i: int):
            began = time.perf_counter()
            status, body = http_json(url + "/v1/evaluate", {"id": ids[i], "problem": problems[i],
                                                            "completion": step[i]["completion"],
                                                            "reward": {"shape": REWARD, "params": {}}, "timeout_s": wait},
                                     timeout=wait + 60)
            if status != 200 or not isinstance(body, dict):
                raise RuntimeError(f"POST /v1/evaluate of {step[i]['name']} got {status}: {str(body)[:300]}")
            judged[i], client[i] = dicebench.Judgement.from_json(body), time.perf_counter() - began

        if args.serve_requests == "step":
            jobs = [(batch, list(range(len(step))))]
        elif args.serve_requests == "task":
            jobs = [(batch, [i for i, c in enumerate(step) if c["task"] == t]) for t in range(len(tasks))]
        else:
            jobs = [(single, i) for i in range(len(step))]
        with pop.GpuSampler() as gpu:
            started = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(max_workers=min(len(jobs), args.serve_concurrency)) as pool:
                for future in [pool.submit(function, what) for function, what in jobs]:
                    future.result()
            makespan = time.perf_counter() - started
    finally:
        shutdown = stop_server(process)
    items = [item_record(c, j, client.get(i)) for i, (c, j) in enumerate(zip(step, judged))]
    summary = summarize_dicebench(items, makespan, gpu)
    summary.update({"startup_s": startup, "warmup_s": warmup, "shutdown_s": shutdown, "exit_code": process.returncode,
                    "requests": len(jobs), "request_mode": args.serve_requests, "slots": health.get("slots"),
                    "settings": settings, "log": log_path})
    print(f"serve: {len(step)} candidates in {makespan:.1f} s ({len(jobs)} request(s), {args.serve_requests}); "
          f"stopped with SIGTERM in {shutdown:.1f} s (exit code {process.returncode})", flush=True)
    return {"summary": summary, "items": items}


# ------------------------------------------------------------------------------------------------
# DICE's path: its own code, imported from --dice-reward, in a child process of ours

DICE_MODULES = ("rl_execute_kernel.py", "eval.py")  # what the reward path imports (eval: from the child's cwd)
# Stubs (this project's own code) for the DICE modules' imports that a plain machine may lack; each
# gives only what the kernel reward path touches (termcolor, omegaconf: main() and get_config(); requests:
# imported, unused; pydantic: KernelExecResult's defaults; tqdm: the progress bar).
STUBS = {
    "termcolor": '''"""Stub of termcolor for DICE's reward path (tools/perf/rl_step_benchmark.py)."""
def colored(text, *args, **kwargs):
    return str(text)
def cprint(text, *args, **kwargs):
    print(text, **{k: kwargs[k] for k in ("end", "flush", "file", "sep") if k in kwargs})
''',
    "omegaconf": '''"""Stub of omegaconf for DICE's reward path (tools/perf/rl_step_benchmark.py): its config is not read."""
MISSING = "???"
class DictConfig(dict):
    pass
class ListConfig(list):
    pass
class OmegaConf:
    @staticmethod
    def _absent(*args, **kwargs):
        raise NotImplementedError("omegaconf is a stub here: DICE's config files are not used")
    from_cli = load = merge = create = _absent
''',
    "requests": '''"""Stub of requests for DICE's reward path (tools/perf/rl_step_benchmark.py): eval.py imports it, unused."""
''',
    "pydantic": '''"""Stub of pydantic for DICE's reward path (tools/perf/rl_step_benchmark.py): BaseModel with the
class's annotated defaults (copied per instance) and keyword fields, as KernelExecResult uses it."""
import copy
class BaseModel:
    def __init__(self, **data):
        for klass in reversed(type(self).__mro__):
            for name in getattr(klass, "__annotations__", {}):
                if name in vars(klass):
                    setattr(self, name, copy.deepcopy(vars(klass)[name]))
        for key, value in data.items():
            setattr(self, key, value)
    def model_dump(self):
        return dict(vars(self))
    dict = model_dump
''',
    "tqdm": '''"""Stub of tqdm for DICE's reward path (tools/perf/rl_step_benchmark.py): no progress bar."""
class tqdm:
    def __init__(self, iterable=None, *args, **kwargs):
        self.iterable, self.n = iterable, 0
    def __iter__(self):
        return iter(self.iterable or [])
    def update(self, n=1):
        self.n += n
    def close(self):
        pass
    def set_description(self, *args, **kwargs):
        pass
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return False
''',
}
STUB_SUBMODULES = {"tqdm": ["auto"]}

PROBE = r'''
import importlib.util, json, sys
out = {}
for name in json.loads(sys.argv[1]):
    try:
        out[name] = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        out[name] = False
print(json.dumps(out))
'''


def dice_imports(reward: str) -> list:
    """Top-level modules the reward modules import (anywhere in them), less the standard library and
    the reward folder's own modules."""
    local = {os.path.splitext(n)[0] for n in os.listdir(reward) if n.endswith(".py")}
    names = set()
    for module in DICE_MODULES:
        with open(os.path.join(reward, module), encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    stdlib = getattr(sys, "stdlib_module_names", set())
    return sorted(n for n in names if n not in stdlib and n not in local and n != "__future__")


def prepare_dice_environment(args, folder: str) -> tuple:
    """(environment for DICE's processes, {module: "present" | "stub"}); stops on a missing module
    that has no stub."""
    stub_dir = os.path.join(folder, "stubs")
    os.makedirs(stub_dir, exist_ok=True)
    path = os.pathsep.join(p for p in [*args.dice_pythonpath, os.environ.get("PYTHONPATH", "")] if p)
    env = dict(os.environ, PYTHONPATH=path)
    names = dice_imports(args.dice_reward)
    try:
        probe = subprocess.run([args.python, "-c", PROBE, json.dumps(names)], check=False, capture_output=True, text=True,
                               env=env, timeout=300)
        found = json.loads(probe.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        fail(f"--python {args.python}: could not look up the modules DICE's reward path imports ({', '.join(names)})")
    modules = {}
    for name in names:
        if found.get(name):
            modules[name] = "present"
        elif name in STUBS:
            package = os.path.join(stub_dir, name)
            os.makedirs(package, exist_ok=True)
            with open(os.path.join(package, "__init__.py"), "w", encoding="utf-8") as handle:
                handle.write(STUBS[name])
            for sub in STUB_SUBMODULES.get(name, []):
                with open(os.path.join(package, f"{sub}.py"), "w", encoding="utf-8") as handle:
                    handle.write(f"from {name} import *  # noqa: F401,F403\n")
            modules[name] = "stub"
        else:
            modules[name] = "missing"
    missing = [n for n, state in modules.items() if state == "missing"]
    if missing:
        raise RuntimeError(f"DICE's reward path imports {', '.join(missing)}, which {args.python} does not have "
                           "(no stub here for it): install it or give its folder with --dice-pythonpath")
    env["PYTHONPATH"] = os.pathsep.join(p for p in [stub_dir, path] if p)
    return env, modules


def dice_child(spec_path: str) -> int:
    """Runs in a child of ours, cwd = the reward folder: imports DICE's module, times each kernel by
    wrapping its eval_single_kernel (its pool looks the function up at each call), and calls
    evaluate_kernel_dataset on the subset grouped by task, as DICE's main() does per step."""
    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    os.chdir(spec["reward"])
    sys.path.insert(0, spec["reward"])
    started = time.perf_counter()
    import rl_execute_kernel as dice  # DICE's own code
    import_s = time.perf_counter() - started
    data, by_code, index = [], {}, {}
    for item in spec["items"]:
        if item["task"] not in index:
            index[item["task"]] = len(data)
            data.append({"pytorch_code": item["pytorch_code"], "extracted_output": [], "test_method": "kernel"})
        data[index[item["task"]]]["extracted_output"].append(item["code"])
        by_code[item["code"]] = item["id"]
    lock = threading.Lock()
    original = dice.eval_single_kernel
    progress = open(spec["progress"], "a", encoding="utf-8")  # noqa: SIM115 - written by the pool's threads, closed below
    clock = {"t0": time.perf_counter()}

    def timed(cuda_code, pytorch_code, eval_gpu_id=0, timeout=180):
        began = time.perf_counter()
        result = original(cuda_code, pytorch_code, eval_gpu_id, timeout)
        ended = time.perf_counter()
        record = {"id": by_code.get(cuda_code), "start_s": began - clock["t0"], "end_s": ended - clock["t0"],
                  "result": result if isinstance(result, dict) else {"error": repr(result)}}
        with lock:
            progress.write(json.dumps(record, default=str) + "\n")
            progress.flush()
        return result

    dice.eval_single_kernel = timed
    clock["t0"] = time.perf_counter()
    out = dice.evaluate_kernel_dataset(data, timeout=spec["timeout"], flag="train")
    makespan = time.perf_counter() - clock["t0"]
    progress.close()
    rewards = {}
    for item in out:
        for code, compiled, correct in zip(item["extracted_output"], item["compiled"], item["correctness"]):
            rewards[by_code[code]] = {"compiled": bool(compiled[0]), "reward": bool(correct[0])}
    import torch  # after DICE's own import of it
    with open(spec["result"], "w", encoding="utf-8") as handle:
        json.dump({"import_s": import_s, "makespan_s": makespan, "rewards": rewards,
                   "gpus": torch.cuda.device_count(), "torch": torch.__version__}, handle)
    return 0


def dice_class(result: dict) -> str:
    """DICE's outcome in dicebench's verdict names, as near as its record says (eval.py's
    KernelExecResult, or the parent's error for a child that printed none)."""
    if not isinstance(result, dict):
        return "no result"
    metadata = result.get("metadata") if isinstance(result.get("metadata"), dict) else {}
    error = str(result.get("error") or "")
    if result.get("compiled") and result.get("correctness"):
        return "correct"
    if error == "Timeout":
        return "timeout"
    if result.get("compiled"):
        issue = str(metadata.get("correctness_issue") or "")
        if "shape" in issue:
            return "shape_mismatch"
        if issue:
            return "output_mismatch"
        return "crashed" if "CUDA error" in str(metadata.get("runtime_error", "")) else "runtime_error"
    if "cuda_error" in metadata or "CUDA error" in error:
        return "crashed"
    return "compile_failed"  # DICE's compiled=False: a build, load or syntax error, or a child that died


def run_dice(args, step: list, tasks: list, subset: list, work: str, deadline) -> dict:
    chosen = [c for c in step if c["name"] in set(subset)]
    try:
        env, modules = prepare_dice_environment(args, work)
    except RuntimeError as error:
        print(f"dice: skipped: {error}", flush=True)
        return {"summary": {"skipped": str(error)}, "items": []}
    extensions = os.path.join(work, "torch_extensions")  # fresh: no build of another path is reused
    os.makedirs(extensions, exist_ok=True)
    env.update({"TORCH_EXTENSIONS_DIR": extensions, "PYTHONUNBUFFERED": "1"})
    spec = {"reward": os.path.abspath(args.dice_reward), "timeout": args.dice_timeout,
            "progress": os.path.join(work, "dice-progress.jsonl"), "result": os.path.join(work, "dice-result.json"),
            "items": [{"id": c["name"], "task": c["task"], "pytorch_code": tasks[c["task"]]["pytorch_code"],
                       "code": c["source"]} for c in chosen]}
    spec_path = os.path.join(work, "dice-spec.json")
    with open(spec_path, "w", encoding="utf-8") as handle:
        json.dump(spec, handle)
    log_path = os.path.join(work, "dice.log")
    stubbed = [n for n, s in modules.items() if s == "stub"]
    print(f"dice: rl_execute_kernel.evaluate_kernel_dataset(<{len(chosen)} kernels of {len({c['task'] for c in chosen})} "
          f"tasks>, timeout={args.dice_timeout}, flag='train') from {args.dice_reward}; modules: "
          + ", ".join(f"{n} ({s})" for n, s in modules.items()) + f"\n  log: {log_path}", flush=True)
    cut = False
    with open(log_path, "w", encoding="utf-8", errors="replace") as log, pop.GpuSampler() as gpu:
        started = time.perf_counter()
        process = subprocess.Popen([args.python, os.path.abspath(__file__), "--dice-child", spec_path],
                                   cwd=args.dice_reward, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            process.wait(timeout=None if deadline is None else max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            cut = True
            os.killpg(process.pid, signal.SIGKILL)  # our child's own session: its eval scripts and builds
            process.wait()
        except KeyboardInterrupt:
            os.killpg(process.pid, signal.SIGKILL)
            raise
        wall = time.perf_counter() - started
    result = {}
    if os.path.exists(spec["result"]):
        with open(spec["result"], encoding="utf-8") as handle:
            result = json.load(handle)
    progress = {}
    if os.path.exists(spec["progress"]):
        with open(spec["progress"], encoding="utf-8") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                    progress[record["id"]] = record
                except (ValueError, KeyError, TypeError):
                    pass
    if not result and not cut:
        with open(log_path, encoding="utf-8", errors="replace") as handle:
            tail = handle.read()[-1500:]
        print(f"dice: DICE's path ended without a result (exit code {process.returncode}); its log's end:\n{tail}",
              flush=True)
    items = []
    for c in chosen:
        record = progress.get(c["name"])
        outcome = record["result"] if record else None
        reward = result.get("rewards", {}).get(c["name"], {}).get("reward") if result else None
        if reward is None and isinstance(outcome, dict):
            reward = bool(outcome.get("compiled") and outcome.get("correctness"))
        error = str((outcome or {}).get("error") or "")
        metadata = (outcome or {}).get("metadata") if isinstance((outcome or {}).get("metadata"), dict) else {}
        detail = error or "; ".join(f"{k}: {v}" for k, v in metadata.items() if k not in ("hardware", "device"))
        items.append({"name": c["name"], "kind": c["kind"], "expected": c["expected"],
                      "class": dice_class(outcome) if record else ("cut at the budget" if cut else "no result"),
                      "reward": reward, "compiled": (outcome or {}).get("compiled"),
                      "start_s": record["start_s"] if record else None, "end_s": record["end_s"] if record else None,
                      "seconds": record["end_s"] - record["start_s"] if record else None,
                      "error": detail.strip().split("\n")[0][:200]})
    done = [i for i in items if i["end_s"] is not None]
    makespan = result.get("makespan_s") if result else (max(i["end_s"] for i in done) if done else None)
    gpus = max(1, int(result.get("gpus") or 1)) if result else 1
    builds = [n for n in os.listdir(extensions) if os.path.isdir(os.path.join(extensions, n))]
    built = [n for n in builds if any(f.endswith(".so") for f in os.listdir(os.path.join(extensions, n)))]
    summary = {
        "candidates": len(chosen), "judged": len(done), "cut_at_budget": cut, "wall_s": wall,
        "makespan_s": makespan, "per_candidate_s": makespan / len(done) if makespan and done else None,
        "latency_p50_s": pop.quantile([i["end_s"] for i in done], 0.5),
        "latency_p99_s": pop.quantile([i["end_s"] for i in done], 0.99),
        "kernel_p50_s": pop.quantile([i["seconds"] for i in done], 0.5),
        "import_s": result.get("import_s") if result else None, "workers": DICE_WORKERS_PER_GPU * gpus,
        "gpu_busy": gpu.busy(), "gpu_samples": len(gpu.values), "cpu_busy": gpu.cpu_busy(),
        "cpu_s": gpu.cpu_seconds(), "cpu_by_kind": gpu.processes.by_kind(),
        "toolchain_built": len(builds), "toolchain_built_ok": len(built),
        "classes": pop.counts(i["class"] for i in items),
        "reward_total": sum(1 for i in items if i["reward"]),
        "reward_disagreements": [{"name": i["name"], "kind": i["kind"], "expected": i["expected"], "class": i["class"],
                                  "reward": i["reward"], "error": i["error"]}
                                 for i in done if bool(i["reward"]) != ("correct" in i["expected"])],
        "class_differences": [{"name": i["name"], "kind": i["kind"], "expected": i["expected"], "class": i["class"]}
                              for i in done if i["class"] not in i["expected"]],
        "modules": modules, "stubbed": stubbed, "timeout_s": args.dice_timeout, "log": log_path,
        "torch": result.get("torch") if result else None,
    }
    state = "cut at the budget after" if cut else "in"
    print(f"dice: {len(done)} of {len(chosen)} kernels judged {state} {fmt(makespan, '.1f')} s "
          f"(process wall {wall:.1f} s)", flush=True)
    return {"summary": summary, "items": items}


# ------------------------------------------------------------------------------------------------
# Comparison and report


def dice_extrapolation(report: dict):
    """DICE's makespan for the whole step, extrapolated: the step's count of each kind times the
    subset's mean kernel time of that kind (its overall mean for a kind it lacks), over its workers,
    and at least its longest kernel."""
    dice = report["stages"].get("dice")
    if not dice or not dice["summary"].get("judged"):
        return None
    done = [i for i in dice["items"] if i["seconds"] is not None]
    overall = statistics.mean(i["seconds"] for i in done)
    per_kind = {}
    for kind in KINDS:
        times = [i["seconds"] for i in done if i["kind"] == kind]
        if times:
            per_kind[kind] = statistics.mean(times)
    step_kinds = pop.counts(c["kind"] for c in report["candidates"])
    total = sum(n * per_kind.get(kind, overall) for kind, n in step_kinds.items())
    workers = dice["summary"]["workers"]
    return {"makespan_s": max(total / workers, max(i["seconds"] for i in done)), "kernel_seconds_total": total,
            "workers": workers, "per_kind_mean_s": per_kind, "kinds_missing": sorted(set(step_kinds) - set(per_kind))}


def compare(report: dict) -> dict:
    stages = report["stages"]
    out = {"paths": {}}
    dice = stages.get("dice", {}).get("summary", {})
    subset = set(report.get("dice_subset", []))
    extrapolated = dice_extrapolation(report)
    if extrapolated:
        out["dice_step_extrapolated"] = extrapolated
    for name in ("in-process", "serve"):
        if name not in stages or "makespan_s" not in stages[name]["summary"]:
            continue
        s, items = stages[name]["summary"], stages[name]["items"]
        row = {"per_candidate_s": s["per_candidate_s"], "per_candidate_ok": s["per_candidate_s"] <= TARGETS["per_candidate_s"],
               "latency_over_work_p99": s["latency_over_work_p99"],
               "latency_ok": (s["latency_over_work_p99"] < TARGETS["latency_over_work_p99"]
                              if s["latency_over_work_p99"] is not None else None)}
        on_subset = [i for i in items if i["name"] in subset and i["seconds"] is not None]
        dice_done = dice.get("judged") and dice.get("makespan_s") and not dice.get("cut_at_budget")
        if on_subset and dice_done:
            mine = sum(i["seconds"] for i in on_subset)
            row["subset_seconds_total"] = mine
            row["subset_per_candidate_s"] = mine / len(on_subset)
            row["dice_ratio_subset"] = dice["makespan_s"] / mine if mine else None
        if extrapolated and not dice.get("cut_at_budget"):
            row["dice_ratio_step_extrapolated"] = extrapolated["makespan_s"] / s["makespan_s"]
        for key in ("dice_ratio_subset", "dice_ratio_step_extrapolated"):
            if row.get(key) is not None:
                row[key + "_ok"] = row[key] >= TARGETS["dice_ratio"]
        out["paths"][name] = row
    if "in-process" in out["paths"] and "serve" in out["paths"]:
        a, b = stages["in-process"]["summary"]["makespan_s"], stages["serve"]["summary"]["makespan_s"]
        out["serve_over_in_process"] = b / a if a else None
        out["serve_ok"] = out["serve_over_in_process"] is not None and out["serve_over_in_process"] <= TARGETS["serve_over_in_process"]
        va = {i["name"]: i["verdict"] for i in stages["in-process"]["items"]}
        vb = {i["name"]: i["verdict"] for i in stages["serve"]["items"]}
        out["path_disagreements"] = [{"name": n, "in-process": va[n], "serve": vb.get(n)} for n in va if va[n] != vb.get(n)]
    return out


def ok_text(flag) -> str:
    return "" if flag is None else ("  ok" if flag else "  MISSED")


def print_report(report: dict) -> None:
    stages, comparison = report["stages"], report["comparison"]
    print(f"\n== one RL step: {len(report['candidates'])} candidates ({report['tasks_count']} tasks x "
          f"{report['responses']} responses) on {report.get('gpu') or report['device']}"
          + (f" (merged from {', '.join(report['merged_from'])})" if report.get("merged_from") else ""))
    print(f"   {'path':<13} {'cands':>5} {'makespan s':>10} {'s/cand':>7} {'lat p50':>8} {'lat p99':>8} "
          f"{'client p99':>10} {'GPU busy':>8} {'CPU busy':>8} {'toolchain':>9} {'unexpected':>10}")
    for name in STAGES:
        if name not in stages:
            continue
        s = stages[name]["summary"]
        if s.get("skipped"):
            print(f"   {name:<13} skipped: {s['skipped']}")
            continue
        label = "dice (subset)" if name == "dice" else name
        unexpected = len(s["reward_disagreements"]) if name == "dice" else len(s["unexpected"])
        print(f"   {label:<13} {s['judged']:>5} {fmt(s['makespan_s'], '10.1f'):>10} {fmt(s['per_candidate_s'], '7.2f'):>7} "
              f"{fmt(s['latency_p50_s'], '8.1f'):>8} {fmt(s['latency_p99_s'], '8.1f'):>8} {fmt(s.get('client_p99_s'), '10.1f'):>10} "
              f"{busy_text(s['gpu_busy']):>8} {busy_text(s.get('cpu_busy')):>8} {s['toolchain_built']:>9} {unexpected:>10}")
    for name in STAGES:
        if name not in stages or stages[name]["summary"].get("skipped"):
            continue
        s = stages[name]["summary"]
        print(f"\n== {name}")
        print(f"   CPU: {fmt(s.get('cpu_s'), '.0f')} core-s busy (/proc/stat); by process (sampled): "
              + ", ".join(f"{kind} {seconds:.0f}" for kind, seconds in (s.get("cpu_by_kind") or {}).items()))
        if name == "dice":
            print(f"   {s['judged']} of {s['candidates']} kernels judged{' (CUT at the budget: makespan is a lower bound)' if s['cut_at_budget'] else ''}; "
                  f"{s['workers']} at a time, {s['timeout_s']} s limit each; module import {fmt(s['import_s'], '.1f')} s "
                  f"(not in the makespan); kernel time p50 {fmt(s['kernel_p50_s'], '.1f')} s")
            print("   outcomes (as dicebench's verdicts): " + ", ".join(f"{k} {v}" for k, v in s["classes"].items()))
            print(f"   torch toolchain builds: {s['toolchain_built']} started, {s['toolchain_built_ok']} built "
                  "(every kernel that reaches load_inline)")
            print("   modules: " + ", ".join(f"{k} ({v})" for k, v in s["modules"].items()))
            print(f"   rewards unlike the expected correctness: {len(s['reward_disagreements'])}")
            for d in s["reward_disagreements"]:
                print(f"     {d['name']} ({d['kind']}): reward {d['reward']}, {d['class']}, expected {' | '.join(d['expected'])}"
                      + (f": {d['error']}" if d["error"] else ""))
            if s["class_differences"]:
                print("   outcomes unlike the expected verdict (DICE's coarser record): "
                      + ", ".join(f"{d['kind']} -> {d['class']}" for d in s["class_differences"]))
            continue
        print(f"   start-up {fmt(s['startup_s'], '.1f')} s, warm-up item {fmt(s['warmup_s'], '.1f')} s (neither in the makespan); "
              f"{s.get('slots')} slot(s)" + (f"; {s['requests']} request(s) ({s['request_mode']}), stopped in "
                                             f"{fmt(s['shutdown_s'], '.1f')} s, exit code {s['exit_code']}" if name == "serve" else ""))
        print(f"   latency (submission -> verdict): p50 {fmt(s['latency_p50_s'], '.1f')} s, p99 {fmt(s['latency_p99_s'], '.1f')} s, "
              f"max {fmt(s['latency_max_s'], '.1f')} s; own work p50 {fmt(s['own_work_p50_s'], '.2f')} s, p99 "
              f"{fmt(s['own_work_p99_s'], '.2f')} s; latency / own work p50 {fmt(s['latency_over_work_p50'], '.1f')}, "
              f"p99 {fmt(s['latency_over_work_p99'], '.1f')}")
        if name == "serve":
            print(f"   client round trip: p50 {fmt(s['client_p50_s'], '.1f')} s, p99 {fmt(s['client_p99_s'], '.1f')} s")
        print(f"   built by torch's toolchain: {s['toolchain_built']} (re-judged after the fast path: {s['rejudged']}); "
              "compile paths: " + ", ".join(f"{k} {v}" for k, v in s["compile_paths"].items()))
        build_s = s.get("toolchain_build_s") or []
        if build_s:
            print(f"   toolchain builds: {len(build_s)} ({s.get('toolchain_with_header', 0)} offered a precompiled header), "
                  f"build time p50 {fmt(pop.quantile(build_s, 0.5), '.1f')} s, max {fmt(max(build_s), '.1f')} s, "
                  f"sum {sum(build_s):.0f} s")
            queued = s.get("toolchain_queued_s") or []
            if queued:
                print(f"   waiting for the toolchain pool: p50 {fmt(pop.quantile(queued, 0.5), '.1f')} s, "
                      f"max {fmt(max(queued), '.1f')} s, sum {sum(queued):.0f} s")
        print(f"   evaluation seconds (details.seconds) in all: {s['seconds_total']:.1f}; rewards {s['reward_total']:.0f}")
        print("   verdicts: " + ", ".join(f"{k} {v}" for k, v in s["verdicts"].items()))
        print(f"   unexpected verdicts: {len(s['unexpected'])}")
        for u in s["unexpected"]:
            print(f"     {u['name']} ({u['kind']}): {u['verdict']}, expected {' | '.join(u['expected'])}"
                  + (f": {u['error']}" if u["error"] else ""))
    if comparison.get("path_disagreements") is not None:
        print(f"\n== in-process and serve: {len(comparison['path_disagreements'])} candidates with different verdicts")
        for d in comparison["path_disagreements"]:
            print(f"     {d['name']}: in-process {d['in-process']}, serve {d['serve']}")
    print("\n== the issue's targets")
    dice = stages.get("dice", {}).get("summary", {})
    extrapolated = comparison.get("dice_step_extrapolated")
    if dice.get("judged") and dice.get("makespan_s"):
        print(f"   DICE's path: subset of {dice['judged']} kernels, makespan {dice['makespan_s']:.1f} s "
              f"({dice['per_candidate_s']:.2f} s per candidate)" + (" (cut: lower bounds)" if dice["cut_at_budget"] else ""))
    if extrapolated:
        print(f"   DICE's path for the whole step (EXTRAPOLATED from the subset's mean kernel time per kind, "
              f"{extrapolated['workers']} at a time): {extrapolated['makespan_s']:.0f} s"
              + (f" (kinds not in the subset, at the subset's mean: {', '.join(extrapolated['kinds_missing'])})"
                 if extrapolated["kinds_missing"] else ""))
    for name, row in comparison["paths"].items():
        s = stages[name]["summary"]
        print(f"   {name}:")
        print(f"     per candidate                 {fmt(row['per_candidate_s'], '.2f')} s (target <= {TARGETS['per_candidate_s']:.0f} s)"
              f"{ok_text(row['per_candidate_ok'])}")
        print(f"     p99 latency / own work        {fmt(row['latency_over_work_p99'], '.1f')} (target < {TARGETS['latency_over_work_p99']:.0f}x)"
              f"{ok_text(row['latency_ok'])}; p99 latency {fmt(s['latency_p99_s'], '.1f')} s")
        if row.get("dice_ratio_subset") is not None:
            print(f"     DICE / dicebench, subset      {row['dice_ratio_subset']:.1f}x (target >= {TARGETS['dice_ratio']:.0f}x)"
                  f"{ok_text(row['dice_ratio_subset_ok'])}: DICE's makespan {dice['makespan_s']:.1f} s vs this path's "
                  f"{row['subset_seconds_total']:.1f} s of evaluation time on the same candidates "
                  f"({row['subset_per_candidate_s']:.2f} s each, details.seconds in the step run)")
        if row.get("dice_ratio_step_extrapolated") is not None:
            print(f"     DICE / dicebench, step        {row['dice_ratio_step_extrapolated']:.1f}x (target >= {TARGETS['dice_ratio']:.0f}x)"
                  f"{ok_text(row['dice_ratio_step_extrapolated_ok'])}: DICE EXTRAPOLATED {extrapolated['makespan_s']:.0f} s vs "
                  f"this path's measured {s['makespan_s']:.1f} s")
    if comparison.get("serve_over_in_process") is not None:
        print(f"   serve / in-process makespan     {comparison['serve_over_in_process']:.3f} (target <= "
              f"{TARGETS['serve_over_in_process']:.2f}){ok_text(comparison['serve_ok'])}")


# ------------------------------------------------------------------------------------------------


def parse_stages(text: str) -> list:
    stages = [s.strip() for s in text.split(",") if s.strip()]
    if not stages or any(s not in STAGES for s in stages):
        raise argparse.ArgumentTypeError(f"takes {', '.join(STAGES)} separated by commas, not {text!r}")
    return [s for s in STAGES if s in stages]


def default_device() -> str:
    exe = shutil.which("nvidia-smi")
    try:
        return "cuda" if exe and subprocess.run([exe, "-L"], check=False, capture_output=True, timeout=20).returncode == 0 else "cpu"
    except (OSError, subprocess.SubprocessError):
        return "cpu"


def gpu_name() -> str:
    """The first GPU's name (nvidia-smi), or "" without one."""
    exe = shutil.which("nvidia-smi")
    try:
        out = subprocess.run([exe, "--query-gpu=name", "--format=csv,noheader"], check=False, capture_output=True,
                             text=True, timeout=20).stdout if exe else ""
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out.strip().splitlines()[0] if out.strip() else ""


def find_dicebench(args) -> None:
    dicebench = args.dicebench or os.path.join(REPO_ROOT, "build", "bin", "dicebench")
    if not args.dicebench and not os.path.exists(dicebench):
        dicebench = shutil.which("dicebench") or dicebench
    if not (os.path.isfile(dicebench) and os.access(dicebench, os.X_OK)):
        fail(f"--dicebench {dicebench}: not an executable file")
    args.dicebench = os.path.abspath(dicebench)
    try:
        import dicebench as _
    except ImportError:
        package = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(args.dicebench))), "lib", "dicebench", "python")
        sys.path.insert(0, package)
        try:
            import dicebench as _  # noqa: F401
        except ImportError as error:
            fail(f"cannot import the dicebench package (looked in {package}): {error}")


def merge(paths: list) -> dict:
    report = None
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                part = json.load(handle)
        except (OSError, ValueError) as error:
            fail(f"--merge {path}: cannot read it ({error})")
        if not isinstance(part, dict) or part.get("benchmark") != PROG:
            fail(f"--merge {path}: not a --json file of this benchmark")
        if report is None:
            report = part
        elif part.get("step_sha256") != report.get("step_sha256"):
            fail(f"--merge {path}: another step (tasks, responses, mix or script version) than {paths[0]}")
        else:
            if part.get("gpu") != report.get("gpu"):
                print(f"note: {path} ran on {part.get('gpu') or part.get('device')}, {paths[0]} on "
                      f"{report.get('gpu') or report.get('device')}: compare their times with care")
            for stage in part["stages"]:
                part["stages"][stage]["summary"]["gpu"] = part.get("gpu")
            report["stages"].update(part["stages"])
            report.setdefault("merged_from", [paths[0]]).append(path)
            if part.get("dice_subset"):
                report["dice_subset"] = part["dice_subset"]
    return report


def main() -> int:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--stages", type=parse_stages, default=list(STAGES), help="paths to run (default in-process,serve,dice)")
    parser.add_argument("--device", choices=["cpu", "cuda"], help="cpu or cuda (default: cuda where nvidia-smi lists a GPU)")
    parser.add_argument("--tasks", type=int, default=16, help="tasks in the step (default 16)")
    parser.add_argument("--responses", type=int, default=0, help="responses per task (default: the mix's total, 16)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the task draw (default 0)")
    parser.add_argument("--mix", action="append", default=[], help="KIND=N: a kind's count per task (repeatable)")
    parser.add_argument("--hang", type=int, choices=[0, 1], default=1, help="one hanging candidate in the step (default 1)")
    parser.add_argument("--dice-data", default=os.path.join(SHARED, "dice", "end_to_end_kernel_generation_4000.json"),
                        help="DICE's RL task set (default ../shared/dice/end_to_end_kernel_generation_4000.json)")
    parser.add_argument("--tasks-file", help="tasks written by --select-only (instead of --dice-data)")
    parser.add_argument("--select-only", metavar="FILE", help="choose the tasks, write them to FILE and stop")
    parser.add_argument("--python", default=sys.executable, help="Python with torch: the CPU task check and DICE's path")
    parser.add_argument("--dicebench", help="dicebench binary (default build/bin/dicebench, else dicebench on PATH)")
    parser.add_argument("--kernelbench-root", default=os.path.join(REPO_ROOT, "tests", "data", "kernelbench"),
                        help="the kernelbench suite's root (its extraction and review; the problems come as sources; "
                             "default tests/data/kernelbench)")
    parser.add_argument("--timeout", type=float, default=180.0, help="dicebench's eval.timeout_s: a candidate's run (default 180, DICE's)")
    parser.add_argument("--compile-timeout", type=float, default=180.0, help="dicebench's eval.compile_timeout_s (default 180)")
    parser.add_argument("--cpu-workers", type=int, default=2, help="eval.cpu_workers on the CPU (default 2)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting for both dicebench paths")
    parser.add_argument("--serve-requests", choices=["step", "task", "item"], default="task",
                        help="serve: one batch request for the step, one per task sent concurrently (default; "
                             "RemoteJudge), or one POST /v1/evaluate per item sent concurrently")
    parser.add_argument("--serve-concurrency", type=int, default=256, help="serve: requests in flight at most (default 256)")
    parser.add_argument("--serve-wait", type=float, default=900.0, help="serve: seconds a request is held (default 900)")
    parser.add_argument("--serve-start-timeout", type=float, default=300.0, help="serve: seconds to wait for /health")
    parser.add_argument("--dice-reward", default=os.path.join(SHARED, "dice", "reward"),
                        help="DICE's training/RL/reward folder (default ../shared/dice/reward)")
    parser.add_argument("--dice-subset", type=int, default=16, help="candidates judged by DICE's path (default 16)")
    parser.add_argument("--dice-timeout", type=int, default=180, help="DICE's per-kernel limit (default 180)")
    parser.add_argument("--dice-pythonpath", action="append", default=[], metavar="DIR",
                        help="a folder of packages for DICE's modules (e.g. a real pydantic), before the stubs")
    parser.add_argument("--dice-on-cpu", action="store_true",
                        help="run DICE's path without a GPU anyway (every kernel fails eval.py's CUDA assertion): "
                             "checks its imports and plumbing only")
    parser.add_argument("--budget", type=float, default=0.0, help="seconds this invocation may take (0: no limit)")
    parser.add_argument("--work", help="folder for databases, logs and caches (default a new temporary folder)")
    parser.add_argument("--json", help="write the report to FILE")
    parser.add_argument("--merge", nargs="+", metavar="JSON", help="combine the stages of --json files of one step and report")
    parser.add_argument("--dice-child", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.dice_child:
        return dice_child(args.dice_child)
    if args.merge:
        report = merge(args.merge)
        report["comparison"] = compare(report)
        print_report(report)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(report, handle, indent=1)
                handle.write("\n")
            print(f"\nwrote {args.json}")
        return 0
    begun = time.monotonic()
    deadline = begun + args.budget if args.budget > 0 else None
    if args.tasks < 1 or args.responses < 0 or args.dice_subset < 0 or args.serve_concurrency < 1:
        fail("--tasks, --serve-concurrency take a number >= 1; --responses, --dice-subset >= 0", 2)
    for setting in args.set:
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+=.*", setting):
            fail(f"--set takes KEY=VALUE, not {setting!r}", 2)
    mix = parse_mix(args.mix)
    responses = args.responses or sum(n for _, n in mix)

    if args.select_only:
        document = select_tasks(args)
        print_tasks(document)
        with open(args.select_only, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1)
            handle.write("\n")
        print(f"wrote {len(document['tasks'])} tasks to {args.select_only}")
        return 0

    document = read_tasks(args.tasks_file, args.tasks) if args.tasks_file else select_tasks(args)
    tasks = document["tasks"]
    print_tasks(document)
    step = build_step(tasks, responses, mix, bool(args.hang))
    subset = stratified_subset(step, args.dice_subset) if "dice" in args.stages else []
    print_step(step, len(tasks), responses, mix, subset)

    if {"in-process", "serve"} & set(args.stages):
        find_dicebench(args)
    args.device = args.device or default_device()
    args.kernelbench_root = os.path.abspath(args.kernelbench_root)
    args.dice_reward = os.path.abspath(args.dice_reward)
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="dicebench-rl-step-")
    os.makedirs(work, exist_ok=True)
    print(f"device {args.device}; dicebench {args.dicebench}; work folder {work}\n", flush=True)

    report = {
        "benchmark": PROG, "format": 1, "created": time.strftime("%Y-%m-%dT%H:%M:%S"), "device": args.device,
        "gpu": gpu_name() if args.device == "cuda" else "",
        "dicebench": args.dicebench, "tasks_count": len(tasks), "responses": responses, "mix": dict(mix),
        "hang": args.hang, "seed": document.get("seed"), "tasks": [{"idx": t["idx"], "level": t["level"]} for t in tasks],
        "step_sha256": pop.population_digest({c["file"]: c["source"] for c in step}), "dice_subset": subset,
        "timeout_s": args.timeout, "compile_timeout_s": args.compile_timeout, "set": args.set, "work": work,
        "candidates": [{k: c[k] for k in ("name", "task", "idx", "level", "sample", "kind", "expected")} for c in step],
        "stages": {},
    }
    exit_code, took = 0, None
    for stage in args.stages:
        left = None if deadline is None else deadline - time.monotonic()
        # A dicebench path cannot be cut short: it starts only with the time the one before took (and some) left.
        need = MIN_STAGE_S if stage == "dice" or took is None else 1.1 * took + MIN_STAGE_S
        if left is not None and left < need:
            why = f"budget: {left:.0f} s of {args.budget:.0f} s left, {need:.0f} s wanted"
            print(f"{stage}: skipped ({why}); run it in another invocation and combine with --merge", flush=True)
            report["stages"][stage] = {"summary": {"skipped": why}, "items": []}
            continue
        stage_started = time.monotonic()
        folder = os.path.join(work, stage)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        if stage == "dice" and args.device != "cuda" and not args.dice_on_cpu:
            why = ("DICE's path needs a GPU (eval.py asserts torch.cuda.is_available()); run it with --device cuda "
                   "on a GPU host (--dice-on-cpu runs it anyway, to check its imports only)")
            print(f"dice: skipped: {why}", flush=True)
            report["stages"][stage] = {"summary": {"skipped": why}, "items": []}
            continue
        try:
            if stage == "in-process":
                report["stages"][stage] = run_in_process(args, step, tasks, folder)
            elif stage == "serve":
                report["stages"][stage] = run_serve(args, step, tasks, folder)
            else:
                if not all(os.path.isfile(os.path.join(args.dice_reward, m)) for m in DICE_MODULES):
                    fail(f"--dice-reward {args.dice_reward}: no {' and '.join(DICE_MODULES)} there")
                report["stages"][stage] = run_dice(args, step, tasks, subset, folder,
                                                   None if deadline is None else deadline - 5.0)
        except Exception as error:  # noqa: BLE001  (a path's failure is reported; the others still run)
            print(f"{stage}: FAILED: {type(error).__name__}: {error}", flush=True)
            report["stages"][stage] = {"summary": {"skipped": f"failed: {type(error).__name__}: {error}"}, "items": []}
            exit_code = 1
        if stage != "dice":
            took = time.monotonic() - stage_started
        write_report(report, args.json, begun)  # after each stage: a run stopped later keeps what it measured
    write_report(report, args.json, begun)
    print_report(report)
    if args.json:
        print(f"\nwrote {args.json}")
    return exit_code


def write_report(report: dict, path, begun: float) -> None:
    report["comparison"] = compare(report)
    report["wall_s"] = time.monotonic() - begun
    if path:
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
            handle.write("\n")
        os.replace(path + ".tmp", path)


def interrupted(*_):
    raise KeyboardInterrupt  # SIGTERM (a `timeout` around the run) ends the children as Ctrl-C does


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, interrupted)
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
