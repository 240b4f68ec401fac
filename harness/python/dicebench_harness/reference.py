"""The reference role: builds the problem's Model, makes each trial's inputs, keeps that trial's
reference outputs, compares a candidate's outputs with them and times the baseline. It never runs
candidate code.

Handlers (requests and replies are defined in protocol.py):
- reference.prepare: seed_everything(init_seed); init_inputs = get_init_inputs();
  seed_everything(init_seed); model = Model(*init_inputs).to(device), then .eval() (or .train()
  when model_mode is "train"); tensors among the init inputs are moved to the device first, as
  the candidate's are. The init inputs are saved to work_dir/init_inputs.pt (checked to load back
  with weights_only=True, since the candidate loads them that way). A failure in the problem's
  code is ok=false with error_class "reference_failed".
- reference.trial: seed_everything(seed); inputs = get_inputs() under the device as torch's
  default device (inputs are made on the GPU directly: level-1 inputs reach 17 GB), allocated
  from this worker's export pool (transfer.py); the model runs on its own clones and the outputs
  stay in this process's memory, replacing the previous trial's (whose memory is zeroed first, so
  no later allocation can find them). The inputs are exported to the candidate (transfer.py).
- reference.compare: receives the candidate's outputs (a file loaded with weights_only=True, or
  CUDA IPC handles checked field by field; what cannot be received is "output_mismatch") and
  compares them with the kept outputs of that trial (compare.py).
- reference.time: times the Model on fresh clones of the current trial's inputs (timing.py), the
  numeric settings re-applied before every call; with method "compile", the Model wrapped in
  torch.compile (default inductor settings; compiled by the warm-up calls, which the budget does
  not count).
- reference.release: drops the job's state (zeroing the outputs; emptying the CUDA cache).

The problem's source file goes to a folder private to this worker process (not the job folder,
which the candidate can read); the job folder receives only inputs and init inputs.
"""

from __future__ import annotations

import os
import types
from dataclasses import dataclass
from typing import Any, Callable

from . import compare as compare_mod
from . import loading, numerics, seeding, timing, transfer
from .devices import check_device
from .errors import HostError, traceback_tail
from .tensors import clone_tree, save_private, synchronize, to_cpu, to_device, zero_tree


@dataclass
class ReferenceJob:
    module: types.ModuleType
    model: Any
    get_inputs: Callable[[], Any]
    device: Any
    tolerance: str
    work_dir: str
    trial: int = -1
    inputs: Any = None    # the current trial's, pristine, in the export pool
    outputs: Any = None   # the current trial's reference outputs (detached clones)
    exported: Any = None  # what the candidate may still be reading


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
        self.pool = transfer.export_pool(device)

    def handlers(self) -> dict:
        return {
            "reference.prepare": self.prepare,
            "reference.trial": self.trial,
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
        if not os.path.isdir(request["work_dir"]):
            raise HostError(f"work_dir {request['work_dir']!r} is not a directory")
        reply = {"type": "reference.prepared", "job": job, "ok": False, "error_class": "",
                 "message": "", "traceback_tail": "", "init_inputs": ""}
        try:
            state, init_path = self._build(request)
        except _ReferenceFailure as failure:
            reply.update(error_class="reference_failed", message=failure.message,
                         traceback_tail=failure.tail)
            return reply
        self.jobs[job] = state
        reply.update(ok=True, init_inputs=init_path)
        return reply

    def _build(self, request: dict) -> tuple[ReferenceJob, str]:
        import torch

        device = self.device
        work_dir = request["work_dir"]
        init_seed = request["init_seed"]
        module = None

        def fail(stage: str, error: BaseException) -> _ReferenceFailure:
            loading.unload_program(module)
            return _ReferenceFailure(f"reference {stage} failed: {type(error).__name__}: {error}",
                                     traceback_tail(error))

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
        return ReferenceJob(module=module, model=model, get_inputs=get_inputs, device=device,
                            tolerance=request["tolerance"], work_dir=work_dir), init_path

    # ---------------------------------------------------------------------------------------
    def trial(self, request: dict) -> dict:
        import torch

        state = self._job(request["job"])
        trial = request["trial"]
        reply = {"type": "reference.trial_ready", "job": request["job"], "trial": trial, "ok": False,
                 "error_class": "", "message": "", "traceback_tail": "", "inputs": None}
        self._drop_trial(state)
        device = state.device
        try:
            seeding.seed_everything(request["seed"])
            with numerics.harness_call(), transfer.allocating_from(self.pool, device), torch.device(device):
                inputs = state.get_inputs()
                if not isinstance(inputs, (list, tuple)):
                    raise TypeError(f"get_inputs() returned a {type(inputs).__name__}, not a list")
                inputs = to_device(list(inputs), device)
            with numerics.harness_call():
                outputs = state.model(*clone_tree(inputs))
            synchronize(device)
            problem = compare_mod.find_unsupported(outputs)
            if problem:
                raise TypeError(f"Model.forward returned unsupported outputs: {problem}")
            state.outputs = clone_tree(outputs)
            del outputs
        except BaseException as error:  # noqa: BLE001 - problem code may raise anything
            reply.update(error_class="reference_failed", traceback_tail=traceback_tail(error),
                         message=f"reference run failed: {type(error).__name__}: {error}")
            return reply
        state.trial, state.inputs = trial, inputs
        path = os.path.join(state.work_dir, f"inputs-{trial}.pt")
        descriptor, state.exported = transfer.export_tree(inputs, device, path)
        reply.update(ok=True, inputs=descriptor)
        return reply

    def _drop_trial(self, state: ReferenceJob) -> None:
        zero_tree(state.outputs)
        state.trial, state.inputs, state.outputs, state.exported = -1, None, None, None

    # ---------------------------------------------------------------------------------------
    def compare(self, request: dict) -> dict:
        state = self._job(request["job"])
        trial = request["trial"]
        if trial != state.trial:
            raise HostError(f"trial {trial} is not the current trial ({state.trial})")
        reply = {"type": "reference.compared", "job": request["job"], "trial": trial}
        try:
            candidate = transfer.import_tree(request["outputs"], state.device, clone=False, folder=state.work_dir)
        except transfer.TransferError as error:
            reply.update(verdict="output_mismatch", max_abs_diff=None, mean_abs_diff=None,
                         message=f"the candidate's outputs could not be received: {error}")
            return reply
        numerics.apply_numerics()
        result = compare_mod.compare(state.outputs, candidate, state.tolerance)
        del candidate
        reply.update(result)
        return reply

    # ---------------------------------------------------------------------------------------
    def time(self, request: dict) -> dict:
        import torch

        state = self._job(request["job"])
        if state.inputs is None:
            raise HostError("reference.time needs a trial's inputs (send reference.trial first)")
        inputs = clone_tree(state.inputs)
        model = state.model
        if request["method"] == "compile":
            model = torch.compile(model)
            with torch.no_grad(), numerics.harness_call():
                model(*inputs)  # compiles outside the timed region and the budget
            synchronize(state.device)
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
            self._drop_trial(state)
            loading.unload_program(state.module)
            del state
            if torch.device(self.device).type == "cuda":
                torch.cuda.synchronize(self.device)
                torch.cuda.ipc_collect()
                torch.cuda.empty_cache()
        return {"type": "reference.released", "job": request["job"]}
