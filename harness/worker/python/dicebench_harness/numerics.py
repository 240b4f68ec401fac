"""The harness's global numeric settings, applied before every call into problem or candidate code.

apply_numerics() sets, every time it is called:
- TF32 off for matmuls and cuDNN (torch.backends.cuda.matmul.allow_tf32,
  torch.backends.cudnn.allow_tf32) and float32 matmul precision "highest";
- cuDNN autotuning off (cudnn.benchmark = False), so reference, candidate and baseline pick their
  algorithms by the same heuristics on every run, and cudnn.deterministic = False (torch's
  default), set explicitly each time so a candidate cannot leave it on for its next call.
  deterministic = True was measured on an H200 (torch 2.11+cu130, fp32): neutral for Conv2d,
  Conv3d, grouped and depthwise convs and ConvTranspose1d, but 31x slower for the ConvTranspose3d
  of KernelBench level 2 problem 100 (16x64x24x48x48, k3 s2 p1: 41.8 ms -> 1298.7 ms), which
  would distort baselines and time budgets; so it stays off (CUDNN_DETERMINISTIC);
- default dtype float32;
- autograd off (torch.set_grad_enabled(False)); callers also wrap calls in torch.no_grad().

Reference and candidate live in separate processes, so a candidate that flips a switch cannot
reach the reference or the baseline; re-applying before every call (timed calls included) also
undoes a flip the candidate made during its own previous call, within its own process.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

CUDNN_DETERMINISTIC = False


_setters: tuple = ()  # torch's C setters, bound by the first apply_numerics() (see below)


def apply_numerics() -> None:
    """Sets them through torch's C setters (what torch.backends' attributes and torch.set_* call),
    bound on the first call, which the worker makes before any candidate code runs: a candidate
    that patched torch.set_float32_matmul_precision, say, gets no control back when the harness
    applies the settings between its calls (harness/worker/python/dicebench_harness/sealed.py)."""
    global _setters
    if not _setters:
        import torch

        c = torch._C
        _setters = (c._set_cublas_allow_tf32, c._set_cudnn_allow_tf32, c._set_float32_matmul_precision,
                    c._set_cudnn_benchmark, c._set_cudnn_deterministic, c._set_default_dtype,
                    c._set_grad_enabled, torch.float32)
    (cublas_tf32, cudnn_tf32, matmul_precision, cudnn_benchmark, cudnn_deterministic, default_dtype,
     grad_enabled, float32) = _setters
    cublas_tf32(False)
    cudnn_tf32(False)
    matmul_precision("highest")
    cudnn_benchmark(False)
    cudnn_deterministic(CUDNN_DETERMINISTIC)
    default_dtype(float32)
    grad_enabled(False)


def current_numerics() -> dict:
    """The settings apply_numerics() controls, as they are now (for tests and logs)."""
    import torch

    return {
        "cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "cudnn_benchmark": torch.backends.cudnn.benchmark,
        "cudnn_deterministic": torch.backends.cudnn.deterministic,
        "default_dtype": str(torch.get_default_dtype()),
        "grad_enabled": torch.is_grad_enabled(),
    }


@contextlib.contextmanager
def harness_call() -> Iterator[None]:
    """Apply the settings, then run the body under torch.no_grad()."""
    import torch

    apply_numerics()
    with torch.no_grad():
        yield
