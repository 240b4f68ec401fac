"""Device strings: normalising "cpu" / "cuda" / "cuda:N", selecting the device, naming it."""

from __future__ import annotations

from typing import Any

from .errors import HostError


def normalize_device(device: str) -> str:
    """'cpu', or 'cuda:N' ('cuda' alone means the current CUDA device). Raises ValueError."""
    import torch

    parsed = torch.device(device)
    if parsed.type == "cpu":
        return "cpu"
    if parsed.type == "cuda":
        index: int | None = parsed.index  # None for "cuda" (torch's stubs say int)
        if index is None:
            index = torch.cuda.current_device() if torch.cuda.is_available() else 0
        return f"cuda:{index}"
    raise ValueError(f"unsupported device {device!r} (cpu or cuda[:N])")


def open_device(device: str) -> tuple[str, str]:
    """Check the device is usable and make it current; returns (normalised, human name)."""
    import torch

    normalized = normalize_device(device)
    if normalized == "cpu":
        return normalized, "cpu"
    if not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but CUDA is not available")
    index = int(normalized.split(":")[1])
    if index >= torch.cuda.device_count():
        raise ValueError(f"device {device!r} requested but only {torch.cuda.device_count()} "
                         "CUDA devices are visible")
    torch.cuda.set_device(index)
    return normalized, torch.cuda.get_device_name(index)


def check_device(requested: str, worker_device: Any) -> None:
    """The request's device must be the worker's (cuda means cuda:<current>)."""
    try:
        same = normalize_device(requested) == normalize_device(str(worker_device))
    except (ValueError, RuntimeError) as error:
        raise HostError(f"bad device {requested!r}: {error}") from None
    if not same:
        raise HostError(f"request for device {requested!r} sent to a worker on {worker_device}")
