"""Clearing device memory before it can reach another job (harness/README.md, "GPU memory between jobs").

Torch's caching allocator keeps freed memory in segments (one cudaMalloc each) and hands it out
again as it is; `torch.cuda.empty_cache()` gives wholly free segments back to the driver as they
are. Neither clears anything. Two ways lead from there to a later job's candidate:
- the reference's export pool (transfer.export_pool) keeps its segments through empty_cache, and a
  later job's inputs are carved out of them; the candidate maps the whole segment through CUDA IPC
  (an IPC handle names the whole allocation), so it could read an earlier job's bytes beyond its own
  inputs;
- memory given back to the driver may reach another process without being cleared.
So the reference zeroes its allocator's free blocks (every pool's) before it empties the cache at the
end of a job (`release_cached`), and every CUDA worker zeroes all its segments, and the fresh
placements still mapped, when it ends (`zero_everything`; worker.py on shutdown, then os._exit).
fresh_memory.cpp zeroes a fresh placement before unmapping it.

The planning (`free_ranges`, `segment_ranges`) reads torch.cuda.memory_snapshot()'s structure:
segments {"device", "address", "total_size", "blocks": [{"address", "size", "state"}]}, a block's
state "active_allocated" (a tensor uses it), "active_awaiting_free" (freed, another stream's use
pending) or "inactive" (free). After a device synchronize nothing is pending, so every block but an
allocated one is free to overwrite.

The torch functions are bound when this module is imported (worker.serve imports it before any
candidate code runs), so a candidate that patched torch from Python does not steer its own worker's
clearing (sealed.py says what stays out of reach: native code, a candidate's own threads). One is
read at call time: torch.cuda.is_initialized reads torch.cuda's own flag, which a candidate could
clear in its own worker to skip that worker's clearing, as it could by exiting: what that worker
holds is its own job's data. The reference worker, which holds what crosses jobs, runs no candidate.
"""

from __future__ import annotations

from typing import Any, Iterable

import torch

Range = tuple[int, int]  # (address, bytes)

# A torch built with CUDA has every one of these: a missing one fails the import, loudly, rather
# than turn the clearing off (torch 2.11 has no torch._C._cuda_isInitialized: looked up with a
# default, it made every call here a silent no-op on the GPU host). A CPU-only torch has none.
_snapshot: Any = None
_empty_cache: Any = None
_synchronize: Any = None
_is_initialized: Any = None
_current_device: Any = None
if torch.backends.cuda.is_built():
    _snapshot = torch._C._cuda_memorySnapshot
    _empty_cache = torch._C._cuda_emptyCache
    _synchronize = torch._C._cuda_synchronize
    _is_initialized = torch.cuda.is_initialized
    _current_device = torch._C._cuda_getDevice


def merged(ranges: Iterable[Range]) -> list[Range]:
    """The ranges sorted, empty ones dropped, overlapping and adjacent ones joined: for ranges within
    one allocation only. A memset may not run from one allocation into the next, even where the two
    lie side by side (cudaMemsetAsync refuses it with cudaErrorInvalidValue: seen on the H100 host,
    where two segments' free blocks had been joined)."""
    out: list[Range] = []
    for address, size in sorted(r for r in ranges if r[1] > 0):
        if out and address <= out[-1][0] + out[-1][1]:
            start, length = out[-1]
            out[-1] = (start, max(start + length, address + size) - start)
        else:
            out.append((address, size))
    return out


def _on_device(segment: dict, device_index: int) -> bool:
    return segment.get("device", device_index) == device_index


def free_ranges(segments: list[dict], device_index: int) -> list[Range]:
    """The blocks of `device_index`'s segments that no tensor holds (any state but
    "active_allocated"), merged within their segment (one cudaMalloc each), sorted; to be zeroed only
    after a device synchronize."""
    return sorted(free for segment in segments if _on_device(segment, device_index)
                  for free in merged((block["address"], block["size"]) for block in segment.get("blocks", ())
                                     if block.get("state") != "active_allocated"))


def segment_ranges(segments: list[dict], device_index: int) -> list[Range]:
    """Every segment of `device_index`, whole (one allocation each, never joined), sorted."""
    return sorted({(segment["address"], segment["total_size"])
                   for segment in segments if _on_device(segment, device_index) and segment["total_size"] > 0})


def _device_index(device: Any) -> int | None:
    """The CUDA device index of `device`, or None where it is no CUDA device or CUDA never started
    in this process (then the allocator holds nothing)."""
    parsed = torch.device(device)
    if parsed.type != "cuda" or _is_initialized is None or not _is_initialized():
        return None
    return parsed.index if parsed.index is not None else _current_device()


def _segments(pools: Iterable[Any]) -> list[dict]:
    """The allocator's segments: every pool's (the default snapshot holds the private pools' too),
    and each pool's own snapshot besides, in case a torch leaves them out; a segment once."""
    found: dict[int, dict] = {}
    for pool_id in [(0, 0)] + [tuple(pool.id) for pool in pools if pool is not None]:
        for segment in _snapshot((pool_id[0], pool_id[1], False))["segments"]:
            found.setdefault(segment["address"], segment)
    return list(found.values())


def _zero(ranges: list[Range], device_index: int) -> int:
    if not ranges:
        return 0
    import dicebench_cuda  # after torch, which it shares libcudart with

    return int(dicebench_cuda.zero_ranges(ranges, device_index, 0))


def zero_free_blocks(device: Any, pools: Iterable[Any] = ()) -> int:
    """Zeroes every block of this process's allocator on `device` that no tensor holds, in every
    pool (`pools`: MemPools to be sure of); returns the bytes zeroed (0 off CUDA)."""
    index = _device_index(device)
    if index is None:
        return 0
    _synchronize()
    return _zero(free_ranges(_segments(pools), index), index)


def release_cached(device: Any, pools: Iterable[Any] = ()) -> int:
    """zero_free_blocks, then torch.cuda.empty_cache(): what goes back to the driver is zeros, and
    what the pools keep for later exports too. Returns the bytes zeroed."""
    if _device_index(device) is None:
        return 0
    zeroed = zero_free_blocks(device, pools)
    _empty_cache()
    return zeroed


def zero_everything(device: Any, pools: Iterable[Any] = ()) -> int:
    """Zeroes every segment of this process's allocator on `device`, tensors in use included, and
    the fresh placements still mapped (placement.py): for a worker about to exit, after which nothing
    may read them. Returns the bytes zeroed (0 off CUDA)."""
    index = _device_index(device)
    if index is None:
        return 0
    import dicebench_cuda

    _synchronize()
    fresh = {(address, size) for address, size in dicebench_cuda.mapped_fresh() if size > 0}
    return _zero(sorted(set(segment_ranges(_segments(pools), index)) | fresh), index)
