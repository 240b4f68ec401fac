"""The candidate role: loads one untrusted candidate, builds ModelNew, runs it on the inputs the host
hands it trial by trial, and times it. A candidate worker serves one job, in this order:

- candidate.load: execute the problem's source, then the candidate's, in one module namespace
  (loading.py), as KernelBench's eval does, and find ModelNew (the candidate's own). load_inline
  calls compile on the NVRTC fast path when the request asks for it (dicebench_fastpath, installed
  before any candidate code runs), else with torch's toolchain; every call is recorded (compile
  path, reason, seconds, the kernels it defines, the compiler's error). A SyntaxError or a failed
  extension build (classify_load_error) is "compile_failed"; anything else is "runtime_error". The
  problem's source failing here, where the reference's worker built it (this worker's sandbox
  differs), is a "runtime_error" whose message says so: this worker's replies are the candidate's
  to rewrite once its code runs, so the host cannot take one that blames the problem as the
  harness's error (a candidate could end the run with it). A problem that fails in the reference's
  worker is the harness's error there, as before.
- candidate.init: init inputs from the file the reference wrote (weights_only=True, mapped to the
  device); seed_everything(init_seed); ModelNew(*init_inputs).to(device), then .eval() or .train()
  as model_mode says (the mode the reference was built in).
- candidate.forward (any number): the trial's inputs received into this process's own memory
  (transfer.py), forward under the harness numerics, device synchronised, outputs checked to be
  plain (check_plain_outputs: exactly torch.Tensor, dense, on this worker's device, or Python
  numbers, in (nested) tuples or lists; a tensor subclass, whose work may be deferred until its
  values are read, is a runtime_error naming its type), copied (CUDA) and exported back; the reply
  says whether an output shares storage with an input. The previous trial's exported outputs are
  released first. From forward's return to the export, only calls bound before the candidate
  loaded touch the outputs (sealed.py), so work it defers to a patched synchronize, copy or save
  never reaches them.
- candidate.time: forward timed (dicebench_timing) on fresh inputs for every call: the first call's come
  with the request, and after each call (outside the timed region) its outputs are checked to be
  plain and handed to the host with candidate.call_done; the host answers with the next call's
  inputs (timing.next) or ends timing (timing.stop). Inputs that come with a mask key were exported
  masked (a batch of calls made ahead, transfer.py) and are unmasked into this process's memory.
  With warm_calls, each timed trial follows an untimed call on inputs of its own, handed over
  and checked like any other. The host compares a secret subset of the calls'
  outputs with the reference's, so a cache keyed on an input's pointer, identity or contents cannot
  pass timing. After the loop the host may ask for more checked calls (timing.next again). On CUDA
  the reply carries the device profile of the timed calls: median busy and host time, per-kernel
  breakdown and the share of kernel time in kernels compiled from the candidate. The host follows
  it with one more candidate.forward on fresh inputs, so a candidate that behaves differently once
  timing has started is caught.

After a failed request the worker refuses the rest of the job. Every exception from candidate code,
SystemExit and KeyboardInterrupt included, ends as a runtime_error (or compile_failed) reply with
the exception line and the last 20 traceback lines. This process never holds the reference's
model (the reference worker's, built with its weights), the reference outputs or the input seeds;
the problem's source, which the candidate's prompt shows, it runs as the candidate's own code.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import time
import traceback
from typing import Any, Callable

import dicebench_timing as timing

from . import jit_kernels, loading, numerics, placement, protocol, sealed, seeding, transfer, triton_interpreter
from .devices import check_device
from .errors import HostError, ShutdownRequested, exception_line, traceback_tail

COMPILE_LOG_BYTES = 20000

_GLOBAL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+|inline\s+)*void\s+"
                     r"(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)")


def classify_load_error(error: BaseException) -> str:
    """compile_failed for syntax errors and failed extension builds, runtime_error otherwise.

    A failed build is: subprocess.CalledProcessError; a RuntimeError whose text has "Error building
    extension" (torch.utils.cpp_extension); an exception raised inside torch/utils/cpp_extension.py;
    or any exception carrying a true `dicebench_compile_error` attribute.
    """
    if isinstance(error, (SyntaxError, subprocess.CalledProcessError)):
        return "compile_failed"
    if getattr(error, "dicebench_compile_error", False):
        return "compile_failed"
    if isinstance(error, RuntimeError) and "Error building extension" in str(error):
        return "compile_failed"
    for frame, _ in traceback.walk_tb(error.__traceback__):
        if frame.f_code.co_filename.replace(os.sep, "/").endswith("torch/utils/cpp_extension.py"):
            return "compile_failed"
    return "runtime_error"


def kernel_base_name(name: str) -> str:
    """"ns::relu<float>" from "void ns::relu<float>(float const*, int)", then "relu"."""
    head = name.split("(", 1)[0].strip()
    head = head.split("<", 1)[0].strip()
    head = head.split()[-1] if head.split() else head
    return head.rsplit("::", 1)[-1]


def check_plain_outputs(outputs: Any, device_type: str, path: str = "output") -> None:
    """Raises TypeError unless outputs are plain: exactly torch.Tensor (no subclass: its work may
    be deferred until someone reads it), dense, on a `device_type` device; or Python numbers;
    inside tuples and lists, nested to any depth. Only sealed calls touch the tensors."""
    if path == "output":
        sealed.refuse_dispatch_modes()
    if isinstance(outputs, sealed.Tensor):
        kind = type(outputs)
        if kind is not sealed.Tensor:
            raise TypeError(f"ModelNew.forward returned a {kind.__module__}.{kind.__qualname__} at {path} "
                            "(a subclass of torch.Tensor); outputs must be plain torch.Tensor objects "
                            "computed by the end of the call")
        if sealed.layout(outputs) != sealed.STRIDED:
            raise TypeError(f"ModelNew.forward returned a {sealed.layout(outputs)} tensor at {path}; outputs must be "
                            "dense (strided) tensors")
        if sealed.device(outputs).type != device_type:
            raise TypeError(f"ModelNew.forward returned a tensor on {sealed.device(outputs)} at {path}; the inputs "
                            f"were on {device_type}")
        return
    if isinstance(outputs, (bool, int, float, complex)):
        return
    if isinstance(outputs, (tuple, list)):
        for index, item in enumerate(outputs):
            check_plain_outputs(item, device_type, f"{path}[{index}]")
        return
    raise TypeError(f"ModelNew.forward returned a {type(outputs).__module__}.{type(outputs).__qualname__} at "
                    f"{path}; it must return a tensor, a number, or a tuple or list of them")


def _storage_spans(value: Any, spans: list) -> list:
    """(start, end) byte addresses of the storages behind a tree's tensors."""
    if isinstance(value, sealed.Tensor):
        start, size = sealed.storage_span(value)
        if size:
            spans.append((start, start + size))
    elif isinstance(value, (tuple, list)):
        for item in value:
            _storage_spans(item, spans)
    return spans


def aliases_input(outputs: Any, inputs: Any) -> bool:
    """Whether an output tensor shares storage with an input tensor."""
    inside = _storage_spans(inputs, [])
    return any(start < in_end and in_start < end
               for start, end in _storage_spans(outputs, []) for in_start, in_end in inside)


def _same_structure(slot: Any, value: Any) -> bool:
    """Whether slot can take value's tensors: the same nesting, shapes and dtypes, equal numbers."""
    if isinstance(value, sealed.Tensor):
        return (isinstance(slot, sealed.Tensor) and sealed.shape(slot) == sealed.shape(value)
                and sealed.dtype(slot) == sealed.dtype(value))
    if isinstance(value, (tuple, list)):
        return (type(slot) is type(value) and len(slot) == len(value)
                and all(_same_structure(s, v) for s, v in zip(slot, value)))
    return type(slot) is type(value) and (slot == value or (slot != slot and value != value))  # NaN == NaN here


def _copy_tree(slot: Any, value: Any) -> None:
    if isinstance(value, sealed.Tensor):
        sealed.copy_into(slot, value)
    elif isinstance(value, (tuple, list)):
        for s, v in zip(slot, value):
            _copy_tree(s, v)


class ToolchainBuildError(RuntimeError):
    """torch's toolchain failed to build a load_inline call in the host's toolchain service; the
    message is the error torch raised there ("Error building extension ...")."""

    dicebench_compile_error = True

    def __init__(self, message: str):
        super().__init__(message.removeprefix("RuntimeError: "))


class _TimingStopped(Exception):
    """The host ended timing before the loop did (a checked call failed)."""


class _TimingLink:
    """The candidate's side of a timing loop on fresh inputs: takes each call's inputs from the
    host, hands each call's outputs back, and follows the host's answer (timing.next, timing.stop).

    On CUDA the outputs are copied into a slot, tensors exported once and reused while the outputs
    keep their shapes and dtypes: torch keeps an exported allocation alive until a receiver has
    released it, and the host opens only the checked calls' outputs, so exporting every call's own
    outputs kept every one of them (a 2 GiB output: 132 GiB after 60 calls, on the H200)."""

    def __init__(self, role: "CandidateRole", request: dict):
        self.role = role
        self.job = request["job"]
        self.outputs_path = request["outputs_path"]
        self.pending: Any = request["inputs"]  # the descriptor of the next call's inputs
        self.pending_mask: int | None = request["mask_key"]
        self.pending_fresh: bool = request["fresh_placement"]
        self.call = 0
        self.inputs: Any = None
        self.outputs: Any = None
        self.slot: Any = None  # CUDA: the exported copy of the outputs
        self.slot_export: Any = None  # CUDA: the slot's descriptor (the same allocation every call)

    def _export(self, outputs: Any) -> tuple[dict, Any]:
        """The descriptor of this call's outputs, and what must stay alive until the host answers;
        sealed calls only (sealed.py). On the CPU the outputs' bytes are written to the call's file.
        On CUDA they are copied into the slot (a new slot when their structure changed), which is
        exported once and its descriptor reused while the slot stays."""
        if self.role.device_type != "cuda":
            return transfer.export_tree(outputs, self.role.device, self.outputs_path)
        if self.slot is None or not _same_structure(self.slot, outputs):
            self.slot, self.slot_export = None, None
            self.slot = transfer.map_tensors(outputs, sealed.empty_like)
        _copy_tree(self.slot, outputs)
        sealed.synchronize("cuda")
        if self.slot_export is None:
            self.slot_export = transfer.export_tree(self.slot, self.role.device, self.outputs_path)
        return self.slot_export

    def load_inputs(self) -> None:
        """The pending inputs as new tensors in this process's memory (outside the timed region)."""
        if self.pending is None:
            raise HostError("the host sent no inputs for the next call")
        self.inputs, self.outputs = None, None  # the previous call's memory goes back first
        self.inputs = self.role._receive(self.pending, self.pending_mask, self.pending_fresh)
        self.pending, self.pending_mask, self.pending_fresh = None, None, False
        numerics.apply_numerics()

    def finish_call(self, more: bool) -> None:
        """After a call: check its outputs, hand them over, and take the host's answer. A stop while
        the loop wants more raises _TimingStopped. The outputs are taken as the call left them:
        nothing a candidate can patch from Python runs between the call's return and its outputs'
        export (sealed.py), so work it defers to a patched synchronize or copy never reaches them."""
        sealed.synchronize(self.role.device_type)
        check_plain_outputs(self.outputs, self.role.device_type)
        descriptor, keep = self._export(self.outputs)
        answer = self.role._ask_host({"type": "candidate.call_done", "job": self.job, "call": self.call,
                                      "outputs": descriptor, "more": more}, ("timing.next", "timing.stop"))
        del keep  # the host has answered: it is done with this call's outputs
        self.call += 1
        if answer["type"] == "timing.next":
            if answer["call"] != self.call:
                raise HostError(f"the host sent inputs for call {answer['call']}, expected {self.call}")
            self.pending, self.pending_mask = answer["inputs"], answer["mask_key"]
            self.pending_fresh = answer["fresh_placement"]
        elif more:
            raise _TimingStopped()


def _fastpath_calls() -> int:
    """Calls of functions the fast path built, in this process so far: a failure before the first
    cannot be the fast path's (the host then need not re-judge it with torch's toolchain)."""
    import sys

    fastpath = sys.modules.get("dicebench_fastpath")
    try:
        return int(fastpath.calls()) if fastpath is not None else 0
    except Exception:  # noqa: BLE001 - unknown: the host assumes the fast path ran
        return 2**31 - 1


class _Failure(Exception):
    def __init__(self, error: BaseException, error_class: str = "runtime_error", context: str = ""):
        message = f"{context}: {exception_line(error)}" if context else exception_line(error)
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.tail = traceback_tail(error)


class _CompileRecorder:
    """Wraps torch.utils.cpp_extension.load_inline (outside the fast path, if installed) to note
    each call's name, wall time, the __global__ functions of its CUDA sources and its error."""

    def __init__(self) -> None:
        import torch.utils.cpp_extension as cpp_extension

        self.calls: list[dict] = []
        inner = cpp_extension.load_inline

        def load_inline(*args: Any, **kwargs: Any) -> Any:
            cuda_sources = kwargs.get("cuda_sources", args[2] if len(args) > 2 else None)
            if isinstance(cuda_sources, str):
                cuda_sources = [cuda_sources]
            names = sorted({m.group(1) for source in (cuda_sources or []) if isinstance(source, str)
                            for m in _GLOBAL.finditer(source)})
            call = {"name": str(kwargs.get("name", args[0] if args else "")), "globals": names,
                    "seconds": 0.0, "error": ""}
            self.calls.append(call)
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            except BaseException as error:
                call["error"] = f"{type(error).__name__}: {error}"
                raise
            finally:
                call["seconds"] = time.perf_counter() - started

        cpp_extension.load_inline = load_inline


class CandidateRole:
    """The candidate worker's handlers; serves one job."""

    def __init__(self, device: Any, channel: tuple[int, int] | None = None,
                 host: Callable[[dict], dict] | None = None):
        self.device = device
        self.device_type = "cuda" if str(device).startswith("cuda") else "cpu"
        self.channel = channel  # (fd_in, fd_out) to the host, for requests made inside a request
        # Answers a worker request (candidate.compile, candidate.call_done) with the host's message;
        # over the channel unless given (in-process tests play the host).
        self.host = host
        self.job: str | None = None
        self.work_dir: str | None = None
        self.stage = "new"  # new -> loaded -> ready; "failed" after any failed request
        self.model_class: Any = None
        self.model: Any = None
        self.candidate_kernels: set[str] = set()  # mangled names and base names
        self.jit = jit_kernels.JitWatch(self.candidate_kernels)  # Triton's kernels, compiled at first launch
        self.exported: Any = None
        self.placements = placement.InputPlacements(device)  # where this job's inputs have been

    def handlers(self) -> dict:
        return {"candidate.load": self.load, "candidate.init": self.init,
                "candidate.forward": self.forward, "candidate.time": self.time}

    def _expect(self, request: dict, stage: str) -> None:
        if self.job is not None and request["job"] != self.job:
            raise HostError(f"this candidate worker serves job {self.job!r}, not {request['job']!r}")
        if self.stage != stage:
            raise HostError(f"{request['type']} needs stage {stage!r}; this worker is at {self.stage!r}"
                            " (a candidate worker serves one job; start a fresh one)")

    def _reply(self, kind: str, request: dict, failure: _Failure | None, **fields: Any) -> dict:
        reply = {"type": kind, "job": request["job"], "ok": failure is None, "error_class": "",
                 "message": "", "traceback_tail": "", "fastpath_calls": _fastpath_calls(), **fields}
        if failure is not None:
            self.stage = "failed"
            reply.update(error_class=failure.error_class, message=failure.message,
                         traceback_tail=failure.tail)
        return reply

    # ---------------------------------------------------------------------------------------
    def load(self, request: dict) -> dict:
        self._expect(request, "new")
        check_device(request["device"], self.device)
        if not os.path.isdir(request["work_dir"]):
            raise HostError(f"work_dir {request['work_dir']!r} is not a directory")
        self.job = request["job"]
        self.work_dir = request["work_dir"]
        fastpath_off = self._install_fastpath(request["fastpath"], request["toolchain"])
        recorder = _CompileRecorder()
        failure = None
        try:
            numerics.apply_numerics()
            module = loading.load_program(request["candidate_source"], kind="candidate",
                                          name_hint=request["job"], directory=request["work_dir"],
                                          problem_source=request["problem_source"])
        except loading.ProblemSourceError as error:  # before any candidate code ran (module docstring)
            failure = _Failure(error.__cause__ or error,
                               context="the problem's source raised in the candidate's worker before the "
                                       "candidate's code ran")
        except BaseException as error:  # noqa: BLE001 - candidate code may raise anything
            failure = _Failure(error, classify_load_error(error))
        else:
            try:
                self.model_class = loading.find_model_class(module, "ModelNew")
            except BaseException as error:  # noqa: BLE001
                failure = _Failure(error)
        summary = self._compile_summary(recorder.calls, fastpath_off)
        self.jit.install()
        triton_interpreter.install()
        if failure is None:
            self.stage = "loaded"
        return self._reply("candidate.loaded", request, failure, compile=summary)

    def _install_fastpath(self, options: dict | None, toolchain: dict | None) -> str:
        """Installs the fast path as asked, and the host's toolchain service for the calls that take
        torch's toolchain where the host offers it; returns why the fast path is off ("" when on)."""
        builder = self._build_on_host if toolchain and toolchain.get("service") else None
        if builder is not None and self.channel is None and self.host is None:
            raise HostError("the toolchain service needs the worker's channel")
        if options is None:
            if builder is not None:
                import dicebench_fastpath

                dicebench_fastpath.install("", "", lambda line: print(line, flush=True), builder=builder, fast=False)
            return "fast path not requested"
        cache_dir = options.get("cache_dir")
        if not isinstance(cache_dir, str) or not cache_dir:
            raise HostError("fastpath needs a cache_dir")
        try:
            import dicebench_fastpath

            arch = options.get("arch") or dicebench_fastpath.detect_arch()
            compiler = self._compile_on_host if options.get("service") else None
            if compiler is not None and self.channel is None and self.host is None:
                raise HostError("fastpath service needs the worker's channel")
            dicebench_fastpath.install(arch, cache_dir, lambda line: print(line, flush=True), compiler=compiler,
                                       builder=builder)
        except Exception as error:  # noqa: BLE001 - without the fast path, torch's toolchain
            return f"fast path unavailable: {exception_line(error)}"
        return ""

    def _compile_on_host(self, request: dict) -> dict:
        """One load_inline call compiled by the host's trusted compile step (candidate.compile ->
        compile.result); this process only reads the cache entry it is told of."""
        answer = self._ask_host({"type": "candidate.compile", "job": self.job or "", "request": request},
                                ("compile.result",))
        return answer["outcome"]

    def _build_on_host(self, arguments: dict, failed_sources: str = "") -> Any:
        """One load_inline call built with torch's toolchain by the host's toolchain service
        (candidate.toolchain -> toolchain.result), then imported from the cache entry it names, as
        torch's load_inline imports what it built; NotImplemented for a call the service cannot
        take (toolchain.request_for), which torch then builds in this process. failed_sources: the
        sources whose compile failed on the fast path, which the build compiles first."""
        from . import toolchain

        request = toolchain.request_for(arguments, toolchain.default_arch_list(), self.work_dir or "")
        if request is None:
            return NotImplemented
        if failed_sources:
            request["compile_first"] = failed_sources
        answer = self._ask_host({"type": "candidate.toolchain", "job": self.job or "", "request": request},
                                ("toolchain.result",))
        outcome = answer["outcome"]
        if not outcome.get("ok"):
            raise ToolchainBuildError(str(outcome.get("message", "")))
        import torch.utils.cpp_extension as cpp_extension

        return cpp_extension._import_module_from_library(  # noqa: SLF001 - what load_inline itself calls
            str(outcome["module_name"]), str(outcome["entry_dir"]), True)

    def _ask_host(self, message: dict, answers: tuple) -> dict:
        """Sends a worker request to the host in the middle of a request of its own and returns the
        host's answer, which must be one of the `answers` types."""
        message = protocol.validate_reply(message)
        if self.host is not None:
            received: dict | None = self.host(message)
        else:
            if self.channel is None:
                raise HostError(f"{message['type']} needs the worker's channel to the host")
            fd_in, fd_out = self.channel
            protocol.write_frame(fd_out, message)
            received = protocol.read_frame(fd_in)
        if received is None:
            raise HostError(f"the host closed the channel during {message['type']}")
        answer = protocol.validate_request(received)
        if answer["type"] == "shutdown":  # the host is done with this job: the worker loop ends
            raise ShutdownRequested(answer["job"])
        if answer["type"] not in answers:
            raise HostError(f"expected {' or '.join(answers)}, got {answer['type']!r}")
        return answer

    def _compile_summary(self, calls: list[dict], fastpath_off: str) -> dict:
        records = []
        if not fastpath_off:
            import dicebench_fastpath

            records = dicebench_fastpath.compile_records()
        summary_records = []
        for index, call in enumerate(calls):
            fast = records[index] if index < len(records) else None
            path = fast["path"] if fast else "fallback"
            reason = (fast["reason"] if fast else fastpath_off) or ""
            kernels = list(fast["kernels"]) if fast and path == "nvrtc" else []
            self.candidate_kernels.update(kernels)
            self.candidate_kernels.update(call["globals"])
            summary_records.append({"name": call["name"], "path": path, "reason": reason,
                                    "seconds": round(call["seconds"], 4), "kernels": call["globals"],
                                    "cache_hit": bool(fast and fast.get("cache_hit")),
                                    "error": call["error"][:COMPILE_LOG_BYTES]})
        paths = {r["path"] for r in summary_records}
        path = "none" if not paths else paths.pop() if len(paths) == 1 else "mixed"
        reasons = sorted({r["reason"].splitlines()[0] for r in summary_records if r["reason"]})
        log = "\n".join(f"{r['name']}: {r['error']}" for r in summary_records if r["error"])
        if len(log) > COMPILE_LOG_BYTES:
            log = log[:COMPILE_LOG_BYTES // 2] + "\n...\n" + log[-COMPILE_LOG_BYTES // 2:]
        return {"path": path, "reason": "; ".join(reasons), "log": log,
                "seconds": round(sum(r["seconds"] for r in summary_records), 4),
                "records": summary_records}

    # ---------------------------------------------------------------------------------------
    def init(self, request: dict) -> dict:
        import torch

        self._expect(request, "loaded")
        try:
            init_inputs = torch.load(request["init_inputs"], map_location=self.device, weights_only=True)
        except Exception as error:  # noqa: BLE001 - the host's file; not the candidate's fault
            raise HostError(f"cannot load init inputs {request['init_inputs']!r}: "
                            f"{exception_line(error)}") from None
        if not isinstance(init_inputs, (list, tuple)):
            raise HostError(f"init inputs file {request['init_inputs']!r} does not hold a list")
        failure = None
        try:
            seeding.seed_everything(request["init_seed"])
            with numerics.harness_call():
                model = self.model_class(*init_inputs).to(self.device)
                if request["model_mode"] == "train":
                    model.train()
                else:
                    model.eval()
            sealed.synchronize(self.device_type)
            self.model = model
            self.stage = "ready"
        except BaseException as error:  # noqa: BLE001
            failure = _Failure(error)
        return self._reply("candidate.ready", request, failure)

    # ---------------------------------------------------------------------------------------
    def _receive(self, descriptor: dict, mask_key: int | None = None, fresh: bool = False) -> Any:
        """A call's inputs in this process's own memory; with `fresh`, where no input of this job has
        been (placement.py)."""
        try:
            inputs = transfer.import_tree(descriptor, self.device, clone=True, mask_key=mask_key)
        except transfer.TransferError as error:
            raise HostError(f"cannot receive the inputs: {error}") from None
        if not isinstance(inputs, (list, tuple)):
            raise HostError("the inputs are not a list")
        return self.placements.receive(list(inputs), fresh)

    def forward(self, request: dict) -> dict:
        self._expect(request, "ready")
        self.exported = None  # the host is done with the previous trial's outputs
        inputs = self._receive(request["inputs"], fresh=request["fresh_placement"])
        failure, descriptor, aliased = None, None, False
        try:
            with numerics.harness_call():
                outputs = self.model(*inputs)
            sealed.harness_runs()
            # Taken as the call left them, with sealed calls only (finish_call says why); on CUDA
            # the host receives copies (an IPC handle exposes the whole allocation around a tensor).
            sealed.synchronize(self.device_type)
            check_plain_outputs(outputs, self.device_type)
            plain = transfer.map_tensors(outputs, sealed.detached_copy) if self.device_type == "cuda" else outputs
            descriptor, self.exported = transfer.export_tree(plain, self.device, request["outputs_path"])
            aliased = aliases_input(outputs, inputs)
        except BaseException as error:  # noqa: BLE001
            failure = _Failure(error)
        finally:
            sealed.candidate_runs()
        return self._reply("candidate.outputs", request, failure, trial=request["trial"], outputs=descriptor,
                           aliases_input=aliased, jit=self.jit.summary())

    # ---------------------------------------------------------------------------------------
    def time(self, request: dict) -> dict:
        import torch

        self._expect(request, "ready")
        self.exported = None
        link = _TimingLink(self, request)
        model = self.model
        timer = timing.timer_for_device(self.device)

        def call() -> None:  # inputs and numerics come from before_each, outside the timed region
            with torch.no_grad():
                link.outputs = model(*link.inputs)
            sealed.harness_runs()

        sealed.harness_runs()  # the first call's inputs arrive next
        failure, summary, profile, stopped = None, None, None, False
        try:
            summary = timing.time_adaptive(
                call, warmup=request["warmup"], min_trials=request["min_trials"],
                max_trials=request["max_trials"], budget_s=float(request["budget_s"]),
                target_rel_ci=float(request["target_rel_ci"]), timer=timer,
                before_each=link.load_inputs, after_each=link.finish_call, warm_calls=request["warm_calls"])
            if isinstance(timer, timing.CuptiTimer):
                profile = self._profile(timer, summary["trials"])
            while link.pending is not None:  # checked calls the host asks for after the loop
                link.load_inputs()
                call()
                link.finish_call(False)
        except _TimingStopped:
            summary, profile, stopped = None, None, True
        except HostError:
            raise
        except BaseException as error:  # noqa: BLE001
            failure = _Failure(error)
        finally:
            link.inputs, link.outputs = None, None
            sealed.candidate_runs()
        return self._reply("candidate.timed", request, failure, timing=summary, profile=profile,
                           calls=link.call, stopped=stopped, jit=self.jit.summary())

    def _profile(self, timer: "timing.CuptiTimer", trials: int) -> dict:
        import dicebench_cuda

        calls = timer.trials[-trials:]
        detailed = [c for c in calls if "kernels" in c]
        kernels = [k for c in detailed for k in c["kernels"]]
        names = [k.get("mangled", k["name"]) for k in kernels
                 if k.get("mangled", k["name"]) in self.candidate_kernels
                 or kernel_base_name(k["name"]) in self.candidate_kernels]
        summary = dicebench_cuda.summarize_kernels(kernels, tuple(set(names)))
        per_call = max(len(detailed), 1)
        rows = [{"name": g["name"], "kind": "kernel", "from_candidate": g["mangled"] in names,
                 "launches_per_call": g["launches"] / per_call, "ms_per_call": g["total_ms"] / per_call,
                 "grid": ",".join(map(str, g["grid"])), "block": ",".join(map(str, g["block"]))}
                for g in summary["kernels"]]
        for kind in ("memcpy", "memset"):
            total = sum(c.get(kind + "_ms", 0.0) for c in detailed)
            count = sum(c.get(kind + "_count", 0) for c in detailed)
            if count:
                rows.append({"name": f"[{kind}]", "kind": kind, "from_candidate": False,
                             "launches_per_call": count / per_call, "ms_per_call": total / per_call,
                             "grid": "", "block": ""})

        def median(key: str) -> float:
            return statistics.median(c[key] for c in calls) if calls else 0.0

        return {"busy_ms": median("busy_ms"), "host_ms": median("host_ms"),
                "call_host_ms": median("call_host_ms"), "launch_latency_ms": median("launch_latency_ms"),
                "span_ms": median("span_ms"), "candidate_share": summary["candidate_share"], "kernels": rows}
