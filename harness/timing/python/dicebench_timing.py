"""Adaptive timing of a callable: warm-up, then trials until the median is known well enough.

time_adaptive(fn, warmup=..., min_trials=..., max_trials=..., budget_s=..., target_rel_ci=0.02,
timer=..., clock=..., warm_calls=False) runs `warmup` untimed-for-the-result calls, then timed
trials, and after each trial applies the stop rule, in this order:
1. trials == max_trials                                   -> stop_reason "max_trials"
2. the budget is spent (clock() - start >= budget_s; the budget counts warm-up too and bounds the
   whole call site, so a 500 ms kernel does not take a minute; it may cut min_trials short, but at
   least one trial always runs)                           -> stop_reason "budget"
3. trials >= min_trials and ci_rel <= target_rel_ci       -> stop_reason "converged"
Warm-up also stops early once the budget is spent (after at least one warm-up call). Automatic
garbage collection is off for the whole loop, calls included, and restored after it (as timeit
does): a collection pause would land in whichever call allocates past the threshold.

With warm_calls, each timed trial is preceded by one untimed call of its own (fn alone, no timer,
with before_each and after_each like any call): the harness's work between calls (handing over
outputs and fresh inputs) leaves the call's path cold, which a host-bound call of a few tens of
microseconds pays for in its time. It is left out while the trials so far have a median of
WARM_CALL_MAX_MS or more: a cold path costs tens of microseconds, under 1% of such a call, and a
warm call would halve the trials the budget allows. The summary counts them (warm_calls).

target_rel_ci is what the host calls eval.timing_spread; 0.02 by default (the host's default too):
the median's 95% interval within +-2% keeps a speedup's, the ratio of two such medians, within
about +-3%, under the 5% that `dicebench compare` takes for a change; 0.01 is rarely reached on
fresh inputs (their contents and the L2 flush move a call's time by a percent or two), so the
budget was nearly always spent.

The confidence interval of the median is distribution-free, from order statistics: with n sorted
samples x(1) <= ... <= x(n), the number of samples below the true median is Binomial(n, 1/2), so
[x(j), x(n+1-j)] covers the median with probability 1 - 2 * P(B <= j-1). j is the largest rank
with P(B <= j-1) <= 0.025 (exact integer arithmetic), giving coverage >= 95%. Fewer than 6 samples
admit no such interval (ci_rel is then None and the rule cannot converge).
ci_rel = max(median - x(j), x(n+1-j) - median) / median: both ends lie within ci_rel of the median.

Timers are pluggable: a timer is a function taking the callable and returning one trial's duration
in milliseconds. cpu_timer() uses time.perf_counter around the call. CudaTimer synchronises the
device before and after the call with perf_counter around it, and flushes L2 before each trial by
writing a 256 MiB scratch buffer (allocated once); CuptiTimer (the worker's timer on CUDA) times
from CUPTI's records instead. The summary: median_ms, mean_ms, std_ms (sample, n-1), min_ms, max_ms, p10_ms, p90_ms
(linear interpolation between order statistics), trials, warmup, warm_calls, ci_rel, stop_reason,
timer.
"""

from __future__ import annotations

import functools
import gc
import math
import time
from typing import Any, Callable, Protocol, cast

Timer = Callable[[Callable[[], Any]], float]


class NamedTimer(Protocol):
    """A Timer with a name, as timer_for_device gives: the name keys cached baselines."""

    name: str

    def __call__(self, fn: Callable[[], Any], /) -> float: ...


L2_FLUSH_BYTES = 256 * 1024 * 1024
WARM_CALL_MAX_MS = 5.0  # no warm calls once the trials' median reaches this (module docstring)


# The clock, bound when this module is imported (before any candidate code runs): a candidate that
# patches time.perf_counter does not reach the timers or the budget.
_perf_counter = time.perf_counter
_gc_isenabled, _gc_enable, _gc_disable = gc.isenabled, gc.enable, gc.disable


def cpu_timer(fn: Callable[[], Any]) -> float:
    start = _perf_counter()
    fn()
    return (_perf_counter() - start) * 1e3


cpu_timer.name = "cpu_perf_counter"  # type: ignore[attr-defined]


class CudaTimer:
    """Host wall time around a device-wide synchronize, after an L2 flush (see module docstring)."""

    name = "cuda_sync_perf_counter"

    def __init__(self, device: Any, flush_bytes: int = L2_FLUSH_BYTES):
        import torch

        # torch's own device synchronize, bound before any candidate code runs (a candidate may patch
        # torch.cuda.synchronize, or the torch._C attribute it calls); it waits for the current device.
        self._synchronize = torch._C._cuda_synchronize
        self._fill = torch._C.TensorBase.fill_
        self._device = torch.device(device)
        self._scratch = torch.empty(flush_bytes // 4, dtype=torch.int32, device=self._device)

    def __call__(self, fn: Callable[[], Any]) -> float:
        self._fill(self._scratch, 1)  # evicts whatever the previous trial left in L2
        self._synchronize()
        start = _perf_counter()
        fn()
        self._synchronize()
        return (_perf_counter() - start) * 1e3


TRIAL_FIGURES = ("runtime_ms", "span_ms", "busy_ms", "host_ms", "call_host_ms", "launch_latency_ms")


class CuptiTimer:
    """CUPTI activity records (the dicebench_cuda module). A call's time is its `runtime_ms`: the
    longer of its device span (first start to last end of the kernels, copies and sets it put on
    the device, on any stream) and the host's own time in the call; what the call costs each time
    in a steady stream of calls (harness/timing/README.md says why not from the harness's start).
    The L2 is flushed before each trial. The recorder's methods are bound here, before any
    candidate code runs.

    Each call appends to `trials`: runtime_ms, span_ms, busy_ms, host_ms, call_host_ms,
    launch_latency_ms, memcpy/memset counts and ms, and (for the latest KEEP_KERNELS calls only,
    to bound memory) its kernel records."""

    name = "cupti_runtime"
    KEEP_KERNELS = 20

    def __init__(self, device: Any, flush_bytes: int = L2_FLUSH_BYTES):
        import torch
        import dicebench_cuda  # after torch, so both share torch's libcupti and libcudart

        self._device = torch.device(device)
        self._scratch = torch.empty(flush_bytes // 4, dtype=torch.int32, device=self._device)
        self._fill = torch._C.TensorBase.fill_  # not torch.Tensor's, which a candidate may patch
        recorder = dicebench_cuda.Recorder()
        self._begin, self._end, self._cancel = recorder.begin, recorder.end, recorder.cancel
        self.trials: list[dict] = []

    def reset(self) -> None:
        self.trials = []

    def __call__(self, fn: Callable[[], Any]) -> float:
        self._fill(self._scratch, 1)  # begin() waits for it, so the flush is never counted
        start = self._begin()
        try:
            fn()
        except BaseException:
            self._cancel()
            raise
        record = self._end()
        if record["begin_ns"] != start or record["dropped"] or record["incomplete"]:
            raise RuntimeError("CUPTI timing was interfered with or lost records")
        trial = {key: record[key] for key in TRIAL_FIGURES}
        for kind in ("memcpy", "memset"):
            trial[kind + "_count"] = len(record[kind])
            trial[kind + "_ms"] = sum(r["end_ns"] - r["start_ns"] for r in record[kind]) / 1e6
        trial["kernels"] = record["kernels"]
        if len(self.trials) >= self.KEEP_KERNELS:
            self.trials[-self.KEEP_KERNELS].pop("kernels", None)
        self.trials.append(trial)
        return record["runtime_ms"]


_cuda_timers: dict[str, Any] = {}


def timer_for_device(device: Any) -> NamedTimer:
    """cpu_timer for the CPU; per CUDA device a CuptiTimer, or a CudaTimer where the dicebench_cuda
    module cannot be imported (its scratch buffer is kept)."""
    import torch

    parsed = torch.device(device)
    if parsed.type == "cuda":
        key = str(parsed)
        if key not in _cuda_timers:
            try:
                _cuda_timers[key] = CuptiTimer(parsed)
            except ImportError:
                _cuda_timers[key] = CudaTimer(parsed)
        return _cuda_timers[key]
    return cast(NamedTimer, cpu_timer)  # named above


@functools.lru_cache(maxsize=4096)
def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int] | None:
    """1-based ranks (j, n+1-j) of the order statistics bounding the median's CI, or None when n is
    too small for the requested confidence."""
    if n < 1:
        return None
    alpha_half = (1.0 - confidence) / 2.0
    # Compare sum_{i<j} C(n,i) <= alpha_half * 2^n exactly: alpha_half as a fraction of 10^9.
    scale = 10**9
    limit = round(alpha_half * scale) * (1 << n)
    cumulative = 0
    term = 1  # C(n, 0)
    j = 0
    for i in range(0, n // 2 + 1):
        # cumulative + term = sum_{k<=i} C(n,k); rank j = i+1 is allowed if that stays within limit
        if (cumulative + term) * scale > limit:
            break
        cumulative += term
        j = i + 1
        term = term * (n - i) // (i + 1)
    if j < 1:
        return None
    return j, n + 1 - j


def _quantile(sorted_values: list[float], q: float) -> float:
    if len(sorted_values) == 1:
        return sorted_values[0]
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    weight = position - low
    return sorted_values[low] * (1 - weight) + sorted_values[high] * weight


def median_ci_rel(sorted_values: list[float]) -> float | None:
    ranks = median_ci_ranks(len(sorted_values))
    if ranks is None:
        return None
    median = _quantile(sorted_values, 0.5)
    if median <= 0:
        return None
    low, high = sorted_values[ranks[0] - 1], sorted_values[ranks[1] - 1]
    return max(median - low, high - median) / median


def summarize(samples_ms: list[float]) -> dict:
    values = sorted(samples_ms)
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return {
        "median_ms": _quantile(values, 0.5),
        "mean_ms": mean,
        "std_ms": std,
        "min_ms": values[0],
        "max_ms": values[-1],
        "p10_ms": _quantile(values, 0.10),
        "p90_ms": _quantile(values, 0.90),
        "trials": n,
        "ci_rel": median_ci_rel(values),
    }


def time_adaptive(fn: Callable[[], Any], *, warmup: int, min_trials: int, max_trials: int,
                  budget_s: float, target_rel_ci: float = 0.02, timer: Timer = cpu_timer,
                  clock: Callable[[], float] = _perf_counter,
                  before_each: Callable[[], None] | None = None,
                  after_each: Callable[[bool], None] | None = None,
                  warm_calls: bool = False) -> dict:
    """Time fn as the module docstring describes. before_each (if given) runs before every call,
    warm-up and warm calls included, outside the timed region (the harness hands over fresh inputs
    and re-applies its numeric settings); after_each(more) runs after every call, outside it, told
    whether another call follows (the harness hands the call's outputs over for checking). Both
    count against the budget, as the calls' own time does."""
    if min_trials < 1 or max_trials < min_trials or warmup < 0 or budget_s <= 0:
        raise ValueError("need warmup >= 0, 1 <= min_trials <= max_trials, budget_s > 0")
    if hasattr(timer, "reset"):
        timer.reset()  # a timer that keeps per-call records keeps this call site's only
    collecting = _gc_isenabled()
    _gc_disable()  # no collection pauses inside timed calls, as timeit does; restored on the way out
    try:
        return _time_calls(fn, warmup, min_trials, max_trials, budget_s, target_rel_ci, timer, clock, before_each,
                           after_each, warm_calls)
    finally:
        if collecting:
            _gc_enable()


def _time_calls(fn: Callable[[], Any], warmup: int, min_trials: int, max_trials: int, budget_s: float,
                target_rel_ci: float, timer: Timer, clock: Callable[[], float],
                before_each: Callable[[], None] | None, after_each: Callable[[bool], None] | None,
                warm_calls: bool) -> dict:
    start = clock()

    def spent() -> bool:
        return clock() - start >= budget_s

    warmups_done = 0
    for _ in range(warmup):
        if warmups_done >= 1 and spent():
            break
        if before_each:
            before_each()
        timer(fn)
        warmups_done += 1
        if after_each:
            after_each(True)  # at least one timed trial follows

    samples: list[float] = []
    sorted_samples: list[float] = []
    stop_reason = None
    warm_done = 0
    while stop_reason is None:
        if warm_calls and (not sorted_samples or _quantile(sorted_samples, 0.5) < WARM_CALL_MAX_MS):
            if before_each:
                before_each()
            fn()
            warm_done += 1
            if after_each:
                after_each(True)  # the timed trial follows
        if before_each:
            before_each()
        duration = float(timer(fn))
        samples.append(duration)
        _insort(sorted_samples, duration)
        n = len(samples)
        if n >= max_trials:
            stop_reason = "max_trials"
        elif spent():
            stop_reason = "budget"
        elif n >= min_trials:
            ci = median_ci_rel(sorted_samples)
            if ci is not None and ci <= target_rel_ci:
                stop_reason = "converged"
        if after_each:
            after_each(stop_reason is None)
    summary = summarize(samples)
    summary["warmup"] = warmups_done
    summary["warm_calls"] = warm_done
    summary["stop_reason"] = stop_reason
    summary["timer"] = getattr(timer, "name", getattr(timer, "__name__", type(timer).__name__))
    return summary


def _insort(values: list[float], value: float) -> None:
    import bisect

    bisect.insort(values, value)
