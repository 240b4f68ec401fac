"""The worker protocol: framing and the one definition of every request and reply.

A frame is a 4-byte little-endian unsigned length followed by that many bytes of UTF-8 JSON holding
one object. Frames over MAX_FRAME_BYTES are a protocol error on both reading and writing. This
module is torch-free so that it can be imported (and tested) without the heavy runtime.

REQUESTS and REPLIES below are the field lists the C++ host must speak (see harness/PROTOCOL.md),
built from their one definition, core/spec/protocol.toml, through the generated dicebench_spec
(which the host's request structs come from too). validate_request() checks a decoded request
against them, fills in defaults, and returns a new dict; validate_reply() checks a reply the
worker is about to send (and what a Python client reads). Unknown fields are rejected, so a typo
on the host side fails loudly instead of being ignored.

Non-finite floats (NaN, +-Inf) are not valid JSON; write_frame() sends them as null.
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import dicebench_spec as _spec

PROTOCOL_VERSION = _spec.PROTOCOL_VERSION
MAX_FRAME_BYTES = _spec.MAX_FRAME_BYTES
_HEADER = struct.Struct("<I")

# The vocabularies (core/spec/vocabulary.toml): worker roles (toolchain builds one load_inline call
# with torch's toolchain for the host: toolchain.py); tolerance modes (compare.py; the first is the
# default); the mode both models run in (the first, train, KernelBench's, the default); the
# verdicts a comparison gives, and the error classes of a candidate's failed reply (the host takes
# any other name from a candidate as a protocol breach); a problem's degenerate traits.
ROLES = _spec.ROLES
TOLERANCE_MODES = _spec.TOLERANCE_MODES
MODEL_MODES = _spec.MODEL_MODES
VERDICTS = _spec.COMPARISON_VERDICTS
CANDIDATE_ERROR_CLASSES = ("", *_spec.CANDIDATE_FAILURE_VERDICTS)  # "": an ok reply's
PROBLEM_TRAITS = _spec.PROBLEM_TRAITS
# Seeds are non-negative 63-bit integers (they fit int64 on the host and torch.manual_seed).
MAX_SEED = _spec.MAX_SEED


class ProtocolError(Exception):
    """A frame or a message that does not follow the protocol.

    fatal is True when the byte stream can no longer be trusted to be in sync (a truncated frame,
    an oversized length); the worker then stops. A frame that was read whole but does not decode
    (bad UTF-8, bad JSON, not an object) leaves the stream in sync and is not fatal.
    """

    def __init__(self, message: str, *, fatal: bool = False):
        super().__init__(message)
        self.fatal = fatal


# --------------------------------------------------------------------------------------------
# Framing


def _read_exact(fd: int, count: int) -> bytes:
    chunks = []
    remaining = count
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, *, max_bytes: int = MAX_FRAME_BYTES) -> dict | None:
    """Read one frame from fd. Returns the decoded object, or None on a clean EOF (before a header).

    Raises ProtocolError on a truncated frame, an oversized length, or a body that is not one
    UTF-8 JSON object.
    """
    header = _read_exact(fd, _HEADER.size)
    if not header:
        return None
    if len(header) < _HEADER.size:
        raise ProtocolError(f"truncated frame header ({len(header)} of 4 bytes)", fatal=True)
    (length,) = _HEADER.unpack(header)
    if length > max_bytes:
        raise ProtocolError(f"frame of {length} bytes exceeds the limit of {max_bytes}", fatal=True)
    body = _read_exact(fd, length)
    if len(body) < length:
        raise ProtocolError(f"truncated frame body ({len(body)} of {length} bytes)", fatal=True)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ProtocolError(f"frame is not UTF-8: {error}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as error:
        raise ProtocolError(f"frame is not JSON: {error}") from None
    if not isinstance(obj, dict):
        raise ProtocolError(f"frame holds a JSON {type(obj).__name__}, not an object")
    return obj


def _finite(value: Any) -> Any:
    """A copy of value where non-finite floats are None (JSON has no NaN or Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def encode_frame(obj: Mapping[str, Any], *, max_bytes: int = MAX_FRAME_BYTES) -> bytes:
    body = json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")).encode("utf-8")
    if len(body) > max_bytes:
        raise ProtocolError(f"message of {len(body)} bytes exceeds the limit of {max_bytes}")
    return _HEADER.pack(len(body)) + body


def write_frame(fd: int, obj: Mapping[str, Any], *, max_bytes: int = MAX_FRAME_BYTES) -> None:
    """Write obj as one frame to fd (all of it, retrying short writes)."""
    data = memoryview(encode_frame(obj, max_bytes=max_bytes))
    while data:
        written = os.write(fd, data)
        data = data[written:]


# --------------------------------------------------------------------------------------------
# Field types


@dataclass(frozen=True)
class FieldType:
    """A JSON field type: a name for messages and a check returning an error text or None."""

    name: str
    check: Callable[[Any], str | None]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and not (
        isinstance(value, float) and not math.isfinite(value))


def _simple(name: str, predicate: Callable[[Any], bool]) -> FieldType:
    return FieldType(name, lambda v: None if predicate(v) else f"expected {name}")


STR = _simple("string", lambda v: isinstance(v, str))
NONEMPTY_STR = _simple("non-empty string", lambda v: isinstance(v, str) and v != "")
BOOL = _simple("boolean", lambda v: isinstance(v, bool))
INT = _simple("integer", _is_int)
NUMBER = _simple("number", _is_number)
OPT_NUMBER = _simple("number or null", lambda v: v is None or _is_number(v))
OBJECT = _simple("object", lambda v: isinstance(v, dict))
OPT_OBJECT = _simple("object or null", lambda v: v is None or isinstance(v, dict))


def int_range(low: int, high: int | None = None) -> FieldType:
    bounds = f">= {low}" if high is None else f"in [{low}, {high}]"
    return _simple(f"integer {bounds}",
                   lambda v: _is_int(v) and v >= low and (high is None or v <= high))


def positive_number() -> FieldType:
    return _simple("number > 0", lambda v: _is_number(v) and v > 0)


def one_of(*choices: str) -> FieldType:
    return _simple("one of " + ", ".join(repr(c) for c in choices),
                   lambda v: isinstance(v, str) and v in choices)


SEED = int_range(0, MAX_SEED)


@dataclass(frozen=True)
class Spec:
    """The fields of one message type: required ones, optional ones with defaults."""

    type: str
    role: str | None  # the worker role that serves this request; None: both, or a reply
    required: dict[str, FieldType] = field(default_factory=dict)
    optional: dict[str, tuple[FieldType, Any]] = field(default_factory=dict)
    # a nested object field validated with its own Spec (timing parameters, timing results)
    nested: dict[str, "Spec"] = field(default_factory=dict)


# A transfer descriptor (transfer.py):
# {"transport": "raw_file", "path": ..., "tree": ...} or {"transport": "cuda_ipc", "tree": ...};
# its contents are checked by the receiver.
TRANSFER = _simple("transfer descriptor", lambda v: isinstance(v, dict)
                   and v.get("transport") in ("raw_file", "cuda_ipc"))
OPT_TRANSFER = _simple("transfer descriptor or null", lambda v: v is None or TRANSFER.check(v) is None)
OPT_SEED = _simple("seed or null", lambda v: v is None or SEED.check(v) is None)

# A batch of timed calls the reference makes ahead (reference.batch): at most MAX_BATCH_CALLS, each
# {"trial", "seed", "outputs" (keep the reference's outputs: the call is checked), "mask_key"}.
MAX_BATCH_CALLS = _spec.MAX_BATCH_CALLS
BATCH_CALL_FIELDS = {"trial": int_range(0), "seed": SEED, "outputs": BOOL, "mask_key": SEED}


def _batch_calls_problem(value: Any) -> str | None:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_BATCH_CALLS:
        return f"expected a list of 1 to {MAX_BATCH_CALLS} calls"
    for index, call in enumerate(value):
        if not isinstance(call, dict) or set(call) != set(BATCH_CALL_FIELDS):
            return f"call {index}: expected an object with exactly {', '.join(BATCH_CALL_FIELDS)}"
        for name, ftype in BATCH_CALL_FIELDS.items():
            problem = ftype.check(call[name])
            if problem:
                return f"call {index}: field {name!r}: {problem}"
    return None


BATCH_CALLS = FieldType("list of batch calls", _batch_calls_problem)
TRANSFER_LIST = _simple("list of transfer descriptors", lambda v: isinstance(v, list)
                        and all(TRANSFER.check(x) is None for x in v))
LIST = _simple("list", lambda v: isinstance(v, list))

_NAMED_TYPES: dict[str, FieldType] = {
    "string": STR, "nonempty_string": NONEMPTY_STR, "bool": BOOL, "number?": OPT_NUMBER, "object": OBJECT,
    "object?": OPT_OBJECT, "list": LIST, "seed": SEED, "seed?": OPT_SEED, "transfer": TRANSFER,
    "transfer?": OPT_TRANSFER, "transfer_list": TRANSFER_LIST, "batch_calls": BATCH_CALLS,
    "trait_list": _simple("list of trait names", lambda v: isinstance(v, list) and all(x in PROBLEM_TRAITS for x in v)),
}


def _field_type(field: Mapping[str, Any]) -> FieldType:
    """The check of one field of the spec (dicebench_spec's descriptions of core/spec/protocol.toml)."""
    kind = field.get("type")
    if "enum" in field or "values" in field:
        names: tuple[str, ...] = tuple(field.get("values", ()))
        if "enum" in field:
            group = field.get("group")
            names += (_spec.VOCABULARY_GROUPS[(field["enum"], group)] if group else _spec.VOCABULARIES[field["enum"]])
        return one_of(*names)
    if kind == "int":
        return int_range(field["min"], field.get("max")) if "min" in field else INT
    if kind == "number":
        return positive_number() if field.get("positive") else NUMBER
    if kind == "seed_list":
        low, high = field["min_items"], field["max_items"]
        return _simple(f"list of {low} to {high} seeds", lambda v: isinstance(v, list) and low <= len(v) <= high
                       and all(SEED.check(x) is None for x in v))
    if kind in _NAMED_TYPES:
        return _NAMED_TYPES[kind]
    raise AssertionError(f"dicebench_spec names an unknown field type {kind!r}")


def _default(field: Mapping[str, Any]) -> Any:
    if "enum" in field and "default" not in field:
        return _spec.VOCABULARIES[field["enum"]][0]
    default = field["default"]
    return None if default == "null" and field.get("type", "").endswith("?") else default


def _spec_of(kind: str, role: str | None, fields: list[dict[str, Any]]) -> Spec:
    spec = Spec(kind, role)
    for described in fields:
        ftype = _field_type(described)
        if "default" in described or described.get("optional"):
            spec.optional[described["name"]] = (ftype, _default(described))
        else:
            spec.required[described["name"]] = ftype
        if "nested" in described:
            spec.nested[described["name"]] = _OBJECTS[described["nested"]]
    return spec


# Nested objects: timing results (dicebench_timing's summary, in reference.timed and candidate.timed),
# how a candidate's load_inline calls were compiled (candidate.loaded's compile), what the timed calls
# ran on the device (candidate.timed's profile; CUDA only).
_OBJECTS: dict[str, Spec] = {}
for _name, _fields in _spec.OBJECTS.items():
    _OBJECTS[_name] = _spec_of(_name, None, _fields)
TIMING_RESULT = _OBJECTS["timing"]
COMPILE_SUMMARY = _OBJECTS["compile"]
PROFILE = _OBJECTS["profile"]

REQUESTS: dict[str, Spec] = {kind: _spec_of(kind, m["role"], m["fields"]) for kind, m in _spec.REQUESTS.items()}
REPLIES: dict[str, Spec] = {kind: _spec_of(kind, None, m["fields"]) for kind, m in _spec.REPLIES.items()}


class ValidationError(ProtocolError):
    """A decoded message whose type or fields do not match its Spec."""


def _check_fields(spec: Spec, message: Mapping[str, Any], where: str) -> dict:
    result: dict[str, Any] = {}
    known = set(spec.required) | set(spec.optional) | {"type"}
    for name in message:
        if name not in known:
            raise ValidationError(f"{where}: unknown field {name!r}")
    for name, ftype in spec.required.items():
        if name not in message:
            raise ValidationError(f"{where}: missing field {name!r}")
        problem = ftype.check(message[name])
        if problem:
            raise ValidationError(f"{where}: field {name!r}: {problem}")
        result[name] = message[name]
    for name, (ftype, default) in spec.optional.items():
        if name in message:
            problem = ftype.check(message[name])
            if problem:
                raise ValidationError(f"{where}: field {name!r}: {problem}")
            result[name] = message[name]
        else:
            result[name] = json.loads(json.dumps(default))  # a fresh copy of mutable defaults
    for name, sub in spec.nested.items():
        if isinstance(result.get(name), dict):
            result[name] = _check_fields(sub, result[name], f"{where}.{name}")
    if "min_trials" in result and "max_trials" in result:
        if result["max_trials"] < result["min_trials"]:
            raise ValidationError(f"{where}: max_trials is less than min_trials")
    return result


def validate_request(message: Mapping[str, Any]) -> dict:
    """Check a decoded request; returns {"type": ..., fields with defaults filled}."""
    kind = message.get("type")
    if not isinstance(kind, str):
        raise ValidationError("request has no string field 'type'")
    spec = REQUESTS.get(kind)
    if spec is None:
        raise ValidationError(f"unknown request type {kind!r}")
    return {"type": kind, **_check_fields(spec, message, kind)}


def validate_reply(message: Mapping[str, Any]) -> dict:
    """Check a reply (with its "type"); returns a copy with defaults filled."""
    kind = message.get("type")
    if not isinstance(kind, str):
        raise ValidationError("reply has no string field 'type'")
    spec = REPLIES.get(kind)
    if spec is None:
        raise ValidationError(f"unknown reply type {kind!r}")
    return {"type": kind, **_check_fields(spec, message, kind)}


def request_role(kind: str) -> str | None:
    """The role that serves a request type (None: every role)."""
    return REQUESTS[kind].role


def error_reply(job: Any, message: str) -> dict:
    return {"type": "error", "job": job if isinstance(job, str) else "", "message": message}
