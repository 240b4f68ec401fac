"""The worker protocol: framing and the one definition of every request and reply.

A frame is a 4-byte little-endian unsigned length followed by that many bytes of UTF-8 JSON holding
one object. Frames over MAX_FRAME_BYTES are a protocol error on both reading and writing. This
module is torch-free so that it can be imported (and tested) without the heavy runtime.

REQUESTS and REPLIES below are the field lists the C++ host must speak (see harness/PROTOCOL.md).
validate_request() checks a decoded request against them, fills in defaults, and returns a new
dict; validate_reply() checks a reply the worker is about to send (and what a Python client reads).
Unknown fields are rejected, so a typo on the host side fails loudly instead of being ignored.

Non-finite floats (NaN, +-Inf) are not valid JSON; write_frame() sends them as null.
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

PROTOCOL_VERSION = 1
MAX_FRAME_BYTES = 64 * 1024 * 1024
_HEADER = struct.Struct("<I")

ROLES = ("reference", "candidate")
TOLERANCE_MODES = ("kernelbench", "compat")
# Models are put in eval() mode by default; "train" keeps nn.Module's default training mode, which
# is what KernelBench's own evaluator does (it never calls .eval()): it changes BatchNorm (batch
# statistics) and Dropout. Reference and candidate must be sent the same mode.
MODEL_MODES = ("eval", "train")
VERDICTS = ("correct", "shape_mismatch", "dtype_mismatch", "output_mismatch")
CANDIDATE_STAGES = ("load", "init", "run", "timing", "done")
CANDIDATE_ERROR_CLASSES = ("", "compile_failed", "runtime_error")
# Seeds are non-negative 63-bit integers (they fit int64 on the host and torch.manual_seed).
MAX_SEED = 2**63 - 1


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
STR_LIST = _simple("list of strings", lambda v: isinstance(v, list)
                   and all(isinstance(x, str) for x in v))
INT_LIST = _simple("list of integers", lambda v: isinstance(v, list) and all(_is_int(x) for x in v))
OBJECT = _simple("object", lambda v: isinstance(v, dict))
OPT_OBJECT = _simple("object or null", lambda v: v is None or isinstance(v, dict))
STR_MAP = _simple("object of strings", lambda v: isinstance(v, dict)
                  and all(isinstance(x, str) for x in v.values()))


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
SEED_LIST = _simple("non-empty list of integers in [0, 2^63-1]",
                    lambda v: isinstance(v, list) and len(v) > 0
                    and all(_is_int(x) and 0 <= x <= MAX_SEED for x in v))
TRIAL_LIST = _simple("list of integers >= 0",
                     lambda v: isinstance(v, list) and all(_is_int(x) and x >= 0 for x in v))
NONEMPTY_STR_LIST = _simple("non-empty list of strings", lambda v: isinstance(v, list)
                            and len(v) > 0 and all(isinstance(x, str) for x in v))


@dataclass(frozen=True)
class Spec:
    """The fields of one message type: required ones, optional ones with defaults."""

    type: str
    role: str | None  # the worker role that serves this request; None: both, or a reply
    required: dict[str, FieldType] = field(default_factory=dict)
    optional: dict[str, tuple[FieldType, Any]] = field(default_factory=dict)
    # a nested object field validated with its own Spec (timing parameters, timing results)
    nested: dict[str, "Spec"] = field(default_factory=dict)


# Timing parameters, nested in reference.time (as top-level fields) and candidate.run ("timing").
TIMING_PARAMS_REQUIRED = {
    "warmup": int_range(0),
    "min_trials": int_range(1),
    "max_trials": int_range(1),
    "budget_s": positive_number(),
}
TIMING_PARAMS_OPTIONAL = {"target_rel_ci": (positive_number(), 0.01)}

TIMING_PARAMS = Spec("timing_params", None, dict(TIMING_PARAMS_REQUIRED),
                     dict(TIMING_PARAMS_OPTIONAL))

# Timing results (timing.py's summary), nested in reference.timed and candidate.result.
TIMING_RESULT = Spec("timing", None, {
    "median_ms": NUMBER, "mean_ms": NUMBER, "std_ms": NUMBER, "min_ms": NUMBER, "max_ms": NUMBER,
    "p10_ms": NUMBER, "p90_ms": NUMBER, "trials": int_range(1), "warmup": int_range(0),
    "ci_rel": OPT_NUMBER,  # null when too few trials for a 95% interval (fewer than 6)
    "stop_reason": one_of("converged", "max_trials", "budget"),
    "timer": STR,
})

REQUESTS: dict[str, Spec] = {s.type: s for s in [
    Spec("reference.prepare", "reference", {
        "job": NONEMPTY_STR,
        "problem_source": STR,
        "device": NONEMPTY_STR,
        "init_seed": SEED,
        "input_seeds": SEED_LIST,
        "work_dir": NONEMPTY_STR,
    }, {
        "problem_name": (STR, "problem"),
        "tolerance": (one_of(*TOLERANCE_MODES), "kernelbench"),
        "model_mode": (one_of(*MODEL_MODES), "eval"),
    }),
    Spec("reference.compare", "reference", {
        "job": NONEMPTY_STR,
        "trial": int_range(0),
        "outputs_path": NONEMPTY_STR,
    }),
    Spec("reference.time", "reference", {"job": NONEMPTY_STR, **TIMING_PARAMS_REQUIRED},
         dict(TIMING_PARAMS_OPTIONAL)),
    Spec("reference.release", "reference", {"job": NONEMPTY_STR}),
    Spec("candidate.run", "candidate", {
        "job": NONEMPTY_STR,
        "candidate_source": STR,
        "device": NONEMPTY_STR,
        "init_seed": SEED,
        "init_inputs": NONEMPTY_STR,
        "inputs": NONEMPTY_STR_LIST,
        "outputs_dir": NONEMPTY_STR,
    }, {
        "timing": (OPT_OBJECT, None),  # TIMING_PARAMS, or null: do not time
        "timed_output_trials": (TRIAL_LIST, []),
        "model_mode": (one_of(*MODEL_MODES), "eval"),
    }, nested={"timing": TIMING_PARAMS}),
    Spec("shutdown", None, {}, {"job": (STR, "")}),
]}

REPLIES: dict[str, Spec] = {s.type: s for s in [
    Spec("hello", None, {
        "protocol": INT, "role": one_of(*ROLES), "pid": INT, "python": STR, "torch": STR,
        "device": STR, "device_name": STR, "timer": STR,
    }),
    Spec("error", None, {"job": STR, "message": STR}),
    Spec("reference.prepared", None, {
        "job": STR, "ok": BOOL,
        "error_class": one_of("", "reference_failed"), "message": STR, "traceback_tail": STR,
        "inputs": STR_LIST, "init_inputs": STR, "trials": int_range(0),
    }),
    Spec("reference.compared", None, {
        "job": STR, "trial": int_range(0), "verdict": one_of(*VERDICTS),
        "max_abs_diff": OPT_NUMBER, "mean_abs_diff": OPT_NUMBER, "message": STR,
    }),
    Spec("reference.timed", None, {"job": STR, "timing": OBJECT},
         nested={"timing": TIMING_RESULT}),
    Spec("reference.released", None, {"job": STR}),
    # Sent before candidate.result as the candidate gets past a stage ("loaded": compiled and
    # built; "ran": correctness outputs written), so that a later crash or timeout still tells
    # the host whether the candidate compiled.
    Spec("candidate.progress", None, {"job": STR, "stage": one_of("loaded", "ran")}),
    Spec("candidate.result", None, {
        "job": STR, "ok": BOOL, "stage": one_of(*CANDIDATE_STAGES),
        "error_class": one_of(*CANDIDATE_ERROR_CLASSES), "message": STR, "traceback_tail": STR,
        "outputs": STR_LIST, "timed_outputs": STR_MAP, "timing": OPT_OBJECT,
    }, nested={"timing": TIMING_RESULT}),
]}


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
