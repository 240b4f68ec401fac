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

# Checked by tests/results/test_vocabulary.cpp against the host's (harness/client/worker_process.hpp)
# and harness/PROTOCOL.md's title.
PROTOCOL_VERSION = 8
MAX_FRAME_BYTES = 64 * 1024 * 1024
_HEADER = struct.Struct("<I")

# toolchain: builds one load_inline call with torch's toolchain for the host (toolchain.py).
ROLES = ("reference", "candidate", "toolchain")
# How close a candidate's floating outputs must be (compare.py): "per_dtype", the default, allows
# 1e-4 for float32 and other float dtypes and 1e-2 for float16 and bfloat16; "uniform" allows 1e-2
# for every float dtype. The one definition on this side; the host's is harness/client/evaluator.hpp
# (kToleranceModes), which tests/host/test_vocabulary.cpp checks this list against.
TOLERANCE_MODES = ("per_dtype", "uniform")
# The mode both models run in: "train", the default, keeps nn.Module's default training mode, which
# is what KernelBench's own evaluator does (it never calls .eval()): BatchNorm uses batch statistics,
# Dropout drops; "eval" calls .eval() on both. Reference and candidate must be sent the same mode.
# The one definition on this side; the host's is harness/client/evaluator.hpp (kModelModes, the
# first the default), which tests/results/test_vocabulary.cpp checks this list against.
MODEL_MODES = ("train", "eval")
# The verdicts a comparison gives, and the error classes of a candidate's failed reply: the one
# definition is results/verdict.hpp (kComparisonVerdicts, kCandidateFailureVerdicts), which a test
# checks these against; the host takes any other name from a candidate as a protocol breach.
VERDICTS = ("correct", "shape_mismatch", "dtype_mismatch", "output_mismatch")
CANDIDATE_ERROR_CLASSES = ("", "compile_failed", "runtime_error")  # "": an ok reply's
# A problem's degenerate traits (reference.traits_judged), judged from its reference alone; the one
# definition is results/flags.hpp (kAllProblemTraits), which a test checks this list against.
PROBLEM_TRAITS = ("constant_output", "zeros_pass", "output_equals_input", "near_constant_output")
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


# Timing parameters, top-level fields of reference.time and candidate.time.
TIMING_PARAMS_REQUIRED = {
    "warmup": int_range(0),
    "min_trials": int_range(1),
    "max_trials": int_range(1),
    "budget_s": positive_number(),
}
# target_rel_ci: stop once the median's 95% interval lies within this fraction of it (the host's
# eval.timing_spread). warm_calls: an untimed call on fresh inputs of its own just before each timed
# trial (dicebench_timing.time_adaptive says when it is left out).
TIMING_PARAMS_OPTIONAL = {"target_rel_ci": (positive_number(), 0.02), "warm_calls": (BOOL, True)}

# Timing results (dicebench_timing's summary), nested in reference.timed and candidate.timed.
TIMING_RESULT = Spec("timing", None, {
    "median_ms": NUMBER, "mean_ms": NUMBER, "std_ms": NUMBER, "min_ms": NUMBER, "max_ms": NUMBER,
    "p10_ms": NUMBER, "p90_ms": NUMBER, "trials": int_range(1), "warmup": int_range(0),
    "warm_calls": int_range(0),  # untimed calls made just before timed trials (warm_calls)
    "ci_rel": OPT_NUMBER,  # null when too few trials for a 95% interval (fewer than 6)
    "stop_reason": one_of("converged", "max_trials", "budget"),
    "timer": STR,
})

# A transfer descriptor (transfer.py):
# {"transport": "raw_file", "path": ..., "tree": ...} or {"transport": "cuda_ipc", "tree": ...};
# its contents are checked by the receiver.
TRANSFER = _simple("transfer descriptor", lambda v: isinstance(v, dict)
                   and v.get("transport") in ("raw_file", "cuda_ipc"))
OPT_TRANSFER = _simple("transfer descriptor or null", lambda v: v is None or TRANSFER.check(v) is None)
FAILURE_FIELDS = {"ok": BOOL, "message": STR, "traceback_tail": STR}
OPT_SEED = _simple("seed or null", lambda v: v is None or SEED.check(v) is None)

# A batch of timed calls the reference makes ahead (reference.batch): at most MAX_BATCH_CALLS, each
# {"trial", "seed", "outputs" (keep the reference's outputs: the call is checked), "mask_key"}.
MAX_BATCH_CALLS = 256
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

REQUESTS: dict[str, Spec] = {s.type: s for s in [
    Spec("reference.prepare", "reference", {
        "job": NONEMPTY_STR,
        "problem_source": STR,
        "device": NONEMPTY_STR,
        "init_seed": SEED,
        "work_dir": NONEMPTY_STR,
    }, {
        "problem_name": (STR, "problem"),
        "tolerance": (one_of(*TOLERANCE_MODES), TOLERANCE_MODES[0]),
        "model_mode": (one_of(*MODEL_MODES), MODEL_MODES[0]),
    }),
    # Makes trial `trial`'s inputs from `seed`, runs the reference on its own copy and keeps the
    # outputs unless `outputs` is false (dropping the previous trial's), and exports the inputs.
    Spec("reference.trial", "reference", {"job": NONEMPTY_STR, "trial": int_range(0), "seed": SEED},
         {"outputs": (BOOL, True)}),
    # Makes the inputs of a batch of upcoming timed calls in one request, as reference.trial does one
    # trial's: for each call its inputs from its seed, the reference's outputs kept where `outputs`
    # (a checked call), then a copy of the inputs exported. The calls that fit `budget_bytes` (and a
    # share of the device's free memory) are made, in order, at least one. Where more than one is
    # made, each call's exported bytes are masked with a stream drawn from its mask_key, which the
    # host hands the candidate with that call only (transfer.py). Drops earlier trials and batches.
    Spec("reference.batch", "reference", {"job": NONEMPTY_STR, "calls": BATCH_CALLS,
                                          "budget_bytes": int_range(1)}),
    Spec("reference.compare", "reference", {
        "job": NONEMPTY_STR,
        "trial": int_range(0),
        "outputs": TRANSFER,
    }),
    # Times the reference, eager or torch.compile'd, on fresh inputs before every call (from seeds
    # derived from `seed`), as the candidate is timed.
    Spec("reference.time", "reference", {"job": NONEMPTY_STR, "seed": SEED, **TIMING_PARAMS_REQUIRED},
         {**TIMING_PARAMS_OPTIONAL, "method": (one_of("eager", "compile"), "eager")}),
    # Judges the problem's degenerate traits from the reference alone, on inputs drawn from `seeds`.
    Spec("reference.traits", "reference", {"job": NONEMPTY_STR,
                                           "seeds": _simple("list of 2 to 16 seeds", lambda v: isinstance(v, list)
                                                            and 2 <= len(v) <= 16
                                                            and all(SEED.check(x) is None for x in v))}),
    # Measures the device's memory bandwidth (a device-to-device copy, best of several).
    Spec("reference.bandwidth", "reference", {"job": STR}),
    Spec("reference.release", "reference", {"job": NONEMPTY_STR}),
    # A candidate worker serves one job: load, then init, then forward and time in any order.
    Spec("candidate.load", "candidate", {
        "job": NONEMPTY_STR,
        "candidate_source": STR,
        "device": NONEMPTY_STR,
        "work_dir": NONEMPTY_STR,  # the job folder: the candidate's source file goes there
    }, {
        # {"cache_dir": ..., "arch": "sm_90", "service": true}: compile load_inline calls on the
        # NVRTC fast path; with service, by asking the host (candidate.compile), never in-process.
        "fastpath": (OPT_OBJECT, None),
        # {"service": true}: load_inline calls that take torch's toolchain (the fast path declined
        # them, or it is off) are built by the host (candidate.toolchain), outside this process.
        "toolchain": (OPT_OBJECT, None),
    }),
    Spec("candidate.init", "candidate", {
        "job": NONEMPTY_STR,
        "init_seed": SEED,
        "init_inputs": NONEMPTY_STR,
    }, {"model_mode": (one_of(*MODEL_MODES), MODEL_MODES[0])}),
    Spec("candidate.forward", "candidate", {
        "job": NONEMPTY_STR,
        "trial": int_range(0),
        "inputs": TRANSFER,
        "outputs_path": NONEMPTY_STR,  # where a file transfer writes the outputs
    }, {"fresh_placement": (BOOL, False)}),
    # Times forward on fresh inputs for every call: `inputs` are the first call's; after each call the
    # worker sends candidate.call_done and the host answers timing.next (the next call's inputs) or
    # timing.stop. `outputs_path` is where a file transfer writes each call's outputs.
    # `mask_key` (here and in timing.next): the key of the mask over that call's exported inputs, null
    # when they are not masked. `fresh_placement` (here, in timing.next and in candidate.forward): move
    # that call's inputs where no input of the job has been (placement.py).
    Spec("candidate.time", "candidate", {"job": NONEMPTY_STR, "inputs": TRANSFER, "outputs_path": NONEMPTY_STR,
                                         **TIMING_PARAMS_REQUIRED},
         {**TIMING_PARAMS_OPTIONAL, "mask_key": (OPT_SEED, None), "fresh_placement": (BOOL, False)}),
    Spec("shutdown", None, {}, {"job": (STR, "")}),
    # The host's answer to a candidate.compile (read by the candidate inside candidate.load, not by
    # the request loop): the outcome of compiling that load_inline call in the trusted compile step.
    Spec("compile.result", "candidate", {"job": STR, "outcome": OBJECT}),
    # The host's answer to a candidate.toolchain: {ok, entry_dir, module_name, message, cache_hit,
    # queued_seconds, build_seconds}; ok: import module_name from entry_dir, else raise message.
    Spec("toolchain.result", "candidate", {"job": STR, "outcome": OBJECT}),
    # What a toolchain worker's builds depend on besides the call (part of the host's cache key).
    Spec("toolchain.describe", "toolchain", {"job": STR}),
    # Builds `call` ({"arguments": load_inline's, "environment": the BUILD_ENVIRONMENT variables})
    # into build_dir with torch's toolchain, importing nothing.
    Spec("toolchain.build", "toolchain", {"job": NONEMPTY_STR, "build_dir": NONEMPTY_STR, "call": OBJECT}),
    # The host's answers to a candidate.call_done (read inside candidate.time): the inputs of call
    # `call` (a timed or warm-up call while the loop goes on, else one more untimed checked call),
    # or the end of timing.
    Spec("timing.next", "candidate", {"job": STR, "call": int_range(0), "inputs": TRANSFER},
         {"mask_key": (OPT_SEED, None), "fresh_placement": (BOOL, False)}),
    Spec("timing.stop", "candidate", {"job": STR}),
]}

# Every reply of a candidate worker (candidate.loaded, .ready, .outputs, .timed) carries
# fastpath_calls: calls of functions the fast path built, in its process so far; a failure before
# the first is not re-judged with torch's toolchain.
# How a candidate's load_inline calls were compiled (candidate.loaded's "compile").
COMPILE_SUMMARY = Spec("compile", None, {
    "path": one_of("nvrtc", "fallback", "mixed", "none"), "reason": STR, "seconds": NUMBER,
    "log": STR, "records": _simple("list", lambda v: isinstance(v, list)),
})

# What the timed calls ran on the device (candidate.timed's "profile"; CUDA only).
PROFILE = Spec("profile", None, {
    "busy_ms": NUMBER, "host_ms": NUMBER, "call_host_ms": NUMBER, "launch_latency_ms": NUMBER,
    "span_ms": NUMBER, "candidate_share": NUMBER,
    "kernels": _simple("list", lambda v: isinstance(v, list)),
})

REPLIES: dict[str, Spec] = {s.type: s for s in [
    Spec("hello", None, {
        "protocol": INT, "role": one_of(*ROLES), "pid": INT, "python": STR, "torch": STR,
        "device": STR, "device_name": STR, "timer": STR,
    }),
    Spec("error", None, {"job": STR, "message": STR}),
    Spec("reference.prepared", None, {
        "job": STR, **FAILURE_FIELDS, "error_class": one_of("", "reference_failed"),
        "init_inputs": STR,
    }),
    # input_bytes / output_bytes: the tensors' sizes (output_bytes 0 when no outputs were computed).
    Spec("reference.trial_ready", None, {
        "job": STR, "trial": int_range(0), **FAILURE_FIELDS,
        "error_class": one_of("", "reference_failed"), "inputs": OPT_TRANSFER,
        "input_bytes": int_range(0), "output_bytes": int_range(0),
    }),
    # made: how many of the batch's calls were made (the first `made`, at least one when ok); inputs:
    # their descriptors in order; masked: whether their bytes are masked (more than one made);
    # input_bytes / output_bytes: one call's largest, as in reference.trial_ready.
    Spec("reference.batch_ready", None, {
        "job": STR, **FAILURE_FIELDS, "error_class": one_of("", "reference_failed"),
        "made": int_range(0), "inputs": TRANSFER_LIST, "masked": BOOL,
        "input_bytes": int_range(0), "output_bytes": int_range(0),
    }),
    # margin: the worst element's |c - r| / (atol + rtol * |r|) (null when not finite or nothing
    # was compared element by element).
    Spec("reference.compared", None, {
        "job": STR, "trial": int_range(0), "verdict": one_of(*VERDICTS),
        "max_abs_diff": OPT_NUMBER, "mean_abs_diff": OPT_NUMBER, "margin": OPT_NUMBER, "message": STR,
    }),
    Spec("reference.timed", None, {"job": STR, "timing": OBJECT},
         nested={"timing": TIMING_RESULT}),
    Spec("reference.traits_judged", None, {
        "job": STR, **FAILURE_FIELDS,
        "traits": _simple("list of trait names", lambda v: isinstance(v, list)
                          and all(x in PROBLEM_TRAITS for x in v)),
        "details": OBJECT,
    }),
    Spec("reference.bandwidth_measured", None, {
        "job": STR, "bytes_per_second": NUMBER, "method": STR,
    }),
    Spec("reference.released", None, {"job": STR}),
    # Sent by a candidate during candidate.load, for each load_inline call the fast path takes:
    # the host compiles it (the only writer of the compile cache) and answers with compile.result.
    Spec("candidate.compile", None, {"job": STR, "request": OBJECT}),
    # Sent by a candidate for each load_inline call that takes torch's toolchain, when its load
    # request offered the service: the host builds it (toolchain.py) and answers toolchain.result.
    Spec("candidate.toolchain", None, {"job": STR, "request": OBJECT}),
    Spec("toolchain.described", None, {"job": STR, "fingerprint": OBJECT}),
    # ok: module_file (in build_dir) was built; else message is the error torch's toolchain raised.
    Spec("toolchain.built", None, {"job": STR, "ok": BOOL, "message": STR, "module_file": STR, "seconds": NUMBER}),
    Spec("candidate.loaded", None, {
        "job": STR, **FAILURE_FIELDS, "error_class": one_of(*CANDIDATE_ERROR_CLASSES),
        "compile": OBJECT, "fastpath_calls": int_range(0),
    }, nested={"compile": COMPILE_SUMMARY}),
    Spec("candidate.ready", None, {
        "job": STR, **FAILURE_FIELDS, "error_class": one_of(*CANDIDATE_ERROR_CLASSES), "fastpath_calls": int_range(0),
    }),
    # aliases_input: an output shares storage with one of the inputs it was given. jit: the kernels
    # a JIT DSL (Triton) compiled in the candidate's process so far, {"count", "seconds",
    # "compiles"} (also in candidate.timed), failed or not.
    Spec("candidate.outputs", None, {
        "job": STR, "trial": int_range(0), **FAILURE_FIELDS,
        "error_class": one_of(*CANDIDATE_ERROR_CLASSES), "outputs": OPT_TRANSFER, "fastpath_calls": int_range(0),
        "aliases_input": BOOL, "jit": OBJECT,
    }),
    # Sent by a candidate during candidate.time after every call (warm-up, timed or extra): that
    # call's outputs, and whether its timing loop wants another call (more).
    Spec("candidate.call_done", None, {
        "job": STR, "call": int_range(0), "outputs": TRANSFER, "more": BOOL,
    }),
    # stopped: the host ended timing early (a checked call failed); timing is then null.
    Spec("candidate.timed", None, {
        "job": STR, **FAILURE_FIELDS, "error_class": one_of(*CANDIDATE_ERROR_CLASSES), "fastpath_calls": int_range(0),
        "timing": OPT_OBJECT, "profile": OPT_OBJECT, "calls": int_range(0), "stopped": BOOL, "jit": OBJECT,
    }, nested={"timing": TIMING_RESULT, "profile": PROFILE}),
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
