#!/usr/bin/env python3
"""Evaluation throughput on a realistic population of KernelBench candidates (one GPU).

What it is for: real LLM answers to KernelBench fail about a third of the time (compile errors,
crashes), and those failures make evaluation slow: a fast-path (NVRTC) compile failure, or a
runtime failure of a candidate built on the fast path, is judged again with torch's own toolchain
(25-60 s of CPU each). evaluation_benchmark.py measures 16 candidates that mostly work; this one
measures a population with the failure mix of real answers, so that an optimisation of the
evaluator can be measured before and after with the same command. It only runs `dicebench run`
and reads the SQLite results database, so it works against today's build and later ones.

The population is generated at run time from the KernelBench problems (--kernelbench-root; no
KernelBench text is in this repository) into a replay folder: files
level_<L>_problem_<ID>_sample_<S>_kernel.py (ID = the number before the first `_` of the problem
file), plus manifest.json (file -> kind, expected verdicts). Each generated candidate is the
problem's own source (so it defines Model) followed by a load_inline of a small elementwise CUDA
kernel and `class ModelNew(Model)`, whose forward calls Model's and passes the output through the
kernel. Every candidate has its own kernel name (pop_l<L>_p<ID>_s<S>), so no two sources are
identical (compile caches are keyed by content); generation is deterministic (same names and
bytes on every run), so two runs' --json files can be compared file by file.

Kinds (expected verdicts) and the default mix:
  per problem                 correct 4          identity copy kernel             -> correct
                              wrong 2            out = in * 1.05f + 0.05f         -> output_mismatch
                              compile_device 1   undefined identifier in the
                                                 kernel (NVRTC fails, then nvcc)  -> compile_failed
                              runtime 1          forward calls the extension with
                                                 a wrong argument count           -> runtime_error
  per level, round-robin      compile_host 1     host wrapper calls a method
  over the level's problems                      at::Tensor does not have         -> compile_failed
                              syntax 1           Python SyntaxError               -> compile_failed
                              shape 1            wrapper returns the output
                                                 flattened, one element dropped   -> shape_mismatch
                              crash 1            kernel stores 4 TiB past its
                                                 output                           -> crashed | runtime_error
                              load_error 1       module-level raise RuntimeError  -> runtime_error
                              fallback_correct 1 correct, with extra_include_paths
                                                 naming torch's own include
                                                 folder (the fast path declined
                                                 it before it took those)         -> correct
  per population              hang 1             kernel spins forever (first problem
                                                 of the lowest level)             -> timeout
  plus the project's own candidates (tools/perf/candidates, one per problem, sample 0) of
  the selected levels: own_correct (14) -> correct, own_wrong (level 1 problem 8) ->
  output_mismatch, own_compile (level 2 problem 12) -> compile_failed.
With the default problem lists (8 level-1, 8 level-2, 4 level-3 problems, all returning one float32
tensor from modest inputs) that is 195 candidates: 79 of level 1 (the hang included), 78 of level 2,
38 of level 3. Of the 178 generated ones (the hang aside) 31% fail to compile, load or run and 22%
give wrong output.
--scale F multiplies every count but hang's (at least 1 where the default is); --mix KIND=N sets one
kind's count (per problem, per level or per population, as above; 0 leaves it out).

Each selected level is one run, timed with a wall clock:
  dicebench run --model replay:<folder> --suite kernelbench-l<L> --kernelbench-root <root>
    --problems <ids> --db <fresh db> --set eval.fastpath_cache=<fresh dir> --set eval.prefetch=8
    --set eval.timing_budget_s=2 --set eval.timeout_s=60 [--set KEY=VALUE from this script's --set]
while a thread samples GPU utilisation (nvidia-smi --query-gpu=utilization.gpu, every 0.2 s). Per
level it prints: candidates, wall time, wall per candidate, median/mean/p90 of each evaluation's own
time (details.seconds), the total of every phase found in details.phases (new phase names are
picked up as they come), the timing loops' time per timed call (details.timed_calls: all of it, the
reference's input batches and comparisons, the candidate's side), GPU busy (mean nvidia-smi
utilisation), verdict counts, and the candidates whose verdict is not one their kind expects; then
levels 1-2 pooled, and level 3.

Run it (GPU host; repository root), before and after a change:
  python3 tools/perf/population_benchmark.py --dicebench build/bin/dicebench \\
    --kernelbench-root ../shared/kernelbench --levels 1,2,3 --json population_before.json
  python3 tools/perf/population_benchmark.py --dicebench build/bin/dicebench \\
    --kernelbench-root ../shared/kernelbench --levels 1,2,3 --json population_after.json \\
    --compare population_before.json
Only write the population (to read it, or to carry it): --generate-only DIR; run on a written one:
--population DIR. Python 3.8+ standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time

PROG = "population_benchmark"
SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(SCRIPT_DIR))
NAME = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")

# Problems per level (the number before the first `_` of the KernelBench file name). Chosen for
# modest inputs (at most 192 MiB of inputs and 300 MiB of output; the level-1 elementwise,
# reduction and norm problems with 4-8 GiB inputs are left out), a forward that returns one float32
# tensor of more than one element, and no randomness in forward (no dropout). None of them has a
# candidate in tools/perf/candidates, whose problems join as problems of their own.
PROBLEMS = {
    1: [2, 10, 13, 16, 17, 50, 58, 72],  # matmuls (plain, 3D, symmetric, transposed), conv2d, conv-transpose3d x2
    2: [3, 6, 9, 24, 29, 63, 74, 85],  # conv-transpose3d / conv3d / conv2d / gemm with fused epilogues
    3: [3, 4, 8, 50],  # DeepNarrowMLP, LeNet5, ResNetBasicBlock, ReLUSelfAttention
}

# The mix: kind, how many, per what ("problem", "level" round-robin over the level's problems, or
# "population"), the verdicts it should get, and what it is.
MIX = [
    ("correct", 4, "problem", ["correct"], "identity copy kernel"),
    ("wrong", 2, "problem", ["output_mismatch"], "kernel writes in * 1.05f + 0.05f"),
    ("compile_device", 1, "problem", ["compile_failed"], "kernel uses an undefined identifier"),
    ("runtime", 1, "problem", ["runtime_error"], "forward calls the extension with two arguments, not one"),
    ("compile_host", 1, "level", ["compile_failed"], "host wrapper calls at::Tensor::no_such_method()"),
    ("syntax", 1, "level", ["compile_failed"], "a Python SyntaxError (an unmatched parenthesis)"),
    ("shape", 1, "level", ["shape_mismatch"], "wrapper returns the output flattened, one element dropped"),
    ("crash", 1, "level", ["crashed", "runtime_error"], "kernel stores 4 TiB past its output"),
    ("load_error", 1, "level", ["runtime_error"], "module-level raise RuntimeError after the imports"),
    ("fallback_correct", 1, "level", ["correct"], "correct, naming torch's own include folder in extra_include_paths (declined by the fast path until it took torch's own folders)"),
    ("hang", 1, "population", ["timeout"], "kernel spins forever (a volatile flag)"),
]
OWN_KINDS = {
    "own_correct": ["correct"],
    "own_wrong": ["output_mismatch"],
    "own_compile": ["compile_failed"],
}
# tools/perf/candidates/README.md: the two deliberate flaws; the other 14 are correct.
OWN_FLAWS = {(1, 8): "own_wrong", (2, 12): "own_compile"}
EXPECTED = dict({kind: expected for kind, _, _, expected, _ in MIX}, **OWN_KINDS)

DEFAULT_SETTINGS = ["eval.prefetch=8", "eval.timing_budget_s=2", "eval.timeout_s=60"]

# ------------------------------------------------------------------------------------------------
# Candidate templates. @NAME@ is the candidate's own name (pop_l<L>_p<ID>_s<S>); the other
# @...@ fields are filled per kind (kind_fields).

CUDA_TEMPLATE = r'''
#include <torch/extension.h>
#include <cuda_runtime.h>

// @NAME@ (@KIND@): one float per thread, grid-stride loop.
__global__ void @NAME@_kernel(const float* __restrict__ in, float* __restrict__ out, int64_t n) {
@PRELUDE@    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        @STORE@;
    }
}

torch::Tensor @NAME@(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "@NAME@: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat, "@NAME@: x must be float32");
    auto in = x.contiguous()@HOST_CALL@;
    auto out = torch::empty_like(in);
    const int64_t n = in.numel();
    if (n == 0) return out;
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 65535);
    @NAME@_kernel<<<blocks, threads>>>(in.data_ptr<float>(), out.data_ptr<float>(), n);
    return @RESULT@;
}
'''

PYTHON_TEMPLATE = '''

# --------------------------------------------------------------------------------------------------
# dicebench population benchmark candidate @NAME@, kind @KIND@ (generated by
# tools/perf/population_benchmark.py after the problem's own source, above; it keeps Model).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
@LOAD_ERROR@
@NAME@_cuda_source = r"""@CUDA@"""

@NAME@_cpp_source = "torch::Tensor @NAME@(torch::Tensor x);"

@NAME@_module = load_inline(
    name="@NAME@",
    cpp_sources=@NAME@_cpp_source,
    cuda_sources=@NAME@_cuda_source,
    functions=["@NAME@"],
@EXTRA_ARGS@    verbose=False,
)


class ModelNew(Model):
    """Model's own forward, its output passed through @NAME@."""

    def forward(self, *args, **kwargs):
        out = super().forward(*args, **kwargs)
        return @NAME@_module.@NAME@(@CALL_ARGS@)@SYNTAX@
'''


def kind_fields(kind: str, name: str) -> dict:
    fields = {"PRELUDE": "", "STORE": "out[i] = in[i]", "HOST_CALL": "", "RESULT": "out", "LOAD_ERROR": "",
              "EXTRA_ARGS": "", "CALL_ARGS": "out", "SYNTAX": ""}
    if kind == "wrong":
        fields["STORE"] = "out[i] = in[i] * 1.05f + 0.05f"  # wrong in both tolerance modes (1e-4 and 1e-2)
    elif kind == "compile_device":
        fields["STORE"] = f"out[i] = in[i] * {name}_scale"  # never declared
    elif kind == "compile_host":
        fields["HOST_CALL"] = ".no_such_method()"
    elif kind == "syntax":
        fields["SYNTAX"] = ")"
    elif kind == "runtime":
        fields["CALL_ARGS"] = "out, out"
    elif kind == "shape":
        fields["RESULT"] = "out.flatten().narrow(0, 0, n - 1)"
    elif kind == "crash":
        fields["STORE"] = "out[i + ((int64_t)1 << 40)] = in[i]"
    elif kind == "load_error":
        fields["LOAD_ERROR"] = (f'\nraise RuntimeError("{name}: the candidate stops while its module loads '
                                '(population benchmark, kind load_error)")\n')
    elif kind == "fallback_correct":
        fields["EXTRA_ARGS"] = "    extra_include_paths=[torch.utils.cpp_extension.include_paths()[0]],\n"
    elif kind == "hang":
        # An empty asm with a memory clobber is a side effect no compiler may drop (a spin on a
        # volatile local was optimised away by NVRTC: the kernel returned and was judged correct).
        fields["PRELUDE"] = "    for (;;) {\n        asm volatile(\"\" ::: \"memory\");\n    }\n"
    elif kind != "correct":
        raise ValueError(kind)
    return fields


def fill(template: str, fields: dict) -> str:
    for key, value in fields.items():
        template = template.replace(f"@{key}@", value)
    assert not re.search(r"@[A-Z_]+@", template), "unfilled template field"
    return template


def candidate_source(problem_source: str, kind: str, name: str) -> str:
    fields = dict(kind_fields(kind, name), NAME=name, KIND=kind)
    cuda = fill(CUDA_TEMPLATE, fields)
    python = fill(PYTHON_TEMPLATE, dict(fields, CUDA=cuda))
    return problem_source.rstrip() + "\n" + python


# ------------------------------------------------------------------------------------------------
# Arguments


def program() -> str:
    """The running tool's name: this file's, or that of the tool that imports its helpers."""
    return os.path.splitext(os.path.basename(sys.argv[0]))[0] or PROG


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        fail(message, 2)


def fail(message: str, code: int = 1):
    sys.stderr.write(f"{program()}: error: {message}\n")
    sys.exit(code)


def parse_levels(text: str) -> list:
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes levels 1, 2, 3 separated by commas, not {text!r}")
    if not levels or any(level not in PROBLEMS for level in levels) or len(set(levels)) != len(levels):
        raise argparse.ArgumentTypeError(f"takes levels 1, 2, 3 separated by commas, not {text!r}")
    return sorted(levels)


def parse_mix(values: list) -> dict:
    kinds = {kind for kind, *_ in MIX}
    out = {}
    for value in values:
        for item in value.split(","):
            match = re.fullmatch(r"\s*([a-z_]+)\s*=\s*(\d+)\s*", item)
            if not match or match.group(1) not in kinds:
                fail(f"--mix takes KIND=N with KIND one of {', '.join(k for k, *_ in MIX)}, not {item!r}", 2)
            out[match.group(1)] = int(match.group(2))
    return out


def mix_counts(scale: float, overrides: dict) -> list:
    rows = []
    for kind, count, per, expected, what in MIX:
        if kind in overrides:
            n = overrides[kind]
        elif per == "population" or count == 0:
            n = count
        else:
            n = max(1, int(math.floor(count * scale + 0.5))) if scale > 0 else 0
        rows.append({"kind": kind, "count": n, "per": per, "expected": expected, "what": what})
    return rows


# ------------------------------------------------------------------------------------------------
# Population


def problem_file(root: str, level: int, problem: int) -> str:
    folder = os.path.join(root, f"level{level}")
    if not os.path.isdir(folder):
        fail(f"--kernelbench-root {root}: no level{level} folder")
    names = [n for n in os.listdir(folder) if n.endswith(".py") and n.split("_", 1)[0] == str(problem)]
    if len(names) != 1:
        fail(f"--kernelbench-root {root}: level{level} has {len(names)} files for problem {problem}, not one")
    return os.path.join(folder, names[0])


def order_key(level: int, problem: int, kind: str, index: int) -> str:
    """A fixed, scattered order of one problem's candidates (the same on every run and Python)."""
    return hashlib.sha256(f"{level}/{problem}/{kind}/{index}".encode()).hexdigest()


def problem_candidates(level: int, problem: int, source: str, planned: list) -> list:
    """One problem's candidates: planned is [(kind, index within the kind)]; returns [(file, sample,
    kind, source)] in the fixed scattered order (samples 0..n-1), each named pop_l<L>_p<ID>_s<S>.
    tools/perf/rl_step_benchmark.py makes its candidates with it too."""
    out = []
    ordered = sorted(planned, key=lambda item: order_key(level, problem, *item))
    for sample, (kind, _) in enumerate(ordered):
        name = f"pop_l{level}_p{problem}_s{sample}"
        file = f"level_{level}_problem_{problem}_sample_{sample}_kernel.py"
        out.append((file, sample, kind, candidate_source(source, kind, name)))
    return out


def build_population(args, mix: list) -> tuple:
    """(files: {name: source}, manifest entries: {name: {...}})."""
    files, manifest = {}, {}
    hang_placed = False
    for level in args.levels:
        problems = PROBLEMS[level][: args.problems_per_level] if args.problems_per_level else PROBLEMS[level]
        planned = {p: [] for p in problems}
        for row in mix:
            if row["per"] == "problem":
                for p in problems:
                    planned[p] += [(row["kind"], i) for i in range(row["count"])]
        spread = 0
        for row in mix:
            if row["per"] == "level":
                for i in range(row["count"]):
                    planned[problems[spread % len(problems)]].append((row["kind"], i))
                    spread += 1
        hang = next(row for row in mix if row["kind"] == "hang")
        if not hang_placed and hang["count"] and problems:
            planned[problems[0]] += [("hang", i) for i in range(hang["count"])]
            hang_placed = True
        for problem in problems:
            path = problem_file(args.kernelbench_root, level, problem)
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
            if not re.search(r"^class Model\(", source, re.M) or "def get_init_inputs" not in source:
                fail(f"{path}: no `class Model(` or get_init_inputs() in it")
            for file, sample, kind, text in problem_candidates(level, problem, source, planned[problem]):
                files[file] = text
                manifest[file] = {"level": level, "problem": problem, "sample": sample, "kind": kind,
                                  "expected": EXPECTED[kind], "problem_file": os.path.basename(path)}
        if args.own_candidates:
            for name in sorted(os.listdir(args.own_candidates)):
                match = NAME.match(name)
                if not match or int(match.group(1)) != level:
                    continue
                _, problem, sample = map(int, match.groups())
                if problem in problems or sample != 0:
                    fail(f"{args.own_candidates}/{name}: the own candidates must be sample 0 of problems "
                         f"outside the generated ones ({problems})")
                kind = OWN_FLAWS.get((level, problem), "own_correct")
                with open(os.path.join(args.own_candidates, name), encoding="utf-8") as handle:
                    files[name] = handle.read()
                manifest[name] = {"level": level, "problem": problem, "sample": 0, "kind": kind,
                                  "expected": EXPECTED[kind], "problem_file": None}
    return files, manifest


def population_digest(files: dict) -> str:
    listing = "".join(f"{name}\t{hashlib.sha256(files[name].encode()).hexdigest()}\n" for name in sorted(files))
    return hashlib.sha256(listing.encode()).hexdigest()


def write_population(folder: str, files: dict, manifest: dict, mix: list) -> None:
    os.makedirs(folder, exist_ok=True)
    for name, source in files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(source)
    document = {"generator": "tools/perf/population_benchmark.py", "population_sha256": population_digest(files),
                "mix": mix, "files": {name: manifest[name] for name in sorted(manifest, key=sort_key)}}
    with open(os.path.join(folder, "manifest.json"), "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=1)
        handle.write("\n")


def read_population(folder: str, levels: list) -> tuple:
    path = os.path.join(folder, "manifest.json")
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle)
    except (OSError, ValueError) as error:
        fail(f"--population {folder}: cannot read manifest.json ({error})")
    files, manifest = {}, {}
    for name, entry in document.get("files", {}).items():
        if entry.get("level") not in levels:
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                files[name] = handle.read()
        except OSError as error:
            fail(f"--population {folder}: {error}")
        manifest[name] = entry
    if not manifest:
        fail(f"--population {folder}: its manifest has no candidates of levels {levels}")
    return files, manifest, document.get("mix", [])


def sort_key(name: str):
    match = NAME.match(name)
    return tuple(map(int, match.groups())) if match else (0, 0, 0)


def print_mix(mix: list, manifest: dict) -> None:
    print(f"{'kind':<17} {'count':>5} {'per':<11} {'expected':<24} {'in population':>13}  what")
    for row in mix:
        n = sum(1 for e in manifest.values() if e["kind"] == row["kind"])
        print(f"{row['kind']:<17} {row['count']:>5} {row['per']:<11} {' | '.join(row['expected']):<24} {n:>13}  {row['what']}")
    for kind in OWN_KINDS:
        n = sum(1 for e in manifest.values() if e["kind"] == kind)
        if n:
            print(f"{kind:<17} {'':>5} {'own file':<11} {' | '.join(EXPECTED[kind]):<24} {n:>13}  tools/perf/candidates")
    levels = sorted({e["level"] for e in manifest.values()})
    per_level = ", ".join(f"L{level} {sum(1 for e in manifest.values() if e['level'] == level)}" for level in levels)
    print(f"population: {len(manifest)} candidates ({per_level})\n", flush=True)


# ------------------------------------------------------------------------------------------------
# Running


def cpu_times():
    """(busy, total) jiffies of all CPUs from /proc/stat, or None where there is none."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def process_kind(command: str, cmdline: list, parent_kind: str | None) -> str:
    """What a process is there for, from its name, arguments and its parent's kind: a worker by its
    role; a dicebench-compile (the fast path's compile step) with its g++; a process a worker or a
    compile started counts as its starter (a toolchain worker's ninja, nvcc and g++ are torch's
    toolchain's builds)."""
    if "--role" in cmdline[:-1]:  # dicebench-worker --role R (or the sandbox launching it)
        return "worker " + cmdline[cmdline.index("--role") + 1]
    if any(os.path.basename(argument) == "dicebench-compile" for argument in cmdline):
        return "fast-path compilers"
    if parent_kind == "worker toolchain":
        return "toolchain builds"
    if parent_kind and (parent_kind.startswith("worker ") or parent_kind in ("toolchain builds", "fast-path compilers")):
        return parent_kind
    if command.startswith("dicebench"):
        return "dicebench host"
    return "other"


class ProcessCpu:
    """CPU seconds per kind of process (process_kind), from /proc/PID/stat sampled every
    `interval` seconds: a process running at the start counts from then, one started later from its
    start; each one's last sample counts, so its time after that, and processes that live less than
    `interval`, are missed (their sum against GpuSampler.cpu_seconds() says how much)."""

    def __init__(self, interval: float = 0.5):
        self.interval = interval
        self.tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.seen = {}  # (pid, start time) -> [kind, seconds before the span, seconds at the last sample]
        self.kinds = {}  # pid -> (start time, kind) of the latest process seen with it
        self._stop = threading.Event()
        self._thread = None

    @staticmethod
    def _stat(pid: str):
        """(command, the fields after it) of /proc/PID/stat."""
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            text = stat.read()
        return text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()

    def _kind(self, pid: str, command: str, fields: list, depth: int = 0) -> str:
        """The kind of process pid (its stat read as command and fields), its ancestors classified
        first (each once)."""
        known = self.kinds.get(pid)
        if known and known[0] == fields[19]:
            return known[1]
        parent = fields[1]
        parent_kind = None
        if depth < 16 and parent not in ("0", "1", pid):
            try:
                parent_kind = self._kind(parent, *self._stat(parent), depth + 1)
            except (OSError, ValueError, IndexError):
                parent_kind = None  # the parent has ended
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            cmdline = file.read().decode(errors="replace").split("\0")
        kind = process_kind(command, cmdline, parent_kind)
        self.kinds[pid] = (fields[19], kind)
        return kind

    def _sample(self, first: bool = False):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                command, fields = self._stat(name)
                seconds = (int(fields[11]) + int(fields[12])) / self.tick  # utime + stime
                key = (name, fields[19])  # start time tells a reused pid apart
                if key not in self.seen:
                    self.seen[key] = [self._kind(name, command, fields), seconds if first else 0.0, seconds]
                self.seen[key][2] = seconds
            except (OSError, ValueError, IndexError):
                continue  # it ended meanwhile

    def _loop(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        if os.path.isdir("/proc"):
            self._sample(first=True)  # what running processes had used before the span is left out
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread:
            self._thread.join()
            self._sample()

    def by_kind(self) -> dict:
        """Core-seconds per kind within the span (a process present at the start counts from then)."""
        totals: dict = {}
        for kind, before, last in self.seen.values():
            totals[kind] = totals.get(kind, 0.0) + last - before
        return {kind: round(seconds, 1) for kind, seconds in sorted(totals.items(), key=lambda item: -item[1])}


class GpuSampler:
    """Mean GPU utilisation from nvidia-smi, sampled every `interval` seconds in a thread, the
    host's mean CPU utilisation (all cores, /proc/stat) over the same span, and its CPU seconds by
    kind of process (ProcessCpu)."""

    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.exe = shutil.which("nvidia-smi")
        self.values = []
        self.processes = ProcessCpu()
        self._stop = threading.Event()
        self._thread = None
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
        self.ids = visible if re.fullmatch(r"\d+(,\d+)*", visible) else None

    def _sample(self):
        command = [self.exe, "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"]
        if self.ids:
            command += ["-i", self.ids]
        try:
            out = subprocess.run(command, capture_output=True, text=True, timeout=5).stdout
            numbers = [float(line) for line in out.split() if re.fullmatch(r"\d+(\.\d+)?", line)]
        except (OSError, subprocess.SubprocessError, ValueError):
            return
        if numbers:
            self.values.append(sum(numbers) / len(numbers))

    def _loop(self):
        deadline = time.monotonic()
        while not self._stop.is_set():
            self._sample()
            deadline += self.interval
            self._stop.wait(max(0.0, deadline - time.monotonic()))

    def __enter__(self):
        self._cpu_start = cpu_times()
        self._cpu_end = None
        self.processes.__enter__()
        if self.exe:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._cpu_end = cpu_times()
        self.processes.__exit__(*exc)
        if self._thread:
            self._thread.join()

    def busy(self):
        return statistics.mean(self.values) / 100.0 if self.values else None

    def cpu_busy(self):
        """Share of all cores' time not idle between enter and exit (or now, inside the block)."""
        end = self._cpu_end or cpu_times()
        if not self._cpu_start or not end or end[1] <= self._cpu_start[1]:
            return None
        return (end[0] - self._cpu_start[0]) / (end[1] - self._cpu_start[1])

    def cpu_seconds(self):
        """Busy core-seconds of all cores between enter and exit (/proc/stat), or None."""
        end = self._cpu_end or cpu_times()
        if not self._cpu_start or not end:
            return None
        return round((end[0] - self._cpu_start[0]) / self.processes.tick, 1)


def run_level(args, level: int, problems: list, folder: str, work: str) -> dict:
    level_dir = os.path.join(work, f"l{level}")
    shutil.rmtree(level_dir, ignore_errors=True)
    os.makedirs(level_dir)
    db = os.path.join(level_dir, "results.db")
    cache = os.path.join(level_dir, "fastpath-cache")
    command = [args.dicebench, "run", "--model", f"replay:{folder}", "--suite", f"kernelbench-l{level}",
               "--kernelbench-root", args.kernelbench_root, "--problems", ",".join(map(str, problems)), "--db", db,
               "--set", f"eval.fastpath_cache={cache}"]
    for setting in DEFAULT_SETTINGS + args.set:
        command += ["--set", setting]
    log_path = os.path.join(level_dir, "dicebench.log")
    print(f"level {level}: {' '.join(command)}\n  log: {log_path}", flush=True)
    with open(log_path, "w", encoding="utf-8", errors="replace") as log, GpuSampler() as gpu:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                   errors="replace", bufsize=1)
        try:
            for line in process.stdout:
                log.write(line)
                if args.verbose:
                    sys.stderr.write(line)
                    sys.stderr.flush()
            code = process.wait()
        except KeyboardInterrupt:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
            raise
        wall = time.perf_counter() - started
    if not args.keep_caches:
        shutil.rmtree(cache, ignore_errors=True)
    if code != 0:
        with open(log_path, encoding="utf-8", errors="replace") as handle:
            tail = handle.read()[-2000:]
        print(f"level {level}: dicebench run exited with {code} after {wall:.1f} s; the log's end:\n{tail}", flush=True)
    else:
        print(f"level {level}: {wall:.1f} s", flush=True)
    return {"level": level, "command": command, "exit_code": code, "wall_s": wall, "db": db, "log": log_path,
            "gpu_busy": gpu.busy(), "gpu_samples": gpu.values}


# ------------------------------------------------------------------------------------------------
# Reading the results database (any schema version with samples and evaluations)


def columns(connection, table: str) -> set:
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def flatten_phases(value, prefix: str = "") -> dict:
    """Every numeric leaf of details.phases as {name: seconds}; nested maps as a.b."""
    out = {}
    if isinstance(value, dict):
        for key, item in value.items():
            out.update(flatten_phases(item, f"{prefix}{key}" if not prefix else f"{prefix}.{key}"))
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and prefix:
        out[prefix] = float(value)
    return out


def read_results(db: str) -> dict:
    """{(problem, sample): row} of the database's last run; an empty dict where there is none."""
    if not os.path.exists(db):
        return {}
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"samples", "evaluations"} <= tables:
            return {}
        have = columns(connection, "evaluations")
        wanted = ["status", "compile_path", "compile_reason", "compile_seconds", "error_class", "error_message",
                  "details", "runtime_ms", "baseline_ms", "speedup"]
        select = ", ".join(f"e.{c}" if c in have else f"NULL AS {c}" for c in wanted)
        flags = ("(SELECT group_concat(f.flag, ',') FROM evaluation_flags f WHERE f.sample = s.id)"
                 if "evaluation_flags" in tables else "NULL")
        rows = connection.execute(
            f"SELECT s.problem_id, s.sample_index, {select}, {flags} AS flags FROM samples s "
            "LEFT JOIN evaluations e ON e.sample = s.id WHERE s.run = (SELECT max(run) FROM samples)").fetchall()
    finally:
        connection.close()
    out = {}
    for row in rows:
        record = dict(zip(["problem", "sample"] + wanted + ["flags"], row))
        try:
            details = json.loads(record.pop("details") or "{}")
        except ValueError:
            details = {}
        if not isinstance(details, dict):
            details = {}
        seconds = details.get("seconds")
        record["seconds"] = float(seconds) if isinstance(seconds, (int, float)) else None
        record["phases"] = flatten_phases(details.get("phases") or {})
        record["fastpath_outcome"] = details.get("fastpath_outcome")
        loop = details.get("timed_calls")  # where the timing loop's time went (absent from older builds)
        record["timing_loop"] = loop if isinstance(loop, dict) and isinstance(loop.get("loop_s"), (int, float)) else None
        record["verdict"] = record.pop("status")
        record["flags"] = record["flags"].split(",") if record["flags"] else []
        if record["error_message"]:
            record["error_message"] = record["error_message"][:500]
        out[(record["problem"], record["sample"])] = record
    return out


# ------------------------------------------------------------------------------------------------
# Summaries


def quantile(values: list, q: float):
    if not values:
        return None
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = int(math.floor(position))
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def counts(values) -> dict:
    out = {}
    for value in values:
        out[value] = out.get(value, 0) + 1
    return dict(sorted(out.items(), key=lambda item: (-item[1], str(item[0]))))


def summarize(name: str, candidates: list, runs: list) -> dict:
    wall = sum(run["wall_s"] for run in runs)
    seconds = [c["seconds"] for c in candidates if c["seconds"] is not None]
    phases = {}
    for c in candidates:
        for phase, value in c["phases"].items():
            phases[phase] = phases.get(phase, 0.0) + value
    samples = [value for run in runs for value in run["gpu_samples"]]
    unexpected = [{"file": c["file"], "kind": c["kind"], "expected": c["expected"], "verdict": c["verdict"],
                   "error": (c["error_message"] or "").strip().split("\n")[0][:160]}
                  for c in candidates if c["verdict"] not in c["expected"]]
    kinds = {}
    for kind in sorted({c["kind"] for c in candidates}):
        of_kind = [c for c in candidates if c["kind"] == kind]
        times = [c["seconds"] for c in of_kind if c["seconds"] is not None]
        kinds[kind] = {"count": len(of_kind), "seconds_mean": statistics.mean(times) if times else None,
                       "seconds_total": sum(times), "verdicts": counts(c["verdict"] or "not evaluated" for c in of_kind)}
    # The timing loops per timed call: all of it, the reference's batches and comparisons (the
    # candidate waits for both), and the rest (the candidate's calls, inputs, outputs, messages).
    loops = [c["timing_loop"] for c in candidates if c.get("timing_loop")]
    calls = sum(loop.get("calls", 0) for loop in loops)
    per_call = None
    if calls:
        total = {key: sum(loop.get(key, 0.0) for loop in loops) for key in ("loop_s", "batches_s", "compares_s")}
        per_call = {"calls": calls, "loops": len(loops), "loop_ms": 1000 * total["loop_s"] / calls,
                    "batches_ms": 1000 * total["batches_s"] / calls, "compares_ms": 1000 * total["compares_s"] / calls,
                    "candidate_ms": 1000 * (total["loop_s"] - total["batches_s"] - total["compares_s"]) / calls}
    return {
        "name": name,
        "candidates": len(candidates),
        "timing_per_call": per_call,
        "evaluated": sum(1 for c in candidates if c["verdict"]),
        "wall_s": wall,
        "wall_per_candidate_s": wall / len(candidates) if candidates else None,
        "seconds_median": statistics.median(seconds) if seconds else None,
        "seconds_mean": statistics.mean(seconds) if seconds else None,
        "seconds_p90": quantile(seconds, 0.9),
        "seconds_total": sum(seconds),
        "phases": dict(sorted(phases.items(), key=lambda item: -item[1])),
        "gpu_busy": statistics.mean(samples) / 100.0 if samples else None,
        "gpu_samples": len(samples),
        "verdicts": counts(c["verdict"] or "not evaluated" for c in candidates),
        "compile_paths": counts(c["compile_path"] or "-" for c in candidates),
        "kinds": kinds,
        "unexpected": unexpected,
        "exit_codes": [run["exit_code"] for run in runs],
    }


def fmt(value, spec: str = ".1f", none: str = "-") -> str:
    return format(value, spec) if isinstance(value, (int, float)) else none


def busy_text(value) -> str:
    return f"{100 * value:.0f}%" if isinstance(value, (int, float)) else "null"


def print_summary(s: dict) -> None:
    label = "overall L1-2 (pooled)" if s["name"] == "L1-2" else f"level {s['name'][1:]}"
    print(f"\n== {label}: {s['candidates']} candidates ({s['evaluated']} evaluated), wall {fmt(s['wall_s'])} s, "
          f"{fmt(s['wall_per_candidate_s'], '.2f')} s per candidate; GPU busy (nvidia-smi) {busy_text(s['gpu_busy'])}")
    print(f"   evaluation seconds (details.seconds): median {fmt(s['seconds_median'], '.2f')}, "
          f"mean {fmt(s['seconds_mean'], '.2f')}, p90 {fmt(s['seconds_p90'], '.2f')}, total {fmt(s['seconds_total'])}")
    print("   phases (total s): " + (", ".join(f"{k} {v:.1f}" for k, v in s["phases"].items()) or "-"))
    if s.get("timing_per_call"):
        t = s["timing_per_call"]
        print(f"   timing loops ({t['loops']} loops, {t['calls']} calls), ms per call: {t['loop_ms']:.3f} in all; "
              f"reference batches {t['batches_ms']:.3f}, comparisons {t['compares_ms']:.3f}; the candidate's side "
              f"(its calls, inputs, outputs, messages) {t['candidate_ms']:.3f}")
    print("   verdicts: " + ", ".join(f"{k} {v}" for k, v in s["verdicts"].items()))
    print("   compile paths: " + ", ".join(f"{k} {v}" for k, v in s["compile_paths"].items()))
    print(f"   {'kind':<17} {'n':>3} {'mean s':>7} {'total s':>8}  verdicts")
    for kind, k in s["kinds"].items():
        print(f"   {kind:<17} {k['count']:>3} {fmt(k['seconds_mean'], '7.1f'):>7} {fmt(k['seconds_total'], '8.1f'):>8}  "
              + ", ".join(f"{v} {n}" for v, n in k["verdicts"].items()))
    print(f"   unexpected verdicts: {len(s['unexpected'])}")
    for u in s["unexpected"]:
        print(f"     {u['file']} ({u['kind']}): {u['verdict'] or 'not evaluated'}, expected {' | '.join(u['expected'])}"
              + (f": {u['error']}" if u["error"] else ""))


SIDE_BY_SIDE = [("candidates", "d"), ("wall_s", ".1f"), ("wall_per_candidate_s", ".2f"), ("seconds_median", ".2f"),
                ("seconds_mean", ".2f"), ("seconds_p90", ".2f"), ("seconds_total", ".1f"), ("gpu_busy", ".2f")]


def compare(old: dict, new: dict) -> None:
    print("\n== compared with the old run")
    if old.get("population_sha256") != new.get("population_sha256"):
        print("   note: the populations differ (another KernelBench root, mix or script version)")
    old_rows = {c["file"]: c for c in old.get("candidates", [])}
    new_rows = {c["file"]: c for c in new["candidates"]}
    changed = 0
    for file in sorted(set(old_rows) | set(new_rows), key=sort_key):
        a, b = old_rows.get(file), new_rows.get(file)
        if a is None or b is None:
            print(f"   {file}: only in the {'new' if a is None else 'old'} run")
            changed += 1
        elif a.get("kind") != b.get("kind"):
            print(f"   {file}: kind {a.get('kind')} before, {b.get('kind')} now (not the same population)")
            changed += 1
        elif a.get("verdict") != b.get("verdict"):
            print(f"   {file} ({b['kind']}): {a.get('verdict') or 'not evaluated'} -> {b.get('verdict') or 'not evaluated'}")
            changed += 1
    print(f"   {changed} candidates differ in verdict" if changed else "   every candidate has the same verdict")
    names = [n for n in new["summaries"] if n in old.get("summaries", {})]
    for name in names:
        a, b = old["summaries"][name], new["summaries"][name]
        print(f"\n   {name:<22} {'old':>10} {'new':>10} {'new/old':>8}")
        for key, spec in SIDE_BY_SIDE:
            x, y = a.get(key), b.get(key)
            ratio = y / x if isinstance(x, (int, float)) and isinstance(y, (int, float)) and x else None
            print(f"   {key:<22} {fmt(x, spec):>10} {fmt(y, spec):>10} {fmt(ratio, '.2f'):>8}")
        print(f"   {'unexpected':<22} {len(a.get('unexpected', [])):>10} {len(b.get('unexpected', [])):>10}")
        phases = list(dict.fromkeys(list(b.get("phases", {})) + list(a.get("phases", {}))))
        for phase in phases:
            x, y = a.get("phases", {}).get(phase), b.get("phases", {}).get(phase)
            ratio = y / x if x and y is not None else None
            print(f"   {'phase ' + phase:<22} {fmt(x):>10} {fmt(y):>10} {fmt(ratio, '.2f'):>8}")


# ------------------------------------------------------------------------------------------------


def main() -> int:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--kernelbench-root", required=True, help="KernelBench problems (level1/ level2/ level3/)")
    parser.add_argument("--levels", type=parse_levels, default=[1, 2, 3], help="levels, e.g. 1,2 (default 1,2,3)")
    parser.add_argument("--problems-per-level", type=int, default=0, help="use only the first N problems of each level's list")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every kind's count but hang's (default 1)")
    parser.add_argument("--mix", action="append", default=[], help="KIND=N: one kind's count (repeatable, or comma-separated)")
    parser.add_argument("--own-candidates", default=os.path.join(SCRIPT_DIR, "candidates"),
                        help="folder of the project's own candidates, or 'none' (default tools/perf/candidates)")
    parser.add_argument("--generate-only", metavar="DIR", help="write the population (files and manifest.json) to DIR and stop")
    parser.add_argument("--population", metavar="DIR", help="run a population written by --generate-only")
    parser.add_argument("--dicebench", help="dicebench binary (default build/bin/dicebench, else dicebench on PATH)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting for every run")
    parser.add_argument("--work", help="folder for databases, logs and the population (default a new temporary folder)")
    parser.add_argument("--keep-caches", action="store_true", help="keep the fast-path compile caches")
    parser.add_argument("--json", help="write candidates and summaries to FILE")
    parser.add_argument("--compare", metavar="OLD_JSON", help="a --json file of an earlier run to compare with")
    parser.add_argument("--verbose", action="store_true", help="echo dicebench's log to the terminal")
    args = parser.parse_args()

    if not os.path.isdir(args.kernelbench_root):
        fail(f"--kernelbench-root {args.kernelbench_root}: not a folder")
    args.kernelbench_root = os.path.abspath(args.kernelbench_root)
    if args.problems_per_level < 0:
        fail("--problems-per-level takes a number >= 1 (0: every problem of the list)", 2)
    if not (args.scale >= 0) or math.isinf(args.scale):
        fail(f"--scale takes a number >= 0, not {args.scale}", 2)
    if args.generate_only and args.population:
        fail("--generate-only and --population do not go together", 2)
    if args.own_candidates.lower() == "none":
        args.own_candidates = None
    elif not os.path.isdir(args.own_candidates):
        fail(f"--own-candidates {args.own_candidates}: not a folder (or 'none')", 2)
    for setting in args.set:
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+=.*", setting):
            fail(f"--set takes KEY=VALUE, not {setting!r}", 2)
    old = None
    if args.compare:
        try:
            with open(args.compare, encoding="utf-8") as handle:
                old = json.load(handle)
        except (OSError, ValueError) as error:
            fail(f"--compare {args.compare}: cannot read it ({error})")
        if not isinstance(old, dict) or "candidates" not in old or "summaries" not in old:
            fail(f"--compare {args.compare}: not a --json file of this benchmark")
    mix = mix_counts(args.scale, parse_mix(args.mix))

    if args.generate_only:
        if os.path.exists(args.generate_only) and os.listdir(args.generate_only):
            fail(f"--generate-only {args.generate_only}: the folder is not empty")
        files, manifest = build_population(args, mix)
        write_population(args.generate_only, files, manifest, mix)
        print_mix(mix, manifest)
        print(f"wrote {len(files)} candidates and manifest.json to {args.generate_only} "
              f"(population {population_digest(files)[:16]})")
        return 0

    dicebench = args.dicebench or os.path.join(REPO_ROOT, "build", "bin", "dicebench")
    if not args.dicebench and not os.path.exists(dicebench):
        dicebench = shutil.which("dicebench") or dicebench
    if not (os.path.isfile(dicebench) and os.access(dicebench, os.X_OK)):
        fail(f"--dicebench {dicebench}: not an executable file")
    args.dicebench = os.path.abspath(dicebench)

    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="dicebench-population-")
    os.makedirs(work, exist_ok=True)
    if args.population:
        folder = os.path.abspath(args.population)
        files, manifest, mix = read_population(folder, args.levels)
    else:
        folder = os.path.join(work, "population")
        shutil.rmtree(folder, ignore_errors=True)
        files, manifest = build_population(args, mix)
        write_population(folder, files, manifest, mix)
    print_mix(mix, manifest)
    print(f"population {population_digest(files)[:16]} in {folder}; work folder {work}\n", flush=True)

    candidates, runs = [], {}
    for level in sorted({e["level"] for e in manifest.values()}):
        entries = {name: e for name, e in manifest.items() if e["level"] == level}
        problems = sorted({e["problem"] for e in entries.values()})
        run = run_level(args, level, problems, folder, work)
        runs[level] = run
        results = read_results(run["db"])
        for name in sorted(entries, key=sort_key):
            e = entries[name]
            r = results.get((e["problem"], e["sample"]), {})
            candidates.append({
                "level": level, "problem": e["problem"], "sample": e["sample"], "file": name, "kind": e["kind"],
                "expected": e["expected"], "verdict": r.get("verdict"), "seconds": r.get("seconds"),
                "phases": r.get("phases", {}), "compile_path": r.get("compile_path"),
                "compile_seconds": r.get("compile_seconds"), "compile_reason": r.get("compile_reason"),
                "fastpath_outcome": r.get("fastpath_outcome"), "flags": r.get("flags", []),
                "error_class": r.get("error_class"), "error_message": r.get("error_message"),
                "runtime_ms": r.get("runtime_ms"), "speedup": r.get("speedup")})

    summaries = {}
    for level in sorted(runs):
        summaries[f"L{level}"] = summarize(f"L{level}", [c for c in candidates if c["level"] == level], [runs[level]])
    if 1 in runs and 2 in runs:
        summaries["L1-2"] = summarize("L1-2", [c for c in candidates if c["level"] in (1, 2)], [runs[1], runs[2]])
    for s in summaries.values():
        print_summary(s)

    print(f"\n{'':<12} {'cands':>5} {'wall s':>8} {'s/cand':>7} {'median':>7} {'mean':>7} {'p90':>7} {'GPU busy':>8} {'unexp':>5}")
    for name in [n for n in ("L1", "L2", "L3", "L1-2") if n in summaries]:
        s = summaries[name]
        label = "overall L1-2" if name == "L1-2" else name
        print(f"{label:<12} {s['candidates']:>5} {fmt(s['wall_s'], '8.1f')} {fmt(s['wall_per_candidate_s'], '7.2f')} "
              f"{fmt(s['seconds_median'], '7.2f')} {fmt(s['seconds_mean'], '7.2f')} {fmt(s['seconds_p90'], '7.2f')} "
              f"{busy_text(s['gpu_busy']):>8} {len(s['unexpected']):>5}")

    report = {
        "benchmark": "population_benchmark", "format": 1, "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "dicebench": args.dicebench, "settings": DEFAULT_SETTINGS + args.set, "population_sha256": population_digest(files),
        "population": folder, "work": work, "mix": mix,
        "runs": {f"L{level}": {k: v for k, v in run.items() if k != "gpu_samples"} for level, run in runs.items()},
        "summaries": summaries, "candidates": candidates,
    }
    if old is not None:
        compare(old, report)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
            handle.write("\n")
        print(f"\nwrote {args.json}")
    return 1 if any(run["exit_code"] != 0 for run in runs.values()) else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
