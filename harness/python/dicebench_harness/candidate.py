"""The candidate role: loads one untrusted candidate, builds ModelNew, runs it on the inputs the host
names, writes its outputs to files and times it. One candidate.run per process.

Stages, in order (the reply's "stage" names the one that failed, or "done"):
- load: execute the source (loading.py) and find ModelNew. A SyntaxError or a failure to build an
  extension (see classify_load_error) is "compile_failed"; anything else is "runtime_error".
- init: init inputs from the file the reference wrote (weights_only=True, tensors mapped to the
  device); seed_everything(init_seed); ModelNew(*init_inputs).to(device), then .eval() or .train()
  as model_mode says (the same mode the reference was built in).
- run: for each trial, inputs loaded fresh from their file (weights_only=True, map_location =
  device), forward under the harness numerics and no_grad, device synchronised, outputs checked to
  be tensors / numbers / (nested) tuples or lists of those, saved to outputs_dir/outputs-<t>.pt.
- timing (when the request has timing parameters): forward timed on a fresh load of trial 0's
  inputs (timing.py), numerics re-applied before each call; then one more forward per trial in
  timed_output_trials, on freshly loaded inputs, saved to outputs_dir/timed-outputs-<t>.pt so the
  host can check that the candidate still computes the right thing once timing has started.

Every exception from candidate code, SystemExit and KeyboardInterrupt included, ends as a
runtime_error result with the exception line and the last 20 traceback lines. This process never
holds the reference model, the reference outputs, the input seeds or the problem source.
"""

from __future__ import annotations

import os
import subprocess
import traceback
from typing import Callable, Any

from . import compare as compare_mod
from . import loading, numerics, seeding, timing
from .devices import check_device
from .errors import HostError, exception_line, traceback_tail
from .tensors import save_private, synchronize


def classify_load_error(error: BaseException) -> str:
    """compile_failed for syntax errors and failed extension builds, runtime_error otherwise.

    A failed build is: subprocess.CalledProcessError; a RuntimeError whose text has "Error building
    extension" (torch.utils.cpp_extension); an exception raised inside torch/utils/cpp_extension.py;
    or any exception carrying a true `dicebench_compile_error` attribute (for the worker's own
    compile path, which can mark its errors that way).
    """
    if isinstance(error, SyntaxError):
        return "compile_failed"
    if isinstance(error, subprocess.CalledProcessError):
        return "compile_failed"
    if getattr(error, "dicebench_compile_error", False):
        return "compile_failed"
    if isinstance(error, RuntimeError) and "Error building extension" in str(error):
        return "compile_failed"
    for frame, _ in traceback.walk_tb(error.__traceback__):
        filename = frame.f_code.co_filename.replace(os.sep, "/")
        if filename.endswith("torch/utils/cpp_extension.py"):
            return "compile_failed"
    return "runtime_error"


def _plain_outputs(outputs: Any) -> Any:
    """Detached clones of the output tensors as plain torch.Tensor, for saving."""
    import torch

    if isinstance(outputs, torch.Tensor):
        tensor = outputs.detach().clone()
        if type(tensor) is not torch.Tensor:
            tensor = tensor.as_subclass(torch.Tensor)
        return tensor
    if isinstance(outputs, tuple):
        return tuple(_plain_outputs(o) for o in outputs)
    if isinstance(outputs, list):
        return [_plain_outputs(o) for o in outputs]
    return outputs


class _StageFailure(Exception):
    def __init__(self, error_class: str, message: str, tail: str):
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.tail = tail


class CandidateRole:
    """The candidate worker's handler; serves exactly one candidate.run."""

    def __init__(self, device: Any, send_progress: Callable[[dict], None] = lambda message: None):
        self.device = device
        self.served = False
        self.send_progress = send_progress

    def handlers(self) -> dict:
        return {"candidate.run": self.run}

    def run(self, request: dict) -> dict:
        if self.served:
            raise HostError("this candidate worker has already served its candidate.run; "
                            "start a fresh worker for the next candidate")
        check_device(request["device"], self.device)
        outputs_dir = request["outputs_dir"]
        if not os.path.isdir(outputs_dir):
            raise HostError(f"outputs_dir {outputs_dir!r} is not a directory")
        trials = len(request["inputs"])
        for trial in request["timed_output_trials"]:
            if trial >= trials:
                raise HostError(f"timed_output_trials names trial {trial}, but there are {trials}")
        if request["timed_output_trials"] and request["timing"] is None:
            raise HostError("timed_output_trials needs timing parameters")
        self.served = True
        reply = {"type": "candidate.result", "job": request["job"], "ok": False, "stage": "load",
                 "error_class": "", "message": "", "traceback_tail": "", "outputs": [],
                 "timed_outputs": {}, "timing": None}
        try:
            self._run(request, reply)
        except _StageFailure as failure:
            reply.update(ok=False, error_class=failure.error_class, message=failure.message,
                         traceback_tail=failure.tail)
            return reply
        reply.update(ok=True, stage="done")
        return reply

    # ---------------------------------------------------------------------------------------
    def _load_inputs(self, path: str) -> list:
        import torch

        try:
            inputs = torch.load(path, map_location=self.device, weights_only=True)
        except Exception as error:  # noqa: BLE001 - the host's files; not the candidate's fault
            raise HostError(f"cannot load inputs {path!r}: {exception_line(error)}") from None
        if not isinstance(inputs, (list, tuple)):
            raise HostError(f"inputs file {path!r} does not hold a list")
        return list(inputs)

    def _forward(self, model: Any, inputs: list) -> Any:
        with numerics.harness_call():
            outputs = model(*inputs)
        synchronize(self.device)
        problem = compare_mod.find_unsupported(outputs)
        if problem:
            raise TypeError("ModelNew.forward must return a tensor, a number, or a tuple or list "
                            f"of them: {problem}")
        return outputs

    def _save(self, outputs: Any, path: str) -> None:
        save_private(_plain_outputs(outputs), path)

    def _run(self, request: dict, reply: dict) -> None:
        import torch

        device = self.device
        outputs_dir = request["outputs_dir"]

        def failure(error: BaseException, error_class: str = "runtime_error") -> _StageFailure:
            return _StageFailure(error_class, exception_line(error), traceback_tail(error))

        # load
        reply["stage"] = "load"
        try:
            numerics.apply_numerics()
            module = loading.load_program(request["candidate_source"], kind="candidate",
                                          name_hint=request["job"], directory=outputs_dir)
        except BaseException as error:  # noqa: BLE001 - candidate code may raise anything
            raise failure(error, classify_load_error(error)) from None
        try:
            model_class = loading.find_model_class(module, "ModelNew")
        except BaseException as error:  # noqa: BLE001
            raise failure(error) from None

        # init
        reply["stage"] = "init"
        try:
            init_inputs = torch.load(request["init_inputs"], map_location=device, weights_only=True)
        except Exception as error:  # noqa: BLE001
            raise HostError(f"cannot load init inputs {request['init_inputs']!r}: "
                            f"{exception_line(error)}") from None
        if not isinstance(init_inputs, (list, tuple)):
            raise HostError(f"init inputs file {request['init_inputs']!r} does not hold a list")
        try:
            seeding.seed_everything(request["init_seed"])
            with numerics.harness_call():
                model = model_class(*init_inputs).to(device)
                if request["model_mode"] == "train":
                    model.train()
                else:
                    model.eval()
            synchronize(device)
        except BaseException as error:  # noqa: BLE001
            raise failure(error) from None

        self.send_progress({"type": "candidate.progress", "job": request["job"], "stage": "loaded"})

        # run
        reply["stage"] = "run"
        for trial, path in enumerate(request["inputs"]):
            inputs = self._load_inputs(path)
            try:
                outputs = self._forward(model, inputs)
                out_path = os.path.join(outputs_dir, f"outputs-{trial}.pt")
                self._save(outputs, out_path)
            except BaseException as error:  # noqa: BLE001
                raise failure(error) from None
            del outputs, inputs
            reply["outputs"].append(out_path)

        self.send_progress({"type": "candidate.progress", "job": request["job"], "stage": "ran"})

        # timing
        params = request["timing"]
        if params is None:
            return
        reply["stage"] = "timing"
        inputs = self._load_inputs(request["inputs"][0])
        timer = timing.timer_for_device(device)

        def call() -> None:  # numerics are re-applied by before_each, outside the timed region
            with torch.no_grad():
                model(*inputs)

        try:
            summary = timing.time_adaptive(
                call, warmup=params["warmup"], min_trials=params["min_trials"],
                max_trials=params["max_trials"], budget_s=float(params["budget_s"]),
                target_rel_ci=float(params["target_rel_ci"]), timer=timer,
                before_each=numerics.apply_numerics)
        except BaseException as error:  # noqa: BLE001
            raise failure(error) from None
        del inputs
        for trial in request["timed_output_trials"]:
            inputs = self._load_inputs(request["inputs"][trial])
            try:
                outputs = self._forward(model, inputs)
                out_path = os.path.join(outputs_dir, f"timed-outputs-{trial}.pt")
                self._save(outputs, out_path)
            except BaseException as error:  # noqa: BLE001
                raise failure(error) from None
            reply["timed_outputs"][str(trial)] = out_path
        reply["timing"] = summary
