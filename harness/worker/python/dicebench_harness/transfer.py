"""Moving one trial's inputs or outputs between the reference and candidate processes.

A transfer is described by a small JSON object that travels in a protocol message:
- {"transport": "raw_file", "path": P, "tree": NODE}: CPU devices. Each tensor's bytes, contiguous,
  lie in the file at P (mode 0600, in the job folder) at its node's "offset_bytes" ({"dtype",
  "shape", "offset_bytes", "size_bytes"}). Raw bytes, not torch.save: the reader runs no unpickler
  on a file untrusted code wrote, and both ends use sealed calls only (sealed.py), so a candidate
  that patched torch.save, torch.load or a tensor method gets no control while its inputs arrive
  or its outputs leave.
- {"transport": "cuda_ipc", "tree": NODE}: CUDA devices. Tensors stay on the GPU; each travels as
  a CUDA IPC handle of its allocation (cudaIpcGetMemHandle, through the dicebench_cuda module), with
  its storage's place in that allocation. KernelBench level-1 inputs are 2 GB at the median and up
  to 17 GB: they cannot go through files. Torch's own sharing (UntypedStorage._share_cuda_) is not
  used: it keeps a reference counter per export in a /dev/shm file that the receiver opens by name,
  so the candidate's sandbox would have to share the host's /dev/shm (every import failed on the
  H200 with a private one). The sender synchronizes before it hands a descriptor over and keeps the
  export alive until the receiver has replied, which is all the counter and torch's event gave.
  NODE is {"tensor": {...}}, {"list": [NODE...]}, {"tuple": [NODE...]}, {"int": n},
  {"float": x or "nan"/"inf"/"-inf"}, {"bool": b} or {"none": true}.

The sender keeps what it exported alive (export() returns it) until the receiver has replied. The
receiver of untrusted descriptors (the reference, receiving a candidate's outputs) checks every
field before use: dtypes from a fixed list, integer shapes and strides that fit the shared
allocation (torch's set_ refuses out-of-range views), the device it runs on.

An IPC handle exposes the whole allocation around a tensor, and a receiver may keep it mapped
after the sender has freed the tensor and its allocator has reused the memory. So the reference
exports copies of its inputs, made in a memory pool of its own (`export_pool()`) that holds
nothing else, after it has computed its outputs from its own copy; and the candidate exports
clones of its outputs.

A batch of timed calls (`BatchWriter`) is exported at once: on CUDA every call's inputs in one
allocation (so a receiver maps it once), on the CPU a file per call. The receiver is handed one
call's descriptor at a time, but whoever maps the allocation (or lists the job folder) could read
the later calls' inputs ahead of their calls, and answer them outside any timed window. So where a
batch holds more than one call, each call's bytes are masked: XORed with a byte stream drawn from
that call's mask key (`mask_stream`: torch's generator on the tensor's device, seeded per key and
tensor), which the host hands over with that call's descriptor only. `import_tree(..., mask_key=K)`
unmasks into the receiver's own memory. A tensor travels as its compact copy (`tensor.clone()`:
the same strides where dense, else contiguous), so both sides mask the same bytes in the same order.
"""

from __future__ import annotations

import base64
import binascii
import collections
import hashlib
import math
import os
import weakref
from typing import Any

from . import sealed
from .errors import HostError

# Bound before candidate code runs (sealed.py).
_b2a_base64, _sha256, _prod = binascii.b2a_base64, hashlib.sha256, math.prod
MAX_DEPTH = 16
STORAGE_ALIGNMENT = 16  # bytes: the widest dtype's (torch's allocators give 512)
MAX_LEAVES = 4096


class TransferError(Exception):
    """A descriptor that cannot be received (malformed, or its memory cannot be opened)."""


MASK_ALIGNMENT = 512  # bytes: where each tensor of a batch starts in its allocation (torch's own)


def _align(size: int, alignment: int = MASK_ALIGNMENT) -> int:
    return (size + alignment - 1) // alignment * alignment


def mask_stream(key: int, index: int, size: int, device: Any) -> Any:
    """`size` bytes (a uint8 tensor on `device`) of the mask of tensor `index` of a call whose mask key
    is `key`: the same bytes in every process on the same device type, from torch's generator."""
    seed = int.from_bytes(_sha256(f"mask:{key}:{index}".encode()).digest()[:8], "little") >> 1
    return sealed.mask_bytes(seed, size, device)


def _storage_bytes(tensor: Any) -> Any:
    """A flat uint8 view of the whole storage behind `tensor`."""
    import torch

    storage = tensor.untyped_storage()
    flat: Any = torch.empty(0, dtype=torch.uint8, device=tensor.device)  # Any: the stubs lack this set_
    return flat.set_(storage, 0, (storage.nbytes(),))


def _compact(tensor: Any, copy: bool = True) -> Any:
    """A tensor whose storage holds exactly its elements from its start: a copy (clone keeps dense
    strides, else contiguous); with copy=False the tensor itself where it is so already (its storage
    then describes it exactly, to be read, never written)."""
    tensor = tensor.detach()
    if not copy and tensor.storage_offset() == 0 and \
            tensor.untyped_storage().nbytes() == tensor.numel() * tensor.element_size():
        return tensor
    clone = tensor.clone()
    if clone.storage_offset() != 0 or clone.untyped_storage().nbytes() != clone.numel() * clone.element_size():
        clone = clone.contiguous()
    return clone


def _leaves_of(value: Any, found: list) -> list:
    import torch

    if isinstance(value, torch.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _leaves_of(item, found)
    return found


def batch_region_bytes(value: Any) -> int:
    """Bytes one call's inputs take in a batch's allocation (each tensor compact, aligned)."""
    return sum(_align(leaf.numel() * leaf.element_size()) for leaf in _leaves_of(value, []))


class BatchWriter:
    """Exports the inputs of a batch of `calls` calls, each taking at most `region` bytes
    (batch_region_bytes): `write(index, inputs, mask_key)` copies one call's inputs (masked unless
    mask_key is None) and returns its descriptor. On CUDA the calls share one allocation, made
    from `pool`; on the CPU each call is a file `path_of(index)`. Keep the writer alive until the
    receiver is done with every call (it holds the allocation)."""

    def __init__(self, device: Any, calls: int, region: int, pool: Any = None):
        import torch

        self.device = torch.device(device)
        self.region = region
        self.buffer: Any = None
        self.handle: str | None = None
        self.base_offset = 0
        if self.device.type == "cuda" and calls * region > 0:
            with allocating_from(pool, self.device):
                self.buffer = torch.empty(calls * region, dtype=torch.uint8, device=self.device)
            import dicebench_cuda  # after torch, which it shares libcudart with

            handle, base, _ = dicebench_cuda.ipc_export(self.buffer.data_ptr(), self.device.index
                                                        if self.device.index is not None else torch.cuda.current_device())
            self.handle, self.base_offset = _b64(handle), self.buffer.data_ptr() - base

    def write(self, index: int, inputs: Any, mask_key: int | None, path: str) -> dict:
        """The descriptor of call `index`'s inputs, copied (and masked) into its place."""
        import torch

        if self.device.type != "cuda":
            # Contiguous copies: their storage holds the bytes in the order written.
            copy = map_tensors(inputs, lambda t: t.detach().clone(memory_format=torch.contiguous_format))
            if mask_key is not None:
                for number, leaf in enumerate(_leaves_of(copy, [])):
                    data = _storage_bytes(leaf)
                    data.bitwise_xor_(mask_stream(mask_key, number, data.numel(), leaf.device))
            return _write_raw_file(copy, path)
        cursor = [index * self.region]
        end = (index + 1) * self.region
        position = [0]

        def place(tensor: Any) -> dict:
            compact = _compact(tensor, copy=False)  # only read: copied into the batch's allocation
            size = compact.numel() * compact.element_size()
            fields = {"dtype": str(compact.dtype).removeprefix("torch."), "shape": list(compact.shape),
                      "stride": list(compact.stride()), "offset": 0, "device": self.device.index
                      if self.device.index is not None else torch.cuda.current_device(), "size_bytes": size}
            number = position[0]
            position[0] += 1
            if size == 0:
                return {"tensor": fields | {"handle": None, "offset_bytes": 0}}
            start = cursor[0]
            cursor[0] += _align(size)
            if cursor[0] > end:
                raise HostError(f"a call's inputs outgrew their place in the batch ({self.region} bytes)")
            target = self.buffer[start:start + size]
            target.copy_(_storage_bytes(compact))
            if mask_key is not None:
                target.bitwise_xor_(mask_stream(mask_key, number, size, self.device))
            return {"tensor": fields | {"handle": self.handle, "offset_bytes": self.base_offset + start}}

        tree = _describe(inputs, place, 0)
        torch.cuda.synchronize(self.device)  # the receiver reads what every stream has written
        return {"transport": "cuda_ipc", "tree": tree}


def map_tensors(value: Any, fn: Any) -> Any:
    """`value` with each tensor of its lists and tuples replaced by fn(tensor); a named tuple stays one."""
    if isinstance(value, sealed.Tensor):
        return fn(value)
    if isinstance(value, (tuple, list)):
        items = [map_tensors(v, fn) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def _describe(value: Any, place: Any, depth: int) -> dict:
    """The descriptor tree of `value`, its tensors described by `place`."""
    if depth > MAX_DEPTH:
        raise HostError(f"a tree nested deeper than {MAX_DEPTH}")
    if isinstance(value, sealed.Tensor):
        return place(value)
    if isinstance(value, (list, tuple)):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {kind: [_describe(v, place, depth + 1) for v in value]}
    return _scalar_node(value)


def export_tree(value: Any, device: Any, path: str) -> tuple[dict, Any]:
    """The descriptor of `value` (plain tensors, numbers, tuples and lists) for a receiver on
    `device`, and what the sender must keep alive until the receiver is done; made with sealed calls
    only, so a candidate exporting its outputs gets no control back while they are read (sealed.py).
    CPU: the raw_file transport, written to `path`; CUDA: cuda_ipc."""
    if not str(device).startswith("cuda"):
        return _write_raw_file(value, path), None
    keep: list = []
    tree = _describe(value, lambda tensor: _ipc_place(tensor, keep), 0)
    sealed.synchronize("cuda")  # the receiver reads what every stream has written
    return {"transport": "cuda_ipc", "tree": tree}, keep


def _write_raw_file(value: Any, path: str) -> dict:
    """Writes the tensors of CPU `value` to `path` (sealed.write_raw); the raw_file descriptor."""
    placed: list = []

    def place(tensor: Any) -> dict:
        fields = {"dtype": _dtype_name(tensor), "shape": sealed.shape(tensor)}
        placed.append((tensor, fields))
        return {"tensor": fields}

    tree = _describe(value, place, 0)
    for (_, fields), (offset, size) in zip(placed, sealed.write_raw([tensor for tensor, _ in placed], path)):
        fields.update(offset_bytes=offset, size_bytes=size)
    return {"transport": "raw_file", "path": path, "tree": tree}


def _dtype_name(tensor: Any) -> str:
    return str(sealed.dtype(tensor)).removeprefix("torch.")


def _ipc_place(tensor: Any, keep: list) -> dict:
    """A CUDA tensor's node: its allocation's IPC handle and its place in it (sealed calls only)."""
    start, size = sealed.storage_span(tensor)
    index = sealed.device(tensor).index
    keep.append(tensor)
    fields = {"dtype": _dtype_name(tensor), "shape": sealed.shape(tensor), "stride": sealed.stride(tensor),
              "offset": sealed.storage_offset(tensor), "device": index, "size_bytes": size}
    if size == 0:
        return {"tensor": fields | {"handle": None, "offset_bytes": 0}}
    import dicebench_cuda  # after torch, which it shares libcudart with

    handle, base, _ = dicebench_cuda.ipc_export(start, index)
    return {"tensor": fields | {"handle": _b64(handle), "offset_bytes": start - base}}


MAX_FILE_BYTES = 64 << 30


def _read_plain_file(path: str, folder: str | None) -> bytearray:
    """The bytes of the file at `path`, refusing what an untrusted writer could plant there: a path
    that leads outside `folder` (when given), a symbolic link, anything but a regular file (a FIFO
    or a device would block or never end), a file over MAX_FILE_BYTES. Read with sealed calls."""
    if folder is not None:
        real_folder = os.path.realpath(folder)
        if os.path.commonpath([os.path.realpath(path), real_folder]) != real_folder:
            raise TransferError(f"the file {path!r} is not in the job folder")
    try:
        return sealed.read_file(path, MAX_FILE_BYTES)
    except OSError as error:
        raise TransferError(f"cannot open {path!r}: {error.strerror}") from None
    except ValueError:
        raise TransferError(f"{path!r} is not a regular file of at most {MAX_FILE_BYTES >> 30} GiB") from None


def import_tree(descriptor: Any, device: Any, *, clone: bool, folder: str | None = None,
                mask_key: int | None = None) -> Any:
    """The value a descriptor describes, on `device`. clone=True copies tensors into this process's
    own memory (the sender may then free or change its copy); clone=False gives views of the
    sender's memory, valid until the sender frees it. A file transfer is read only from a regular
    file inside `folder` (the job folder, when the sender is untrusted). With mask_key, the bytes
    are unmasked (BatchWriter) into this process's own memory (clone must be True). Raises
    TransferError."""
    if not isinstance(descriptor, dict):
        raise TransferError("transfer descriptor is not an object")
    if mask_key is not None and not clone:
        raise TransferError("masked inputs are received into this process's own memory only")
    transport = descriptor.get("transport")
    if transport == "raw_file":
        path = descriptor.get("path")
        if not isinstance(path, str) or not path:
            raise TransferError("raw file transfer without a path")
        data = _read_plain_file(path, folder)
        unmask = None if mask_key is None else {"key": mask_key, "position": 0}
        return _import_node(descriptor.get("tree"), lambda fields: _raw_tensor(fields, data, unmask), [0], 0)
    if transport == "cuda_ipc":
        device = sealed.Device(device)
        if device.type != "cuda":
            raise TransferError("a CUDA IPC transfer to a CPU worker")
        leaves = [0]
        unmask = None if mask_key is None else {"key": mask_key, "position": 0}
        value = _import_node(descriptor.get("tree"), lambda fields: _import_tensor(fields, device, unmask),
                             leaves, 0)
        if clone and unmask is None:
            value = map_tensors(value, sealed.copy)
        if clone:
            sealed.synchronize("cuda")
        return value
    raise TransferError(f"unknown transport {transport!r}")


def export_pool(device: Any) -> Any:
    """A CUDA memory pool of this process's own for tensors that will be exported (None on the
    CPU, or where torch has no MemPool)."""
    import torch

    if torch.device(device).type != "cuda" or not hasattr(torch.cuda, "MemPool"):
        return None
    return torch.cuda.MemPool()


class allocating_from:
    """Context manager: CUDA allocations inside it come from `pool` (a no-op for None)."""

    def __init__(self, pool: Any, device: Any):
        self.pool, self.device = pool, device
        self.context: Any = None

    def __enter__(self) -> None:
        if self.pool is not None:
            import torch

            # "cuda" without an index is the current device (use_mem_pool refuses an index-less device)
            self.context = torch.cuda.use_mem_pool(self.pool, torch.device(self.device).index)
            self.context.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self.context is not None:
            self.context.__exit__(*exc)


# ------------------------------------------------------------------------------------------
def _b64(data: bytes) -> str:
    return _b2a_base64(data, newline=False).decode("ascii")


def _scalar_node(value: Any) -> dict:
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": value if math.isfinite(value) else repr(value)}
    if value is None:
        return {"none": True}
    raise HostError(f"cannot transfer a {type(value).__module__}.{type(value).__qualname__}")


def _int(value: Any, what: str, low: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise TransferError(f"{what} is not an integer >= {low}")
    return value


def _bytes(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise TransferError(f"{what} is not a base64 string")
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except Exception:  # noqa: BLE001
        raise TransferError(f"{what} is not valid base64") from None


class _Mapping:
    """Another process's allocation, mapped here (dicebench_cuda.ipc_open) until the last tensor
    made from it is gone. The driver maps each handle once per process, so _mappings hands out the
    live mapping of a handle to every tensor that names it."""

    def __init__(self, handle: bytes, device_index: int):
        import dicebench_cuda

        self.device_index = device_index
        self.base, self.size_bytes = dicebench_cuda.ipc_open(handle, device_index)

    def bytes_at(self, offset: int, size: int, device: Any) -> Any:
        """A uint8 tensor over [offset, offset + size) of the allocation, holding this mapping."""
        return sealed.bytes_tensor(_DeviceBytes(self, self.base + offset, size), device)

    def __del__(self) -> None:
        try:
            import dicebench_cuda

            dicebench_cuda.ipc_close(self.base, self.device_index)
        except Exception:  # noqa: BLE001 - a sticky CUDA error ends the worker anyway; so does shutdown
            pass


class _DeviceBytes:
    """Bytes of a mapping as __cuda_array_interface__, which torch.as_tensor wraps without a copy
    and keeps alive (with the mapping) as long as the tensor's storage."""

    def __init__(self, mapping: _Mapping, pointer: int, size: int):
        self.mapping = mapping
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (pointer, False),
                                         "version": 3, "stream": None}


_mappings: "weakref.WeakValueDictionary[tuple, _Mapping]" = weakref.WeakValueDictionary()
# The last few mappings stay open after their tensors are gone: a timing loop receives every call's
# inputs (or outputs) in the same allocation, which is then mapped once, not once per call.
_recent: "collections.deque[_Mapping]" = collections.deque(maxlen=4)


def _mapping(handle: bytes, device_index: int) -> _Mapping:
    key = (handle, device_index)
    mapping = _mappings.get(key)
    if mapping is None:
        mapping = _Mapping(handle, device_index)
        _mappings[key] = mapping
    if not any(kept is mapping for kept in _recent):
        _recent.append(mapping)
    return mapping


def forget_mappings() -> None:
    """Closes the mappings no tensor uses any more (at the end of a job: a mapping keeps the
    sender's memory allocated, even after the sender has freed it or ended)."""
    _recent.clear()


def _import_tensor(fields: Any, device: Any, unmask: dict | None = None) -> Any:
    """A tensor of a cuda_ipc transfer, a view of the sender's memory, or (unmasked) a copy in this
    process's memory. Sealed calls only."""
    if not isinstance(fields, dict):
        raise TransferError("tensor node is not an object")
    dtype_name = fields.get("dtype")
    dtype = sealed.DTYPES.get(dtype_name) if isinstance(dtype_name, str) else None  # a JSON list is unhashable
    if dtype is None:
        raise TransferError(f"unsupported dtype {dtype_name!r}")
    shape, stride = fields.get("shape"), fields.get("stride")
    if not isinstance(shape, list) or not isinstance(stride, list) or len(shape) != len(stride) or len(shape) > 16:
        raise TransferError("shape and stride must be lists of the same length (at most 16)")
    shape = [_int(s, "shape entry") for s in shape]
    stride = [_int(s, "stride entry") for s in stride]
    offset = _int(fields.get("offset"), "offset")
    own_index = device.index if device.index is not None else sealed.current_cuda_device()
    if _int(fields.get("device"), "device") != own_index:
        raise TransferError(f"tensor on device {fields.get('device')}, this worker uses {own_index}")
    size_bytes = _int(fields.get("size_bytes"), "size_bytes")
    position = 0
    if unmask is not None:  # every tensor counts, as BatchWriter counts them
        position = unmask["position"]
        unmask["position"] += 1
    if size_bytes == 0:
        return sealed.empty(shape, dtype, device)
    itemsize = dtype.itemsize
    if size_bytes % itemsize:
        raise TransferError(f"a {dtype_name} storage of {size_bytes} bytes")
    offset_bytes = _int(fields.get("offset_bytes"), "offset_bytes")
    if offset_bytes % STORAGE_ALIGNMENT:  # a misaligned view would fault (sticky) in this process's kernels
        raise TransferError(f"a storage at offset {offset_bytes}, not a multiple of {STORAGE_ALIGNMENT} bytes")
    try:
        mapping = _mapping(_bytes(fields.get("handle"), "handle"), own_index)
    except TransferError:
        raise
    except Exception as error:  # noqa: BLE001 - a handle that does not open
        raise TransferError(f"cannot open shared {dtype_name} tensor {shape}: {str(error).splitlines()[0][:300]}") from None
    if offset_bytes + size_bytes > mapping.size_bytes:
        raise TransferError(f"a storage of {size_bytes} bytes at offset {offset_bytes} does not fit the shared "
                            f"allocation of {mapping.size_bytes} bytes")
    storage = mapping.bytes_at(offset_bytes, size_bytes, device)
    if unmask is not None:  # into this process's own memory, then unmasked there
        storage = sealed.copy(storage)
        sealed.xor_(storage, mask_stream(unmask["key"], position, size_bytes, device))
    try:  # as_strided refuses a view that reaches past the storage
        return sealed.typed(storage, dtype, shape, stride, offset)
    except Exception as error:  # noqa: BLE001
        raise TransferError(f"shape {shape}, stride {stride} and offset {offset} do not fit a {dtype_name} storage "
                            f"of {size_bytes // itemsize} elements: {str(error).splitlines()[0][:200]}") from None


def _raw_tensor(fields: Any, data: bytearray, unmask: dict | None) -> Any:
    """A tensor of a raw_file transfer: a view of its bytes at fields' offset in `data` (the file, read
    into this process's own memory), unmasked there with `unmask` (every tensor counts, as BatchWriter
    counts them). Sealed calls only."""
    if not isinstance(fields, dict):
        raise TransferError("tensor node is not an object")
    dtype_name = fields.get("dtype")
    dtype = sealed.DTYPES.get(dtype_name) if isinstance(dtype_name, str) else None  # a JSON list is unhashable
    if dtype is None:
        raise TransferError(f"unsupported dtype {dtype_name!r}")
    shape = fields.get("shape")
    if not isinstance(shape, list) or len(shape) > 16:
        raise TransferError("shape must be a list (at most 16 entries)")
    shape = [_int(s, "shape entry") for s in shape]
    offset, size = _int(fields.get("offset_bytes"), "offset_bytes"), _int(fields.get("size_bytes"), "size_bytes")
    if size != _prod(shape) * dtype.itemsize:
        raise TransferError(f"{size} bytes for a {fields['dtype']} tensor of shape {shape}")
    if offset + size > len(data):
        raise TransferError(f"{size} bytes at offset {offset} run past the file's {len(data)} bytes")
    position = 0
    if unmask is not None:
        position = unmask["position"]
        unmask["position"] += 1
    if not size:
        return sealed.empty(shape, dtype, "cpu")
    flat = sealed.bytes_tensor(data, count=size, offset=offset)
    if unmask is not None:
        sealed.xor_(flat, mask_stream(unmask["key"], position, size, "cpu"))
    return sealed.typed(flat, dtype, shape)


def _import_node(node: Any, read_tensor: Any, leaves: list, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise TransferError(f"tree nested deeper than {MAX_DEPTH}")
    if not isinstance(node, dict) or len(node) != 1:
        raise TransferError("tree node is not an object with one key")
    leaves[0] += 1
    if leaves[0] > MAX_LEAVES:
        raise TransferError(f"tree has more than {MAX_LEAVES} nodes")
    (kind, value), = node.items()
    if kind == "tensor":
        return read_tensor(value)
    if kind in ("list", "tuple"):
        if not isinstance(value, list):
            raise TransferError(f"{kind} node does not hold a list")
        items = [_import_node(v, read_tensor, leaves, depth + 1) for v in value]
        return items if kind == "list" else tuple(items)
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind == "float" and value in ("nan", "inf", "-inf"):
        return float(value)
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "none" and value is True:
        return None
    raise TransferError(f"bad tree node {kind!r}")
