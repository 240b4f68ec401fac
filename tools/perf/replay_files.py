"""What the Python benchmarks share about their inputs: replay file names
(level_<L>_problem_<ID>_sample_<S>_kernel.py), reading a file, and finding a KernelBench problem's
file under a checkout (the repository root or the folder holding level<L>/)."""

from __future__ import annotations

import os
import re
import sys

NAME = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def problem_file(root: str, level: int, problem: int, tool: str) -> str:
    """The problem's file; else the tool stops with one error line naming it."""
    for folder in (os.path.join(root, f"level{level}"), os.path.join(root, "KernelBench", f"level{level}")):
        if os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                if name.startswith(f"{problem}_") and name.endswith(".py"):
                    return os.path.join(folder, name)
    sys.exit(f"{tool}: no problem {problem} of level {level} under {root}")
