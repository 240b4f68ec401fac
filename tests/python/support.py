"""What the dicebench package's tests share: paths given by ctest, the CLI, small sources."""

import json
import os
import subprocess

CLI = os.environ["DICEBENCH_CLI"]
DATA = os.environ["DICEBENCH_TEST_DATA_DIR"]
EVAL = os.path.join(DATA, "eval")
KERNELBENCH = os.path.join(DATA, "kernelbench")
PROBLEM = os.path.join(EVAL, "problem_linear_relu.py")

# Defines no ModelNew: not a candidate.
NOT_A_CANDIDATE = "import torch.nn as nn\n\nclass Model(nn.Module):\n    pass\n"


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=600)


def eval_json(problem_path: str, candidate_path: str, *extra: str) -> dict:
    """`dicebench eval --json` on the CPU."""
    done = cli("eval", "--problem", problem_path, "--candidate", candidate_path, "--json", "--device", "cpu", *extra)
    if done.returncode != 0:
        raise AssertionError(f"dicebench eval failed: {done.stderr}")
    return json.loads(done.stdout)
