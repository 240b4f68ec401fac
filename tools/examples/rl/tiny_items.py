"""Built-in tiny items for the RL examples' --dry-run: one small problem of our own (no KernelBench or
DICE data), candidates for it that are right, wrong and broken, completions around them as a policy
writes them, and a KernelBench-shaped folder holding the problem so that a suite (kernelbench-l1)
can extract code from the completions on a machine without a KernelBench checkout."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Scales a tensor and shifts it: y = 2x + 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2.0 + 1.0


def get_inputs():
    return [torch.randn(8, 16)]


def get_init_inputs():
    return []
'''

SUITE_ID = "kernelbench/level1/1"  # PROBLEM's id in suite_folder()'s tree

_MODEL_NEW = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {body}
'''

# Right: a CUDA kernel (built with load_inline, as KernelBench's CUDA answers are) for CUDA inputs,
# and torch's own arithmetic on the CPU, where the dry runs judge it.
_CUDA = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SOURCE = """
#include <torch/extension.h>

__global__ void scale_shift_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0f + 1.0f;
}

torch::Tensor scale_shift(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    scale_shift_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

_extension = None


def scale_shift(x):
    global _extension
    if _extension is None:
        _extension = load_inline(name="scale_shift", cpp_sources="torch::Tensor scale_shift(torch::Tensor x);",
                                 cuda_sources=CUDA_SOURCE, functions=["scale_shift"])
    return _extension.scale_shift(x.contiguous())


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if x.is_cuda:
            return scale_shift(x)
        return torch.addcmul(torch.ones_like(x), x, torch.full_like(x, 2.0))
'''

CANDIDATES = {
    "correct": _CUDA,
    "wrong": _MODEL_NEW.format(body="x * 2.0"),
    "broken": "import torch\n\nclass ModelNew(torch.nn.Module)\n    pass\n",
}

TEMPLATE = "Write a faster version of this PyTorch model as ModelNew:\n```python\n{{ARCH}}\n```\n"


def completion(code: str) -> str:
    """What a policy writes: a sentence, the code in a fenced block, a sentence."""
    return f"Here is a fused version.\n\n```python\n{code}```\n\nIt avoids one temporary.\n"


def chat_prompt(problem: str = PROBLEM) -> str:
    """A ChatML prompt as a trainer's chat template makes it (its code block is the reference's)."""
    user = TEMPLATE.replace("{{ARCH}}", problem)
    return f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


@contextlib.contextmanager
def suite_folder() -> Iterator[dict[str, str]]:
    """A temporary KernelBench-shaped folder with PROBLEM as level1/1_ScaleShift.py and a prompt
    template: yields the Evaluator config that names it (suite "kernelbench-l1")."""
    with tempfile.TemporaryDirectory(prefix="dicebench-rl-") as root:
        os.makedirs(os.path.join(root, "level1"))
        with open(os.path.join(root, "level1", "1_ScaleShift.py"), "w", encoding="utf-8") as f:
            f.write(PROBLEM)
        template = os.path.join(root, "prompt.template")
        with open(template, "w", encoding="utf-8") as f:
            f.write(TEMPLATE)
        yield {"kernelbench.root": root, "kernelbench.template": template}
