"""Where a worker's threads run: the host reserves one CPU per evaluator for timed calls.

DICEBENCH_RESERVED_CPUS lists the reserved CPUs (comma-separated) and DICEBENCH_TIMING_CPU names
this worker's evaluator's own. keep_off_reserved() (at start-up, before torch starts its threads)
keeps every thread of the worker off the reserved CPUs; on_timing_cpu() moves the calling thread
onto the timing CPU for a timed call and back. So no compile, worker start-up or other evaluator
shares a core with a timed call, and every evaluation of a run times its calls on the same core.
Without the variables (or where affinity cannot be set) nothing moves.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator


def _cpus(name: str) -> set[int]:
    text = os.environ.get(name, "")
    return {int(part) for part in text.split(",") if part.strip()}


def keep_off_reserved() -> None:
    reserved = _cpus("DICEBENCH_RESERVED_CPUS")
    if not reserved or not hasattr(os, "sched_setaffinity"):
        return
    allowed = os.sched_getaffinity(0) - reserved
    if allowed:
        os.sched_setaffinity(0, allowed)


@contextlib.contextmanager
def on_timing_cpu() -> Iterator[None]:
    timing = _cpus("DICEBENCH_TIMING_CPU")
    before = os.sched_getaffinity(0) if timing and hasattr(os, "sched_setaffinity") else None
    moved = False
    if before is not None:
        try:
            os.sched_setaffinity(0, timing)
            moved = True
        except OSError:
            pass
    try:
        yield
    finally:
        if moved:
            os.sched_setaffinity(0, before)
