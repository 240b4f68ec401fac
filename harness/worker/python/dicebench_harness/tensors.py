"""Trees of tensors (tensors inside tuples and lists): moving, cloning, zeroing, saving; device sync."""

from __future__ import annotations

import os
from typing import Any


def to_device(value: Any, device: Any) -> Any:
    """Tensors (also inside tuples and lists) moved to device; everything else as is."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, tuple):
        return tuple(to_device(v, device) for v in value)
    if isinstance(value, list):
        return [to_device(v, device) for v in value]
    return value


def clone_tree(value: Any) -> Any:
    """Detached clones of every tensor (also inside tuples and lists)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, tuple):
        return tuple(clone_tree(v) for v in value)
    if isinstance(value, list):
        return [clone_tree(v) for v in value]
    return value


def zero_tree(value: Any) -> None:
    """Overwrites every tensor (also inside tuples and lists) with zeros, in place."""
    import torch

    if isinstance(value, torch.Tensor):
        value.detach().zero_()
    elif isinstance(value, (tuple, list)):
        for item in value:
            zero_tree(item)


def to_cpu(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, tuple):
        return tuple(to_cpu(v) for v in value)
    if isinstance(value, list):
        return [to_cpu(v) for v in value]
    return value


def synchronize(device: Any) -> None:
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def save_private(obj: Any, path: str) -> None:
    """torch.save to a new file with mode 0600."""
    import torch

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        torch.save(obj, handle)
