"""Kernels that a candidate's JIT DSL compiles in its own process (Triton), as the harness must
know them: their names make them the candidate's own kernels in the share of device time (CUPTI
reports a Triton kernel under the name of its @triton.jit function), and the time spent compiling
them is reported apart from the time the calls take.

A kernel counts once it is compiled for a launch. A @triton.jit function that is defined but never
launched never compiles, so it adds nothing; ATen's kernels are never named here."""

from __future__ import annotations

import sys
import time
from typing import Any


class JitWatch:
    """Records every Triton compile in this process from install() on: [{"name", "kernel",
    "seconds"}], and adds each compiled kernel's name to `names` (the candidate's kernels)."""

    def __init__(self, names: set[str]):
        self.names = names
        self.compiles: list[dict] = []
        self.installed = False

    def install(self) -> None:
        """Wraps Triton's compile step, if the candidate imported Triton (the harness never imports
        it itself: that costs every candidate a second). Idempotent."""
        if self.installed or "triton" not in sys.modules:
            return
        try:
            from triton.runtime.jit import JITFunction
        except Exception:  # noqa: BLE001 - a Triton without this layout: no names, no compile times
            return
        inner = JITFunction._do_compile
        watch = self

        def _do_compile(self: Any, *args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            kernel = inner(self, *args, **kwargs)
            function = getattr(getattr(self, "fn", None), "__name__", "") or ""
            compiled = getattr(kernel, "name", None) or getattr(getattr(kernel, "metadata", None), "name", None)
            watch.record(function, compiled if isinstance(compiled, str) else function,
                         time.perf_counter() - started)
            return kernel

        JITFunction._do_compile = _do_compile
        self.installed = True

    def record(self, function: str, kernel: str, seconds: float) -> None:
        self.names.update(n for n in (function, kernel) if n)
        self.compiles.append({"name": function, "kernel": kernel, "seconds": round(seconds, 4)})

    def summary(self) -> dict:
        """{"count", "seconds"} of the compiles so far, and the compiles themselves (at most 64)."""
        return {"count": len(self.compiles), "seconds": round(sum(c["seconds"] for c in self.compiles), 4),
                "compiles": self.compiles[:64]}
