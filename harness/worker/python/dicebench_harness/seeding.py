"""Seeding every random number generator a problem or a candidate may draw from.

seed_everything(seed) seeds Python's random, NumPy's global generator and torch (the CPU generator
and, when CUDA is available, every CUDA device's generator). Reference and candidate call it with
the same seed right before building their models, and the reference calls it with each secret
input seed right before get_inputs().
"""

from __future__ import annotations

import random


def seed_everything(seed: int) -> None:
    """Seed random, numpy (seed mod 2^32, its limit) and torch on every device."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    random.seed(seed)
    try:
        import numpy
    except ImportError:  # numpy is optional for problems; torch works without it
        numpy = None
    if numpy is not None:
        numpy.random.seed(seed % 2**32)
    import torch

    torch.manual_seed(seed)  # also seeds all CUDA devices when CUDA is initialised
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
