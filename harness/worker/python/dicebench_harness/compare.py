"""Comparing a candidate's outputs with the reference's: structure, shape, dtype, values.

compare(reference, candidate, tolerance_mode) returns
    {"verdict", "max_abs_diff", "mean_abs_diff", "margin", "message"}
with verdict one of "correct", "shape_mismatch", "dtype_mismatch", "output_mismatch".

Rules:
- Structure must match: a tensor against a tensor, a tuple or list against a tuple or list of the
  same length (element-wise, nested to any depth; tuple and list count as the same kind). Python
  numbers (bool, int, float, complex) are compared as 0-d tensors (torch.tensor(x), so a Python
  float is float32). A structure difference or a shape difference is "shape_mismatch"; a dtype
  difference is "dtype_mismatch". Anything else in the candidate's outputs (dicts, strings, None,
  sparse tensors) is "output_mismatch".
- Floating and complex values: NaN must sit exactly where the reference has NaN, +-Inf exactly
  where the reference has the same infinity; elsewhere |c - r| <= atol + rtol * |r| (torch.allclose
  semantics, computed in float64 / complex128 on the reference's device). "per_dtype" mode (the
  default): atol = rtol = 1e-4 for float32 and other float dtypes, 1e-2 for float16 and bfloat16.
  "uniform" mode: atol = rtol = 1e-2 for every float dtype. protocol.TOLERANCE_MODES lists them.
- Integer and bool values must be equal.
- max_abs_diff / mean_abs_diff: over every element where both sides are finite, across all
  outputs; None when shapes or dtypes differ (nothing was compared).
- margin: the worst element's |c - r| / (atol + rtol * |r|) across all outputs, so a comparison
  passes when margin <= 1 (a NaN or Inf out of place, or an unequal integer, makes it infinite,
  reported as None); 0 for equal integers; None when shapes or dtypes differ.
- The message names the output (output, output[1], output[0][2]) and the first failing element.

Large outputs are compared in chunks so the float64 copies stay bounded.
"""

from __future__ import annotations

import math
from typing import Any

from .protocol import TOLERANCE_MODES

CHUNK_ELEMENTS = 1 << 24

_NUMBER_TYPES = (bool, int, float, complex)


class _Mismatch(Exception):
    def __init__(self, verdict: str, message: str):
        super().__init__(message)
        self.verdict = verdict
        self.message = message


def tolerance_for(dtype: Any, mode: str) -> float:
    """atol (= rtol) for a dtype in a tolerance mode; 0.0 means exact equality."""
    import torch

    if mode not in TOLERANCE_MODES:
        raise ValueError(f"unknown tolerance mode {mode!r}")
    if not (dtype.is_floating_point or dtype.is_complex):
        return 0.0
    if mode == "uniform":
        return 1e-2
    if dtype in (torch.float16, torch.bfloat16):
        return 1e-2
    return 1e-4


def _path(parent: str, index: int) -> str:
    return f"{parent}[{index}]"


def find_unsupported(obj: Any, path: str = "output") -> str | None:
    """None when obj is a tensor, a Python number, or a (nested) tuple/list of those; otherwise a
    text naming the first thing that is not."""
    import torch

    if isinstance(obj, torch.Tensor):
        if obj.layout != torch.strided:
            return f"{path} is a {obj.layout} tensor, not a dense (strided) tensor"
        return None
    if isinstance(obj, _NUMBER_TYPES):
        return None
    if isinstance(obj, (tuple, list)):
        for index, item in enumerate(obj):
            problem = find_unsupported(item, _path(path, index))
            if problem:
                return problem
        return None
    return f"{path} is a {type(obj).__module__}.{type(obj).__qualname__}, not a tensor, number, tuple or list"


def _as_tensor(value: Any, path: str, side: str):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach()
    try:
        return torch.tensor(value)
    except (OverflowError, RuntimeError, TypeError) as error:
        raise _Mismatch("output_mismatch", f"{path}: the {side} number {value!r} is not representable "
                        f"as a tensor ({error})") from None


def _kind(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return f"tensor of shape {tuple(value.shape)}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


def _align(reference: Any, candidate: Any, path: str, pairs: list) -> None:
    if isinstance(reference, (tuple, list)):
        if not isinstance(candidate, (tuple, list)) or len(candidate) != len(reference):
            raise _Mismatch("shape_mismatch", f"{path}: the reference is a {_kind(reference)}, "
                            f"the candidate a {_kind(candidate)}")
        for index, (ref_item, cand_item) in enumerate(zip(reference, candidate)):
            _align(ref_item, cand_item, _path(path, index), pairs)
        return
    if isinstance(candidate, (tuple, list)):
        raise _Mismatch("shape_mismatch", f"{path}: the reference is a {_kind(reference)}, "
                        f"the candidate a {_kind(candidate)}")
    pairs.append((path, _as_tensor(reference, path, "reference"), _as_tensor(candidate, path, "candidate")))


def _unravel(flat_index: int, shape: tuple) -> tuple:
    index = []
    for size in reversed(shape):
        flat_index, rest = divmod(flat_index, size)
        index.append(rest)
    return tuple(reversed(index))


def _format_value(value: Any) -> str:
    if isinstance(value, complex):
        return repr(value)
    if isinstance(value, float):
        return f"{value:.8g}"
    return repr(value)


class _Stats:
    def __init__(self) -> None:
        self.max = 0.0
        self.sum = 0.0
        self.count = 0
        self.margin = 0.0


def _compare_values(path: str, ref, cand, mode: str, stats: _Stats) -> str | None:
    """Adds to stats; returns a failure message for the first failing element or None."""
    import torch

    dtype = ref.dtype
    tolerance = tolerance_for(dtype, mode)
    exact = tolerance == 0.0
    wide = torch.complex128 if dtype.is_complex else torch.float64
    ref_flat = ref.reshape(-1)
    cand_flat = cand.to(ref.device).reshape(-1)
    total = ref_flat.numel()
    failures = 0
    first: tuple[int, str] | None = None
    for start in range(0, total, CHUNK_ELEMENTS):
        r_raw = ref_flat[start:start + CHUNK_ELEMENTS]
        c_raw = cand_flat[start:start + CHUNK_ELEMENTS]
        r = r_raw.to(wide)
        c = c_raw.to(wide)
        if exact:
            both_finite = torch.ones_like(r_raw, dtype=torch.bool)
            diff = (r - c).abs()
            failing = r_raw != c_raw
            bad_nonfinite = torch.zeros_like(failing)
        else:
            r_fin = torch.isfinite(r)
            c_fin = torch.isfinite(c)
            both_finite = r_fin & c_fin
            both_nan = torch.isnan(r) & torch.isnan(c)
            bad_nonfinite = ~both_finite & ~both_nan & (r != c)
            diff = torch.where(both_finite, (r - c).abs(), torch.zeros((), dtype=torch.float64,
                                                                         device=r.device))
            allowed = tolerance + tolerance * r.abs()
            failing = bad_nonfinite | (both_finite & (diff > allowed))
            if bool(bad_nonfinite.any().item()):
                stats.margin = math.inf
            elif diff.numel():
                stats.margin = max(stats.margin, float((diff / allowed).max().item()))
        if diff.numel():
            finite_count = int(both_finite.sum().item())
            if finite_count:
                stats.max = max(stats.max, float(diff.max().item()))
                stats.sum += float(diff.sum().item())
                stats.count += finite_count
        chunk_failures = int(failing.sum().item())
        if exact and chunk_failures:
            stats.margin = math.inf
        if chunk_failures and first is None:
            position = int(torch.nonzero(failing)[0, 0].item())
            rv = r_raw[position].item()
            cv = c_raw[position].item()
            if bool(bad_nonfinite[position].item()):
                reason = (f"candidate {_format_value(cv)} where the reference has {_format_value(rv)} "
                          "(NaN and Inf must match the reference exactly)")
            elif exact:
                reason = f"candidate {_format_value(cv)}, reference {_format_value(rv)} (must be equal)"
            else:
                reason = (f"candidate {_format_value(cv)}, reference {_format_value(rv)}: "
                          f"|c - r| = {float(diff[position].item()):.3e} exceeds atol + rtol*|r| = "
                          f"{float(allowed[position].item()):.3e} (atol = rtol = {tolerance:g}, {mode})")
            first = (start + position, reason)
        failures += chunk_failures
    if first is None:
        return None
    element = _unravel(first[0], tuple(ref.shape))
    return (f"{path} element {list(element)}: {first[1]}; "
            f"{failures} of {total} elements fail")


def compare(reference: Any, candidate: Any, tolerance_mode: str = TOLERANCE_MODES[0]) -> dict:
    """Compare candidate outputs with reference outputs; see the module docstring."""
    import torch

    if tolerance_mode not in TOLERANCE_MODES:
        raise ValueError(f"unknown tolerance mode {tolerance_mode!r}")
    unsupported = find_unsupported(candidate)
    if unsupported:
        return _result("output_mismatch", None, None,
                       f"the candidate's outputs are not plain tensors: {unsupported}")
    unsupported = find_unsupported(reference)
    if unsupported:
        raise ValueError(f"the reference's outputs are not plain tensors: {unsupported}")
    pairs: list = []
    try:
        _align(reference, candidate, "output", pairs)
        for path, ref, cand in pairs:
            if tuple(ref.shape) != tuple(cand.shape):
                raise _Mismatch("shape_mismatch", f"{path}: shape {list(cand.shape)}, the reference "
                                f"has {list(ref.shape)}")
        for path, ref, cand in pairs:
            if ref.dtype != cand.dtype:
                raise _Mismatch("dtype_mismatch", f"{path}: dtype {cand.dtype}, the reference has "
                                f"{ref.dtype}")
    except _Mismatch as mismatch:
        return _result(mismatch.verdict, None, None, mismatch.message)
    stats = _Stats()
    first_failure = None
    with torch.no_grad():
        for path, ref, cand in pairs:
            failure = _compare_values(path, ref, cand, tolerance_mode, stats)
            if failure and first_failure is None:
                first_failure = failure
    mean = stats.sum / stats.count if stats.count else 0.0
    if first_failure:
        return _result("output_mismatch", stats.max, mean, first_failure, stats.margin)
    return _result("correct", stats.max, mean, "", stats.margin)


def _result(verdict: str, max_abs: float | None, mean_abs: float | None, message: str,
            margin: float | None = None) -> dict:
    def clean(x):
        return x if x is None or math.isfinite(x) else None

    return {"verdict": verdict, "max_abs_diff": clean(max_abs), "mean_abs_diff": clean(mean_abs),
            "margin": clean(margin), "message": message}


def passes(reference: Any, candidate: Any, tolerance_mode: str) -> bool:
    """Whether `candidate` would be judged correct against `reference` (same rules as compare)."""
    return compare(reference, candidate, tolerance_mode)["verdict"] == "correct"
