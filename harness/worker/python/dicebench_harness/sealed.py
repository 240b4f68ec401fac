"""The torch and OS calls the harness makes on a call's outputs, from the moment the call returns until
they are handed over, bound when this module is imported: before any candidate code runs.

A candidate runs in this process and may patch torch from Python: torch.cuda.synchronize, the
methods of torch.Tensor, torch.save, Stream and Event waits, a torch function mode. Patched so,
they give it control again after its call has returned, outside the timed window, where it could
do the work its call skipped (compute into the tensor it returned, then let the harness read it).
So the harness takes a call's outputs with calls a candidate cannot redirect from Python:
- torch's tensor and storage methods come from torch._C.TensorBase and torch._C.StorageBase, which
  Python cannot change ("immutable type"), not from torch.Tensor, a Python class;
- torch.empty and the device synchronize are the builtins bound here, not looked up in torch's
  namespace at the time of use;
- torch function modes are disabled around them (torch._C.DisableTorchFunction: a mode the
  candidate pushed, or torch.set_default_device's, does not see them), and a torch dispatch mode
  still active when the call returns is refused;
- from a call's last step on, Python's profile and trace hooks are removed and automatic garbage
  collection is off (harness_runs, called inside the timed window), so neither a sys.setprofile
  hook nor a gc callback or finalizer the candidate left runs harness-side; the timing loop keeps
  collection off throughout, its calls included (dicebench_timing.time_adaptive, as timeit does),
  and a forward turns it back on (candidate_runs);
- a CPU call's outputs are written to their file with os.open and os.write bound here (raw bytes,
  write_raw), not through torch.save and pickle; and a call's inputs are read, unmasked and placed
  the same way (read_file, bytes_tensor, xor_mask, strided), so the untimed gap between the
  inputs' arrival and the call gives a patched torch no control either.

What stays out of reach of this: native code (ctypes, a C extension), a candidate thread that runs
beside the harness, torch.library overrides of torch's own kernels, and patches to the harness's
own modules or to Python's builtins. Those are the sandbox's and the host's concern (fresh
inputs, secret checked calls, the process boundary).
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

import torch

# Any: torch's stubs give TensorBase's properties as plain values (the descriptors' __get__ is read
# below), lack StorageBase's methods, and lack set_(source, offset, size).
_TensorBase: Any = torch._C.TensorBase
_StorageBase: Any = torch._C.StorageBase
Tensor = torch.Tensor  # the class outputs must be exactly
Device = torch.device
_clone = _TensorBase.clone
_contiguous = _TensorBase.contiguous
_copy = _TensorBase.copy_
_detach = _TensorBase.detach
_reshape = _TensorBase.reshape
_view = _TensorBase.view
_numpy = _TensorBase.numpy
_untyped_storage = _TensorBase.untyped_storage
_stride = _TensorBase.stride
_storage_offset = _TensorBase.storage_offset
_layout = _TensorBase.layout.__get__
_device = _TensorBase.device.__get__
_dtype = _TensorBase.dtype.__get__
_shape = _TensorBase.shape.__get__
_storage_data_ptr = _StorageBase.data_ptr
_storage_nbytes = _StorageBase.nbytes
_empty = torch.empty
_frombuffer = torch.frombuffer
_as_tensor = torch.as_tensor
_randint = torch.randint
_Generator = torch.Generator
_manual_seed = torch.Generator.manual_seed
_bitwise_xor_ = _TensorBase.bitwise_xor_
_as_strided = _TensorBase.as_strided
_narrow = _TensorBase.narrow
_set_ = _TensorBase.set_
_bitwise_not_ = _TensorBase.bitwise_not_
_int64 = torch.int64
_numel = _TensorBase.numel
_element_size = _TensorBase.element_size
_uint8 = torch.uint8
STRIDED = torch.strided  # the layout of a dense tensor
DTYPES = {name: getattr(torch, name) for name in (  # the dtypes a transfer may carry, by name
    "float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool",
    "complex64", "complex128")}
_no_torch_function = torch._C.DisableTorchFunction
_dispatch_modes = torch._C._len_torch_dispatch_stack
# None on a torch without CUDA, where no device is a CUDA device and neither is called
_cuda_synchronize: Any = getattr(torch._C, "_cuda_synchronize", None)
_cuda_get_device: Any = getattr(torch._C, "_cuda_getDevice", None)
_gc_enable, _gc_disable, _setprofile, _settrace = gc.enable, gc.disable, sys.setprofile, sys.settrace
_os_open, _os_write, _os_readv, _os_close, _os_fstat = os.open, os.write, os.readv, os.close, os.fstat
_os_ftruncate = os.ftruncate
# Not O_TRUNC: a timing loop rewrites one outputs file every call, and truncating a file that holds
# data frees its blocks (with the discard mount option, as on our CI machines, about 0.15 ms a call);
# write_raw overwrites it and cuts only what is left past the new end.
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_S_IFMT, _S_IFREG = 0o170000, 0o100000


def harness_runs() -> None:
    """From here on only the harness runs: Python's profile and trace hooks are removed (a hook the
    candidate set would see, and could act on, every call the harness makes) and automatic garbage
    collection stops (its callbacks and the finalizers it runs are the candidate's code). Called as
    the last step of a candidate's call, inside its timed window, so a hook that acts on its way out
    acts on the call's time; and before a timing loop's first inputs arrive."""
    _setprofile(None)
    _settrace(None)
    _gc_disable()


def candidate_runs() -> None:
    """Garbage collection as usual again (after a forward, and after a timing loop)."""
    _gc_enable()


def synchronize(device_type: str) -> None:
    """Waits for every stream of the current CUDA device (nothing to wait for on the CPU)."""
    if device_type == "cuda":
        _cuda_synchronize()


def empty(shape_: list, dtype_: Any, device_: Any) -> Any:
    """An uninitialised contiguous tensor."""
    with _no_torch_function():
        return _empty(shape_, dtype=dtype_, device=device_)


# A tensor's layout, device, dtype and storage offset, and the current CUDA device's index.
layout, device, dtype, storage_offset, current_cuda_device = _layout, _device, _dtype, _storage_offset, _cuda_get_device


def shape(tensor: Any) -> list:
    return list(_shape(tensor))


def stride(tensor: Any) -> list:
    return list(_stride(tensor))


def storage_span(tensor: Any) -> tuple[int, int]:
    """(first byte address, size in bytes) of the storage behind `tensor`."""
    storage = _untyped_storage(tensor)
    return _storage_data_ptr(storage), _storage_nbytes(storage)


def refuse_dispatch_modes() -> None:
    """Raises TypeError when a torch dispatch mode is active: it would see, and could change, every
    operation the harness makes on the outputs."""
    if _dispatch_modes():
        raise TypeError("a torch dispatch mode (TorchDispatchMode) was still active when ModelNew.forward "
                        "returned; the harness reads outputs without one")


def detached_copy(tensor: Any) -> Any:
    """A detached copy of a plain tensor, compact (dense strides kept, else contiguous)."""
    with _no_torch_function():
        copy = _clone(_detach(tensor))
        _, size = storage_span(copy)
        if _storage_offset(copy) or size != _numel(copy) * _element_size(copy):
            copy = _contiguous(copy)
        return copy


def empty_like(tensor: Any) -> Any:
    """An uninitialised tensor of `tensor`'s shape and dtype on its device, contiguous."""
    with _no_torch_function():
        return _empty(_shape(tensor), dtype=_dtype(tensor), device=_device(tensor))


def copy_into(target: Any, source: Any) -> None:
    with _no_torch_function():
        _copy(target, _detach(source))


def write_raw(tensors: list, path: str) -> list[tuple[int, int]]:
    """Writes CPU tensors' bytes, one after another, to the file at `path` (created with mode 0600,
    or overwritten: it ends where they end; each tensor made contiguous first) and returns each
    one's (offset, size) in bytes."""
    places = []
    fd = _os_open(path, _WRITE_FLAGS, 0o600)
    try:
        offset = 0
        with _no_torch_function():
            for tensor in tensors:
                data = memoryview(_numpy(_view(_reshape(_contiguous(_detach(tensor)), (-1,)), _uint8)))
                written = 0
                while written < len(data):
                    written += _os_write(fd, data[written:])
                places.append((offset, len(data)))
                offset += len(data)
        if _os_fstat(fd).st_size > offset:  # an earlier, longer write's tail
            _os_ftruncate(fd, offset)
    finally:
        _os_close(fd)
    return places


def read_file(path: str, max_bytes: int) -> bytearray:
    """The bytes of the regular file at `path`, read straight into new memory (never through a link;
    OSError, or ValueError when it is not a regular file of at most `max_bytes`)."""
    fd = _os_open(path, _READ_FLAGS)
    try:
        info = _os_fstat(fd)
        if (info.st_mode & _S_IFMT) != _S_IFREG or info.st_size > max_bytes:
            raise ValueError(f"{path!r} is not a regular file of at most {max_bytes} bytes")
        data = bytearray(info.st_size)
        view, done = memoryview(data), 0
        while done < len(data):
            count = _os_readv(fd, [view[done:done + (1 << 30)]])
            if not count:
                break
            done += count
        del view
        del data[done:]  # a file that shrank while read: what was there
        return data
    finally:
        _os_close(fd)


def bytes_tensor(data: Any, device: Any = None, count: int = -1, offset: int = 0) -> Any:
    """A uint8 tensor over `data` (a buffer such as a bytearray or an mmap, shared: `count` bytes from
    `offset`, or all) or, given a device, over a CUDA array interface object."""
    if device is None:
        return _frombuffer(data, dtype=_uint8, count=count, offset=offset)
    return _as_tensor(data, device=device)


def first_bytes(flat: Any, count: int) -> Any:
    return _narrow(flat, 0, 0, count)


def invert_storage(tensor: Any) -> None:
    """Inverts every bit of the storage behind `tensor` (in stream order)."""
    storage = _untyped_storage(tensor)
    with _no_torch_function():
        flat = _empty(0, dtype=_uint8, device=_device(tensor))
        _set_(flat, storage, 0, (_storage_nbytes(storage),))
        _bitwise_not_(flat)


def mask_bytes(seed: int, size: int, device: Any) -> Any:
    """`size` bytes of torch's generator on `device` seeded with `seed` (transfer.mask_stream)."""
    generator = _Generator(device=device)
    _manual_seed(generator, seed)
    words = _randint(-(2**63), 2**63 - 1, ((size + 7) // 8,), dtype=_int64, device=device, generator=generator)
    return _narrow(_view(words, _uint8), 0, 0, size)


def xor_(target: Any, mask: Any) -> None:
    with _no_torch_function():
        _bitwise_xor_(target, mask)


def typed(flat: Any, dtype_: Any, shape_: list, stride_: list | None = None, offset: int = 0) -> Any:
    """A uint8 tensor's bytes seen as `dtype_` with `shape_` (contiguous, or `stride_` and `offset`
    in elements)."""
    with _no_torch_function():
        typed_flat = _view(flat, dtype_)
        if stride_ is None:
            return _reshape(typed_flat, shape_)
        return _as_strided(typed_flat, shape_, stride_, offset)


def copy(tensor: Any) -> Any:
    """A copy of `tensor` in new memory (clone: the same strides where dense)."""
    with _no_torch_function():
        return _clone(tensor)
