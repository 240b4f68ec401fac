"""Triton candidates on the CPU: the harness runs them under Triton's interpreter
(TRITON_INTERPRET=1, set by the host for CPU workers), which executes each kernel's program
instances with NumPy on CPU tensors. One part of Triton still asks for a GPU driver there: the
autotuner's benchmark (@triton.autotune with more than one config). Under the interpreter it is
given a CPU timer instead, so every config is run and timed and the fastest chosen, as on a GPU."""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any, Callable

_ROUNDS = 3


def cpu_bench(kernel_call: Callable[[], Any], quantiles: tuple = (0.5, 0.2, 0.8), **_kw: Any) -> list[float]:
    """Times kernel_call on the CPU, as Triton's benchmarker answers: milliseconds at `quantiles`."""
    kernel_call()  # the first call compiles (interprets) and warms
    times = []
    for _ in range(_ROUNDS):
        started = time.perf_counter()
        kernel_call()
        times.append((time.perf_counter() - started) * 1e3)
    times.sort()
    return [times[min(len(times) - 1, int(q * len(times)))] for q in quantiles] if quantiles else [statistics.median(times)]


def install() -> bool:
    """Under the interpreter, and when the candidate imported Triton: gives autotuners without a
    do_bench of their own the CPU timer. Returns whether it did."""
    if os.environ.get("TRITON_INTERPRET") != "1" or "triton" not in sys.modules:
        return False
    try:
        from triton.runtime.autotuner import Autotuner
    except Exception:  # noqa: BLE001 - a Triton without this layout: autotuned kernels fail as before
        return False
    if getattr(Autotuner, "_dicebench_cpu_bench", False):
        return True
    # A plain property on the class takes precedence over Triton's cached_property, which would ask
    # the (absent) GPU driver for a benchmarker.
    Autotuner.do_bench = property(lambda self: self._do_bench or cpu_bench)
    Autotuner._dicebench_cpu_bench = True
    return True
