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
- a CPU call's outputs are written to their file with os.open and os.write bound here (raw bytes,
  write_raw), not through torch.save and pickle.

What stays out of reach of this: native code (ctypes, a C extension), a candidate thread that runs
beside the harness, torch.library overrides of torch's own kernels, and patches to the harness's
own modules or to Python's builtins. Those are the sandbox's and the host's concern (fresh
inputs, secret checked calls, the process boundary).
"""

from __future__ import annotations

import os
from typing import Any

import torch

_TensorBase = torch._C.TensorBase
_StorageBase = torch._C.StorageBase
Tensor = torch.Tensor  # the class outputs must be exactly
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
_numel = _TensorBase.numel
_element_size = _TensorBase.element_size
_uint8 = torch.uint8
STRIDED = torch.strided  # the layout of a dense tensor
_no_torch_function = torch._C.DisableTorchFunction
_dispatch_modes = torch._C._len_torch_dispatch_stack
_cuda_synchronize = getattr(torch._C, "_cuda_synchronize", None)
_os_open, _os_write, _os_close = os.open, os.write, os.close
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC


def synchronize(device_type: str) -> None:
    """Waits for every stream of the current CUDA device (nothing to wait for on the CPU)."""
    if device_type == "cuda":
        _cuda_synchronize()


def layout(tensor: Any) -> Any:
    return _layout(tensor)


def device(tensor: Any) -> Any:
    return _device(tensor)


def dtype(tensor: Any) -> Any:
    return _dtype(tensor)


def shape(tensor: Any) -> list:
    return list(_shape(tensor))


def stride(tensor: Any) -> list:
    return list(_stride(tensor))


def storage_offset(tensor: Any) -> int:
    return _storage_offset(tensor)


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
    """Writes CPU tensors' bytes, one after another, to a new file at `path` (mode 0600; each
    tensor made contiguous first) and returns each one's (offset, size) in bytes."""
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
    finally:
        _os_close(fd)
    return places
