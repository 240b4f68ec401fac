"""The reference role: builds the problem's Model, makes each trial's inputs, keeps that trial's
reference outputs, compares a candidate's outputs with them and times the baseline. It never runs
candidate code.

Handlers (requests and replies are defined in protocol.py):
- reference.prepare: seed_everything(init_seed); init_inputs = get_init_inputs();
  seed_everything(init_seed); model = Model(*init_inputs).to(device), then .eval() (or .train()
  when model_mode is "train"); tensors among the init inputs are moved to the device first, as
  the candidate's are. The init inputs are saved to work_dir/init_inputs.pt (checked to load back
  with weights_only=True, since the candidate loads them that way). A failure in the problem's
  code is ok=false with error_class "reference_failed". The built reference is kept (a pristine
  deep copy, up to TEMPLATES_KEPT problems and TEMPLATE_BYTES of parameters): the problem's next
  jobs (same source, init seed and model mode) get a deep copy of it instead of building it again,
  the problem's per-job cost a level-3 model's construction makes large.
- reference.trial: seed_everything(seed); inputs = get_inputs() under the device as torch's
  default device (inputs are made on the GPU directly: level-1 inputs reach 17 GB), in this
  process's own memory; unless `outputs` is false (a timed call the host will not check), the
  model runs on its own clones and the outputs stay in this process's memory, replacing the
  previous trial's (whose memory is zeroed first, so no later allocation can find them). Only then
  is a copy of the inputs made in this worker's export pool and exported to the candidate
  (transfer.py): a candidate that kept an earlier trial's mapping of the pool, which the allocator
  may hand out again, can write only into what it is given, never into the inputs the reference
  computes from. The reply gives the inputs' and outputs' sizes in bytes (the memory floor).
- reference.batch: the inputs of a batch of timed calls in one request, each made as
  reference.trial makes a trial's (its seed, in this process's own memory, the reference's outputs
  computed from its own copy and kept where the call is checked), then copied into one export
  (transfer.BatchWriter: one allocation of the export pool on CUDA, a file per call on the CPU),
  masked with each call's key where the batch holds more than one call. As many calls are made as
  fit the request's budget and a quarter of the memory free (on CUDA: the device's, with what this
  process's allocator holds unused; on the CPU: the host's), each counted as its inputs' bytes
  plus, for a checked call, its outputs' (the largest seen so far); never fewer than one. A call
  whose inputs outgrow the first call's (get_inputs changed shape) ends the batch before it. The
  previous trial's or batch's outputs are zeroed and everything exported before is let go first.
- reference.compare: receives the candidate's outputs (a file loaded with weights_only=True, or
  CUDA IPC handles checked field by field; what cannot be received is "output_mismatch") and
  compares them with the kept outputs of that trial (compare.py).
- reference.time: times the Model (dicebench_timing) as the candidate is timed: before every call, outside
  the timed region, fresh inputs from get_inputs() under a seed derived from the request's seed and
  the call's index, and the numeric settings re-applied; with warm_calls, an untimed call on fresh
  inputs of its own before each timed one; with method "compile", the Model wrapped
  in torch.compile (default inductor settings; compiled by a first call, which the budget does not
  count).
- reference.traits: judges the problem's degenerate traits (protocol.PROBLEM_TRAITS) from the
  reference alone, on inputs drawn from each of the request's seeds: constant_output (the first
  draw's outputs would be judged correct on every other draw: an answer computed once passes for any
  input), zeros_pass (all-zero outputs would be judged correct), near_constant_output (an output of
  more than one element filled with its own mean would be: its variance is near zero),
  output_equals_input (returning one of the inputs would be). A trait holds when it holds for every
  output in every draw.
- reference.bandwidth: the device's memory bandwidth from a device-to-device copy (best of
  several), bytes read plus bytes written per second.
- reference.release: drops the job's state (zeroing the outputs), then zeroes every block of the
  CUDA allocator no tensor holds, the export pool's included, and empties its cache (scrub.py): a
  later job's candidate maps whole export pool segments, and what goes back to the driver may reach
  another process as it is. Wherever else the reference empties the cache it zeroes first alike.

The problem's source file goes to a folder private to this worker process (not the job folder,
which the candidate can read); the job folder receives only inputs and init inputs.
"""

from __future__ import annotations

import hashlib
import os
import time as time_module
import types
from dataclasses import dataclass
from typing import Any, Callable

from . import compare as compare_mod
import dicebench_timing as timing

from . import loading, numerics, protocol, scrub, seeding, transfer
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
    inputs_file: str | None = None  # the current trial's inputs file (CPU transfers)
    shared_module: bool = False     # the module belongs to a kept reference (not unloaded with the job)
    batch_outputs: dict | None = None  # the current batch's kept outputs, by trial
    batch_files: list | None = None    # the current batch's inputs files (CPU transfers)
    output_bytes: int = 0              # the largest outputs computed so far


class _ReferenceFailure(Exception):
    def __init__(self, message: str, tail: str = ""):
        super().__init__(message)
        self.message = message
        self.tail = tail


@dataclass
class _Template:
    """A problem's built reference, kept for the problem's next jobs: its module, a pristine copy of
    the model as built from the init inputs (each job gets a deep copy of it, so a job's forward
    passes, BatchNorm's running statistics say, never reach another's), and the init inputs."""
    module: types.ModuleType
    model: Any
    get_inputs: Callable[[], Any]
    init_inputs_cpu: list
    parameter_bytes: int


# Built references kept at once (the least recently used goes first), and the most bytes of
# parameters and buffers they may hold together.
TEMPLATES_KEPT = 4
TEMPLATE_BYTES = 8 << 30


class ReferenceRole:
    """The reference worker's state: prepared jobs by id, and the problems' built references."""

    def __init__(self, device: Any, private_dir: str):
        self.device = device
        self.private_dir = private_dir
        self.jobs: dict[str, ReferenceJob] = {}
        self.pool = transfer.export_pool(device)
        self.templates: dict[tuple, _Template] = {}  # insertion order: least recently used first
        self.templates_built = 0  # references built (each job of a kept problem copies one instead)

    def handlers(self) -> dict:
        return {
            "reference.prepare": self.prepare,
            "reference.trial": self.trial,
            "reference.batch": self.batch,
            "reference.compare": self.compare,
            "reference.time": self.time,
            "reference.traits": self.traits,
            "reference.bandwidth": self.bandwidth,
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
        """The job's reference: a deep copy of the problem's kept one where this worker built it
        before (same source, init seed, model mode), else built and, where it copies, kept."""
        import copy

        key = (hashlib.sha256(request["problem_source"].encode()).hexdigest(), request["init_seed"],
               request["model_mode"])
        template = self.templates.pop(key, None)
        if template is not None:
            self.templates[key] = template  # now the most recently used
            init_path = os.path.join(request["work_dir"], "init_inputs.pt")
            save_private(template.init_inputs_cpu, init_path)
            return ReferenceJob(module=template.module, model=copy.deepcopy(template.model),
                                get_inputs=template.get_inputs, device=self.device, tolerance=request["tolerance"],
                                work_dir=request["work_dir"], shared_module=True), init_path
        state, init_path, init_inputs_cpu = self._build_new(request)
        self.templates_built += 1
        try:
            pristine = copy.deepcopy(state.model)
        except Exception:  # noqa: BLE001 - a model that does not copy is built for every job
            return state, init_path
        size = tree_bytes(list(pristine.parameters()) + list(pristine.buffers()))
        if size <= TEMPLATE_BYTES:
            self.templates[key] = _Template(state.module, pristine, state.get_inputs, init_inputs_cpu, size)
            state.shared_module = True
            while len(self.templates) > TEMPLATES_KEPT or sum(t.parameter_bytes for t in self.templates.values()) > TEMPLATE_BYTES:
                self._drop_template(next(iter(self.templates)))
        return state, init_path

    def _drop_template(self, key: tuple) -> None:
        template = self.templates.pop(key)
        if not any(job.module is template.module for job in self.jobs.values()):
            loading.unload_program(template.module)
        del template
        scrub.release_cached(self.device, [self.pool])

    def _build_new(self, request: dict) -> tuple[ReferenceJob, str, list]:
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
            init_inputs_cpu = to_cpu(init_inputs)
            save_private(init_inputs_cpu, init_path)
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
                            tolerance=request["tolerance"], work_dir=work_dir), init_path, init_inputs_cpu

    # ---------------------------------------------------------------------------------------
    def trial(self, request: dict) -> dict:
        state = self._job(request["job"])
        trial = request["trial"]
        reply = {"type": "reference.trial_ready", "job": request["job"], "trial": trial, "ok": False,
                 "error_class": "", "message": "", "traceback_tail": "", "inputs": None,
                 "input_bytes": 0, "output_bytes": 0}
        self._drop_trial(state)
        device = state.device
        try:
            inputs = self._make_inputs(state, request["seed"], None)
            if request["outputs"]:
                state.outputs = self._outputs_for(state, inputs)
                state.output_bytes = max(state.output_bytes, tree_bytes(state.outputs))
        except BaseException as error:  # noqa: BLE001 - problem code may raise anything
            reply.update(error_class="reference_failed", traceback_tail=traceback_tail(error),
                         message=f"reference run failed: {type(error).__name__}: {error}")
            return reply
        state.trial, state.inputs = trial, inputs
        exported = inputs
        if self.pool is not None:  # the candidate's copy, made after the reference's outputs
            try:
                with transfer.allocating_from(self.pool, device):
                    exported = clone_tree(inputs)
            except BaseException as error:  # noqa: BLE001 - out of memory, say
                raise HostError(f"copying the inputs for export failed: {type(error).__name__}: {error}") from None
        path = os.path.join(state.work_dir, f"inputs-{trial}.pt")
        descriptor, state.exported = transfer.export_tree(exported, device, path)
        state.inputs_file = path if descriptor.get("transport") == "raw_file" else None
        reply.update(ok=True, inputs=descriptor, input_bytes=tree_bytes(inputs),
                     output_bytes=tree_bytes(state.outputs) if request["outputs"] else 0)
        return reply

    def batch(self, request: dict) -> dict:
        state = self._job(request["job"])
        calls = request["calls"]
        reply = {"type": "reference.batch_ready", "job": request["job"], "ok": False, "error_class": "",
                 "message": "", "traceback_tail": "", "made": 0, "inputs": [], "masked": False,
                 "input_bytes": 0, "output_bytes": 0}
        self._drop_trial(state)
        device = state.device
        limit = min(request["budget_bytes"], batch_memory_limit(device))
        kept: dict = {}
        descriptors: list = []
        input_bytes = 0
        try:
            inputs: list | None = self._make_inputs(state, calls[0]["seed"], None)
            region = transfer.batch_region_bytes(inputs)
            count, used = 0, 0
            for call in calls:  # how many fit: inputs, and the outputs of checked calls
                cost = region + (state.output_bytes if call["outputs"] else 0)
                if count and used + cost > limit:
                    break
                used += cost
                count += 1
            masked = count > 1
            try:
                writer = transfer.BatchWriter(device, count, region, self.pool)
            except BaseException as error:  # noqa: BLE001 - out of memory, say
                raise HostError(f"allocating the batch's inputs for export failed: {type(error).__name__}: "
                                f"{error}") from None
            files: list = []
            state.batch_outputs, state.batch_files, state.exported = kept, files, writer
            for index, call in enumerate(calls[:count]):
                if index:
                    inputs = self._make_inputs(state, call["seed"], None)
                    if transfer.batch_region_bytes(inputs) > region:
                        break  # get_inputs changed shape: the next batch starts with this call
                if call["outputs"]:
                    kept[call["trial"]] = self._outputs_for(state, inputs)
                    state.output_bytes = max(state.output_bytes, tree_bytes(kept[call["trial"]]))
                input_bytes = max(input_bytes, tree_bytes(inputs))
                path = os.path.join(state.work_dir, f"inputs-{call['trial']}.pt")
                descriptors.append(writer.write(index, inputs, call["mask_key"] if masked else None, path))
                if descriptors[-1].get("transport") == "raw_file":
                    files.append(path)
                inputs = None
        except HostError:
            raise
        except BaseException as error:  # noqa: BLE001 - problem code may raise anything
            self._drop_trial(state)
            reply.update(error_class="reference_failed", traceback_tail=traceback_tail(error),
                         message=f"reference run failed: {type(error).__name__}: {error}")
            return reply
        reply.update(ok=True, made=len(descriptors), inputs=descriptors, masked=masked, input_bytes=input_bytes,
                     output_bytes=max((tree_bytes(v) for v in kept.values()), default=0))
        return reply

    @staticmethod
    def _outputs_for(state: ReferenceJob, inputs: Any) -> Any:
        """The reference's outputs for `inputs`, computed on its own copy of them and kept as
        detached clones; outputs compare.py cannot compare are the problem's error."""
        with numerics.harness_call():
            outputs = state.model(*clone_tree(inputs))
        synchronize(state.device)
        problem = compare_mod.find_unsupported(outputs)
        if problem:
            raise TypeError(f"Model.forward returned unsupported outputs: {problem}")
        return clone_tree(outputs)

    def _make_inputs(self, state: ReferenceJob, seed: int, pool: Any) -> list:
        """get_inputs() under `seed`, made on the device (from `pool` when given), as a list."""
        import torch

        device = state.device
        seeding.seed_everything(seed)
        with numerics.harness_call(), transfer.allocating_from(pool, device), torch.device(device):
            inputs = state.get_inputs()
            if not isinstance(inputs, (list, tuple)):
                raise TypeError(f"get_inputs() returned a {type(inputs).__name__}, not a list")
            return to_device(list(inputs), device)

    def _drop_trial(self, state: ReferenceJob) -> None:
        """Zeroes the kept outputs of the current trial or batch and lets go of what it exported."""
        zero_tree(state.outputs)
        for outputs in (state.batch_outputs or {}).values():
            zero_tree(outputs)
        state.trial, state.inputs, state.outputs, state.exported = -1, None, None, None
        files = ([state.inputs_file] if state.inputs_file else []) + (state.batch_files or [])
        state.inputs_file, state.batch_outputs, state.batch_files = None, None, None
        for path in files:  # the candidate has read them: timed calls would otherwise pile them up
            try:
                os.unlink(path)
            except OSError:
                pass

    # ---------------------------------------------------------------------------------------
    def compare(self, request: dict) -> dict:
        state = self._job(request["job"])
        trial = request["trial"]
        if trial == state.trial:
            expected = state.outputs
        elif state.batch_outputs is not None and trial in state.batch_outputs:
            expected = state.batch_outputs[trial]
        else:
            raise HostError(f"trial {trial} is not the current trial ({state.trial}) nor a checked call of the "
                            "current batch")
        reply = {"type": "reference.compared", "job": request["job"], "trial": trial}
        try:
            candidate = transfer.import_tree(request["outputs"], state.device, clone=False, folder=state.work_dir)
        except transfer.TransferError as error:
            reply.update(verdict="output_mismatch", max_abs_diff=None, mean_abs_diff=None, margin=None,
                         message=f"the candidate's outputs could not be received: {error}")
            return reply
        numerics.apply_numerics()
        result = compare_mod.compare(expected, candidate, state.tolerance)
        del candidate
        reply.update(result)
        return reply

    # ---------------------------------------------------------------------------------------
    def time(self, request: dict) -> dict:
        import torch

        state = self._job(request["job"])
        model = state.model
        current: dict = {"inputs": None, "call": 0}

        def fresh_inputs() -> None:  # outside the timed region, before every call
            current["inputs"] = None  # the previous call's inputs are freed first
            current["inputs"] = self._make_inputs(state, derived_seed(request["seed"], current["call"]), None)
            current["call"] += 1
            numerics.apply_numerics()

        try:
            if request["method"] == "compile":
                model = torch.compile(model)
                fresh_inputs()
                with torch.no_grad(), numerics.harness_call():
                    model(*current["inputs"])  # compiles outside the timed region and the budget
                synchronize(state.device)
            timer = timing.timer_for_device(state.device)

            def call() -> None:
                with torch.no_grad():
                    model(*current["inputs"])

            summary = timing.time_adaptive(
                call, warmup=request["warmup"], min_trials=request["min_trials"],
                max_trials=request["max_trials"], budget_s=float(request["budget_s"]),
                target_rel_ci=float(request["target_rel_ci"]), timer=timer, before_each=fresh_inputs,
                warm_calls=request["warm_calls"])
        except BaseException as error:  # noqa: BLE001 - problem code may raise anything
            raise HostError(f"timing the reference failed: {type(error).__name__}: {error}") from None
        finally:
            current["inputs"] = None
        return {"type": "reference.timed", "job": request["job"], "timing": summary}

    # ---------------------------------------------------------------------------------------
    def traits(self, request: dict) -> dict:
        state = self._job(request["job"])
        reply = {"type": "reference.traits_judged", "job": request["job"], "ok": False, "message": "",
                 "traceback_tail": "", "traits": [], "details": {}}
        try:
            traits, details = judge_traits(state, lambda seed: self._make_inputs(state, seed, None),
                                           request["seeds"])
        except BaseException as error:  # noqa: BLE001 - problem code may raise anything
            reply.update(message=f"judging the problem failed: {type(error).__name__}: {error}",
                         traceback_tail=traceback_tail(error))
            return reply
        finally:
            scrub.release_cached(state.device, [self.pool])
        reply.update(ok=True, traits=traits, details=details)
        return reply

    # ---------------------------------------------------------------------------------------
    def bandwidth(self, request: dict) -> dict:
        bytes_per_second, method = measure_bandwidth(self.device)
        return {"type": "reference.bandwidth_measured", "job": request["job"],
                "bytes_per_second": bytes_per_second, "method": method}

    # ---------------------------------------------------------------------------------------
    def release(self, request: dict) -> dict:
        import torch

        state = self.jobs.pop(request["job"], None)
        if state is not None:
            self._drop_trial(state)
            if not state.shared_module:
                loading.unload_program(state.module)
            del state
            transfer.forget_mappings()
            if torch.device(self.device).type == "cuda":
                torch.cuda.synchronize(self.device)
                # The export pool keeps its segments, and the next job's exports are carved out of
                # them: a candidate maps a whole segment (scrub.py).
                scrub.release_cached(self.device, [self.pool])
        return {"type": "reference.released", "job": request["job"]}


BATCH_MEMORY_SHARE = 4  # a batch takes at most 1/4 of the memory free when it is made


def batch_memory_limit(device: Any) -> int:
    """Bytes a batch of timed calls may take: a quarter of the device's free memory (with what this
    process's CUDA allocator holds unused), or of the host's available memory on the CPU."""
    import torch

    parsed = torch.device(device)
    if parsed.type == "cuda":
        free, _ = torch.cuda.mem_get_info(parsed)
        free += torch.cuda.memory_reserved(parsed) - torch.cuda.memory_allocated(parsed)
    else:
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            free = 1 << 30
    return max(int(free) // BATCH_MEMORY_SHARE, 1)


def derived_seed(seed: int, index: int) -> int:
    """The seed of call `index` of a timing loop whose base seed is `seed` (63 bits, from SHA-256)."""
    digest = hashlib.sha256(f"{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def tree_bytes(value: Any) -> int:
    """Bytes held by the tensors of a tree (elements times element size, views counted whole)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (tuple, list)):
        return sum(tree_bytes(v) for v in value)
    return 0


def _leaves(value: Any) -> list:
    """The tensors of a tree in order; Python numbers as 0-d tensors."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value.detach()]
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, (bool, int, float, complex)):
        return [torch.tensor(value)]
    return []


def _constant_like(output: Any) -> Any:
    """A tensor of output's shape and dtype holding one value everywhere: its mean (floating and
    complex dtypes), else its first element."""
    import torch

    if output.numel() == 0:
        return output.clone()
    if output.is_floating_point() or output.is_complex():
        value = output.mean(dtype=torch.complex128 if output.is_complex() else torch.float64).to(output.dtype)
    else:
        value = output.reshape(-1)[0]
    return value.expand(output.shape).contiguous()


def judge_traits(state: ReferenceJob, make_inputs: Callable[[int], list], seeds: list) -> tuple[list, dict]:
    """The problem's traits (see the module docstring) and what was measured, per output."""
    import torch

    tolerance = state.tolerance
    passes = compare_mod.passes
    first_outputs: list = []
    holds = dict.fromkeys(protocol.PROBLEM_TRAITS, True)
    details: list[dict] = []
    for index, seed in enumerate(seeds):
        inputs = make_inputs(seed)
        with torch.no_grad(), numerics.harness_call():
            outputs = _leaves(state.model(*clone_tree(inputs)))
        synchronize(state.device)
        if index == 0:
            first_outputs = [o.clone() for o in outputs]
            details = [{"dtype": str(o.dtype).removeprefix("torch."), "shape": list(o.shape), "max_abs": 0.0,
                        "std": 0.0} for o in outputs]
        elif len(outputs) != len(first_outputs) or not all(
                o.shape == f.shape and o.dtype == f.dtype and passes(o, f, tolerance)
                for o, f in zip(outputs, first_outputs)):
            holds["constant_output"] = False  # the first draw's answer fails on this one
        input_leaves = _leaves(inputs)
        for position, output in enumerate(outputs):
            if position < len(details) and output.numel():
                wide = output.abs().to(torch.float64)
                details[position]["max_abs"] = max(details[position]["max_abs"], float(wide.max().item()))
                if output.numel() > 1 and not output.is_complex():
                    details[position]["std"] = max(details[position]["std"],
                                                   float(output.to(torch.float64).std().item()))
            holds["zeros_pass"] = holds["zeros_pass"] and passes(output, torch.zeros_like(output), tolerance)
            holds["near_constant_output"] = holds["near_constant_output"] and output.numel() > 1 and passes(
                output, _constant_like(output), tolerance)
            holds["output_equals_input"] = holds["output_equals_input"] and any(
                x.shape == output.shape and x.dtype == output.dtype and passes(output, x, tolerance)
                for x in input_leaves)
        del outputs, inputs, input_leaves
    del first_outputs
    return [name for name in protocol.PROBLEM_TRAITS if holds[name]], {"draws": len(seeds), "outputs": details}


BANDWIDTH_BYTES = 1 << 30
BANDWIDTH_REPEATS = 10


def measure_bandwidth(device: Any) -> tuple[float, str]:
    """(bytes per second, method): the best of BANDWIDTH_REPEATS copies of a BANDWIDTH_BYTES buffer
    (CPU: a quarter of it), counting bytes read and written."""
    import torch

    parsed = torch.device(device)
    size = BANDWIDTH_BYTES if parsed.type == "cuda" else BANDWIDTH_BYTES // 4
    source = torch.ones(size, dtype=torch.uint8, device=parsed)
    target = torch.empty_like(source)
    best = float("inf")
    for _ in range(BANDWIDTH_REPEATS + 1):  # the first copy warms up
        if parsed.type == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            target.copy_(source)
            end.record()
            end.synchronize()
            seconds = start.elapsed_time(end) / 1e3
        else:
            began = time_module.perf_counter()
            target.copy_(source)
            seconds = time_module.perf_counter() - began
        best = min(best, seconds)
    del source, target
    scrub.release_cached(parsed)
    return 2 * size / best, f"{parsed.type}_copy_{size >> 20}MiB_best_of_{BANDWIDTH_REPEATS}"
