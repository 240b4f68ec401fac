"""Where a candidate's inputs lie in its memory: the address ranges every input of a job has
occupied, and fresh placements that avoid them (harness/PROTOCOL.md, "Fresh placement").

The allocator hands a call's inputs the block the previous call's inputs freed, so every call's
inputs land at the same addresses. A candidate that captured a CUDA graph on an early call's input
pointers, and replays it without copying the new inputs in, then reads the right inputs on every
call and passes, though it would read stale memory wherever its caller's inputs moved. On the calls
the host marks `fresh_placement` (a secret subset holding at least one checked call per loop), every
input tensor is moved to memory where no input of this job has been, and the copy it was received
into has its bits inverted, so such a replay reads stale or scrambled bytes, and the checked call
fails it.

On CUDA the memory comes from dicebench_cuda.map_fresh (fresh_memory.hpp): address ranges the
driver reserves for this process and never hands out again, with physical memory that is released
once the tensor is gone (at the next call, after a device synchronisation), so a job's memory stays
bounded. On the CPU alike: each moved tensor gets an anonymous mapping of its own that is never
unmapped (its pages are released once the tensor is gone, at the next call), so its range is never
handed out again; a mapping that lands on a used range (one that held an input the allocator
placed) is kept, untouched, and another is made. Were fresh mappings unmapped, the ranges they left
would be used ranges the kernel hands out first: after a burst of releases (a garbage collection
pass once a timing loop ends, or a candidate that let go of the inputs it kept) the next fresh
placement would find dozens of them before a fresh one."""

from __future__ import annotations

import mmap
import sys
from typing import Any

from . import sealed
from .errors import HostError

MAX_CPU_ATTEMPTS = 64
_MAP_NORESERVE = 0x4000  # Linux's MAP_NORESERVE: a parked mapping commits nothing


_mmap = mmap.mmap  # bound before candidate code runs: placement uses sealed calls only (sealed.py)
_madvise = mmap.mmap.madvise
_getrefcount = sys.getrefcount
_MMAP_FLAGS = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE


def _span(tensor: Any) -> tuple[int, int] | None:
    start, size = sealed.storage_span(tensor)
    if size == 0:
        return None
    return start, start + size


class _FreshRegion:
    """Device memory from map_fresh, seen by torch through the CUDA array interface (torch keeps
    this object alive as long as a tensor's storage uses the memory); when torch lets it go, the
    region waits in `released` to be unmapped at a safe point."""

    def __init__(self, address: int, size: int, handle: int, device_index: int, released: list):
        self.address, self.size, self.handle, self.device_index = address, size, handle, device_index
        self.released = released
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (address, False),
                                         "version": 3, "strides": None, "stream": None}

    def __del__(self) -> None:
        self.released.append((self.address, self.size, self.handle, self.device_index))


class InputPlacements:
    """The address ranges the inputs of one job have occupied, and fresh placements avoiding them.
    Its bookkeeping is bounded by the distinct ranges the allocator used, not by the job's calls."""

    def __init__(self, device: Any):
        import torch

        self.device = torch.device(device)
        # [start, end) of every input the allocator placed, each once (calls mostly repeat the same
        # ones); a fresh placement's own ranges are never handed out again, so they are not kept here.
        self.used: dict[tuple[int, int], None] = {}
        self.released: list[tuple[int, int, int, int]] = []  # CUDA regions no tensor uses any more
        self.mapped: list = []  # CPU mappings holding moved inputs, or held until the next call's release
        self.parked: list = []  # CPU mappings kept only so their ranges stay out of use: they hold no memory
        self.fresh_calls = 0

    def receive(self, inputs: list, fresh: bool) -> list:
        """A call's inputs as the candidate gets them: moved where no input of this job has been when
        `fresh`; either way the ranges they occupy are noted."""
        self.release()
        if fresh:
            received: list = []  # the tensors the inputs came in, scrambled once all are moved
            inputs = [self._moved(value, received) for value in inputs]
            # Those copies lie where the allocator put them, most likely where the previous call's
            # inputs lay: once freed they would still hold this call's inputs there for a replay to
            # read. Scrambled after every move, as inputs may share storage.
            for tensor in {sealed.storage_span(t)[0]: t for t in received}.values():
                sealed.invert_storage(tensor)
            self.fresh_calls += 1
            if self.device.type == "cuda":
                sealed.synchronize("cuda")
        else:
            self._note(inputs)
        return inputs

    def release(self) -> None:
        """Releases the memory of the fresh placements whose tensors are gone; their ranges stay reserved.
        On CUDA dicebench_cuda synchronises the device first."""
        index = 0
        while index < len(self.mapped):
            region = self.mapped[index]
            if _getrefcount(region) > 3:  # a tensor still uses it (this list, `region` and the call's argument are 3)
                index += 1
                continue
            _madvise(region, mmap.MADV_DONTNEED)
            self.parked.append(self.mapped.pop(index))
        if not self.released:
            return
        import dicebench_cuda

        while self.released:
            address, size, handle, index = self.released.pop()
            dicebench_cuda.unmap_fresh(address, size, handle, index)

    def _note(self, value: Any) -> None:
        if isinstance(value, sealed.Tensor):
            span = _span(value)
            if span is not None:
                self.used[span] = None
        elif isinstance(value, (list, tuple)):
            for item in value:
                self._note(item)

    def _overlaps(self, span: tuple[int, int] | None) -> bool:
        return span is not None and any(span[0] < end and start < span[1] for start, end in self.used)

    def _moved(self, value: Any, received: list) -> Any:
        if isinstance(value, (list, tuple)):
            return type(value)(self._moved(item, received) for item in value)
        if not isinstance(value, sealed.Tensor) or _span(value) is None:
            return value
        moved = self._fresh_cuda(value) if sealed.device(value).type == "cuda" else self._fresh_cpu(value)
        sealed.copy_into(moved, value)
        received.append(value)
        return moved

    def _fresh_cuda(self, like: Any) -> Any:
        import dicebench_cuda

        device = sealed.device(like)
        index = device.index if device.index is not None else sealed.current_cuda_device()
        nbytes = sealed.storage_span(like)[1]  # received tensors are compact copies
        try:
            address, size, handle = dicebench_cuda.map_fresh(index, nbytes, list(self.used))
        except RuntimeError as error:
            raise HostError(f"cannot place the inputs at fresh addresses: {error}") from None
        raw = sealed.bytes_tensor(_FreshRegion(address, size, handle, index, self.released), device)
        return sealed.typed(sealed.first_bytes(raw, nbytes), sealed.dtype(like), sealed.shape(like), sealed.stride(like),
                            sealed.storage_offset(like))

    def _fresh_cpu(self, like: Any) -> Any:
        nbytes = sealed.storage_span(like)[1]  # received tensors are compact copies
        for _ in range(MAX_CPU_ATTEMPTS):
            region = _mmap(-1, nbytes, flags=_MMAP_FLAGS)
            raw = sealed.bytes_tensor(region, count=nbytes)  # keeps the mapping while used
            if not self._overlaps(_span(raw)):
                self.mapped.append(region)
                return sealed.typed(raw, sealed.dtype(like), sealed.shape(like), sealed.stride(like),
                                    sealed.storage_offset(like))
            del raw
            self.parked.append(region)  # untouched, it holds no memory; kept, its range is never handed out again
        raise HostError(f"cannot place the inputs at fresh addresses: {MAX_CPU_ATTEMPTS} mappings landed on used ones")
