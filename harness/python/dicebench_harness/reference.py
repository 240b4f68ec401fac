"""The reference role: builds the problem's Model, makes the inputs, keeps the reference outputs,
compares candidates' outputs with them and times the baseline. It never runs candidate code.

Handlers (requests and replies are defined in protocol.py):
- reference.prepare: seed_everything(init_seed); init_inputs = get_init_inputs();
  seed_everything(init_seed); model = Model(*init_inputs).to(device), then .eval() (or .train()
  when model_mode is "train"); tensors among the init inputs are moved to the device first, as
  the candidate's are. The init inputs are saved to work_dir/init_inputs.pt (checked to load back with weights_only=True, since the
  candidate loads them that way). For each trial t: seed_everything(input_seeds[t]);
  inputs = get_inputs(); tensors moved to the device; saved (CPU copies, dtypes kept) to
  work_dir/inputs-<t>.pt; the model runs on its own clones and the outputs (detached clones) stay
  in this process's memory. Reference outputs are never written to disk. A failure in the
  problem's code is ok=false with error_class "reference_failed".
- reference.compare: loads the candidate's outputs with weights_only=True (the file was written by
  untrusted code; a file that does not load that way is "output_mismatch") and compares them with
  the kept outputs of that trial (compare.py).
- reference.time: times the Model on fresh clones of trial 0's inputs (timing.py), the numeric
  settings re-applied before every call.
- reference.release: drops the job's state (and empties the CUDA cache on CUDA).

The problem's source file goes to a folder private to this worker process (not the job folder,
which the candidate can read); the job folder receives only inputs and init inputs.
"""

from __future__ import annotations

import os
import types
from dataclasses import dataclass, field
from typing import Any

from . import compare as compare_mod
from . import loading, numerics, seeding, timing
from .devices import check_device
from .errors import HostError, traceback_tail
from .tensors import clone_tree, save_private, synchronize, to_cpu, to_device


@dataclass
class ReferenceJob:
    module: types.ModuleType
    model: Any
    device: Any
    tolerance: str
    inputs: list = field(default_factory=list)  # per trial, pristine, on the device
    outputs: list = field(default_factory=list)  # per trial, detached clones


class _ReferenceFailure(Exception):
    def __init__(self, message: str, tail: str = ""):
        super().__init__(message)
        self.message = message
        self.tail = tail


class ReferenceRole:
    """The reference worker's state: prepared jobs by id."""

    def __init__(self, device: Any, private_dir: str):
        self.device = device
        self.private_dir = private_dir
        self.jobs: dict[str, ReferenceJob] = {}

    def handlers(self) -> dict:
        return {
            "reference.prepare": self.prepare,
            "reference.compare": self.compare,
            "reference.time": self.time,
            "reference.release": self.release,
        }

    def _job(self, job: str) -> ReferenceJob:
        state = self.jobs.get(job)
        if state is None:
            raise HostError(f"no prepared reference job {job!r}")
        return state

    # ---------------------------------------------------------------------------------------
    def prepare(self, request: dict) -> dict:
        job = request["job"]
        if job in self.jobs:
            raise HostError(f"reference job {job!r} is already prepared")
        check_device(request["device"], self.device)
        work_dir = request["work_dir"]
        if not os.path.isdir(work_dir):
            raise HostError(f"work_dir {work_dir!r} is not a directory")
        try:
            state, input_paths, init_path = self._build(request)
        except _ReferenceFailure as failure:
            return {"type": "reference.prepared", "job": job, "ok": False,
                    "error_class": "reference_failed", "message": failure.message,
                    "traceback_tail": failure.tail, "inputs": [], "init_inputs": "", "trials": 0}
        self.jobs[job] = state
        return {"type": "reference.prepared", "job": job, "ok": True, "error_class": "",
                "message": "", "traceback_tail": "", "inputs": input_paths,
                "init_inputs": init_path, "trials": len(input_paths)}

    def _build(self, request: dict) -> tuple[ReferenceJob, list, str]:
        import torch

        device = self.device
        work_dir = request["work_dir"]
        init_seed = request["init_seed"]
        module = None

        def fail(stage: str, error: BaseException) -> _ReferenceFailure:
            loading.unload_program(module)
            text = f"{type(error).__name__}: {error}"
            return _ReferenceFailure(f"reference {stage} failed: {text}", traceback_tail(error))

        try:
            numerics.apply_numerics()
            module = loading.load_program(request["problem_source"], kind="problem",
                                          name_hint=request["problem_name"],
                                          directory=self.private_dir)
            model_class = loading.find_model_class(module, "Model")
            get_inputs = loading.find_function(module, "get_inputs")
            get_init_inputs = loading.find_function(module, "get_init_inputs")
        except BaseException as error:  # noqa: BLE001 - problem code may raise anything
            raise fail("load", error) from None

        init_path = os.path.join(work_dir, "init_inputs.pt")
        try:
            seeding.seed_everything(init_seed)
            with numerics.harness_call():
                init_inputs = get_init_inputs()
            if not isinstance(init_inputs, (list, tuple)):
                raise TypeError(f"get_init_inputs() returned a {type(init_inputs).__name__}, "
                                "not a list")
            init_inputs = to_device(list(init_inputs), device)
            save_private(to_cpu(init_inputs), init_path)
            try:
                torch.load(init_path, map_location="cpu", weights_only=True)
            except Exception as error:  # noqa: BLE001
                raise TypeError("get_init_inputs() returned values that do not load back with "
                                f"torch.load(weights_only=True): {error}") from None
            seeding.seed_everything(init_seed)
            with numerics.harness_call():
                model = model_class(*init_inputs).to(device)
                if request["model_mode"] == "train":
                    model.train()
                else:
                    model.eval()
        except BaseException as error:  # noqa: BLE001
            raise fail("init", error) from None

        state = ReferenceJob(module=module, model=model, device=device,
                             tolerance=request["tolerance"])
        paths = []
        try:
            for trial, seed in enumerate(request["input_seeds"]):
                seeding.seed_everything(seed)
                with numerics.harness_call():
                    inputs = get_inputs()
                if not isinstance(inputs, (list, tuple)):
                    raise TypeError(f"get_inputs() returned a {type(inputs).__name__}, not a list")
                inputs = to_device(list(inputs), device)
                path = os.path.join(work_dir, f"inputs-{trial}.pt")
                save_private(to_cpu(inputs), path)
                with numerics.harness_call():
                    outputs = model(*clone_tree(inputs))
                synchronize(device)
                problem = compare_mod.find_unsupported(outputs)
                if problem:
                    raise TypeError(f"Model.forward returned unsupported outputs: {problem}")
                state.inputs.append(inputs)
                state.outputs.append(clone_tree(outputs))
                paths.append(path)
        except BaseException as error:  # noqa: BLE001
            raise fail("run", error) from None
        return state, paths, init_path

    # ---------------------------------------------------------------------------------------
    def compare(self, request: dict) -> dict:
        import torch

        state = self._job(request["job"])
        trial = request["trial"]
        if trial >= len(state.outputs):
            raise HostError(f"trial {trial} out of range: the job has {len(state.outputs)} trials")
        reply = {"type": "reference.compared", "job": request["job"], "trial": trial}
        try:
            candidate = torch.load(request["outputs_path"], map_location=state.device,
                                   weights_only=True)
        except Exception as error:  # noqa: BLE001 - any failure to load is the candidate's
            first_line = (str(error).strip().splitlines() or [""])[0][:300]
            reply.update(verdict="output_mismatch", max_abs_diff=None, mean_abs_diff=None,
                         message="the candidate's outputs were not plain tensors (torch.load "
                         f"with weights_only=True refused the file): {type(error).__name__}: "
                         f"{first_line}")
            return reply
        numerics.apply_numerics()
        result = compare_mod.compare(state.outputs[trial], candidate, state.tolerance)
        del candidate
        reply.update(result)
        return reply

    # ---------------------------------------------------------------------------------------
    def time(self, request: dict) -> dict:
        import torch

        state = self._job(request["job"])
        inputs = clone_tree(state.inputs[0])
        model = state.model
        timer = timing.timer_for_device(state.device)

        def call() -> None:  # numerics are re-applied by before_each, outside the timed region
            with torch.no_grad():
                model(*inputs)

        summary = timing.time_adaptive(
            call, warmup=request["warmup"], min_trials=request["min_trials"],
            max_trials=request["max_trials"], budget_s=float(request["budget_s"]),
            target_rel_ci=float(request["target_rel_ci"]), timer=timer,
            before_each=numerics.apply_numerics)
        return {"type": "reference.timed", "job": request["job"], "timing": summary}

    # ---------------------------------------------------------------------------------------
    def release(self, request: dict) -> dict:
        import torch

        state = self.jobs.pop(request["job"], None)
        if state is not None:
            loading.unload_program(state.module)
            del state
            if torch.device(self.device).type == "cuda":
                torch.cuda.synchronize(self.device)
                torch.cuda.empty_cache()
        return {"type": "reference.released", "job": request["job"]}
