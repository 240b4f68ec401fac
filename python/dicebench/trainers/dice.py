"""DICE's kernel reward, judged by dicebench: evaluate_kernel_dataset() is a drop-in for the function
of that name in DICE's training/RL/reward/rl_execute_kernel.py (DICE commit 1abe887), which its
main() calls on the items with test_method == "kernel" (with timeout=300 and flag = "train" or
"evaluation"), and whose `correctness` training/RL/reward/rl_code_reward_kernel.py then z-scores per
item into the rewards. To use it, put after DICE's own definition in rl_execute_kernel.py:

    from dicebench.trainers.dice import evaluate_kernel_dataset  # noqa: E402,F811

Each item's `extracted_output` (one candidate source per response) is judged against its
`pytorch_code` (Model, get_inputs, get_init_inputs) in one judge() call (candidate code, reward
"correctness"), and the fields are filled as DICE fills them, for m = len(extracted_output):

    execution_result  [[dict]] * m   as DICE's child process prints it (see execution_result())
    compiled          [[bool]] * m
    correctness       [[bool]] * m   the correctness reward: compiled and correct, as DICE's
                                     `compiled and correctness`, and no reward-zeroing flag of dicebench's
    step_map          setdefault []

Where DICE starts a fresh `python eval_script.py` per candidate (4 per GPU in training, 1 in
evaluation), dicebench's isolated workers judge them, warm, shared out over every GPU. Its own
Evaluator (unless judge= or the settings give one, e.g. DICEBENCH_URL) checks as DICE's eval.py
does: one correctness trial (num_correct_trials=1) and a uniform 1e-2 tolerance (torch.allclose(...,
atol=1e-2, rtol=1e-2)), `timeout` seconds for a candidate to compile and for it to run, and no
timing (timing=False: DICE's measure_performance=False); DICEBENCH_EVALUATOR overrides any of
these. eval_gpu_id and flag are taken and ignored (as DICE's function ignores eval_gpu_id):
dicebench uses every GPU of DICEBENCH_EVALUATOR's "gpus" (default all).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dicebench
from dicebench.trainers._common import Judge, Settings, current_settings, shared_judge

# Verdicts after which DICE's child process never printed its result: killed at the timeout
# ("Timeout"), or died (its stderr).
_CHILD_LOST = ("timeout", "crashed")


def dice_settings(timeout: float = 180) -> Settings:
    """The settings of the DICE adapter's own Evaluator: the process's (configure() or DICEBENCH_*),
    with DICE's checking under DICEBENCH_EVALUATOR's overrides."""
    settings = current_settings()
    defaults = {"trials": 1, "tolerance": "uniform", "timeout": float(timeout), "compile_timeout": float(timeout),
                "timing": False}
    return settings.replace(evaluator={**defaults, **settings.evaluator})


def execution_result(judgement: dicebench.Judgement) -> dict[str, Any]:
    """One candidate's execution_result entry, with the keys DICE's gives in the same case:

    * it ran and was compared: {"compiled": True, "correctness": bool, "runtime": -1.0 (DICE's
      KernelExecResult default: measure_performance=False), "metadata": {...}}, the metadata with
      DICE's keys where they apply (device, correctness_issue, max_difference, avg_difference,
      runtime_error) and dicebench's (dicebench_verdict, dicebench_flags, and dicebench_speedup
      where the Evaluator timed it);
    * it did not compile or load: {"compiled": False, "correctness": False, "error": "<verdict>: <message>"};
    * it timed out: {"compiled": False, "correctness": False, "error": "Timeout"} (DICE's parent
      on subprocess.TimeoutExpired); it crashed: the same with "crashed: <message>" (DICE: stderr);
    * not judged (its problem failed, or dicebench did): {"compiled": False, "correctness": False,
      "error": "<status>: <why>"}, as DICE reports a child that failed before printing a result."""
    evaluation = judgement.evaluation
    if evaluation is None:
        return {"compiled": False, "correctness": False, "error": f"{judgement.status}: {judgement.error}"}
    verdict = evaluation.verdict
    if verdict == "timeout":
        return {"compiled": False, "correctness": False, "error": "Timeout"}
    if verdict in _CHILD_LOST or not evaluation.compiled:
        error = f"{verdict}: {evaluation.error_message}" if evaluation.error_message else verdict
        return {"compiled": False, "correctness": False, "error": error}
    metadata: dict[str, Any] = {"device": evaluation.device}
    if verdict == "output_mismatch":
        metadata["correctness_issue"] = "Output mismatch"
        if evaluation.max_abs_diff is not None:
            metadata["max_difference"] = [f"{evaluation.max_abs_diff:.6f}"]
        if evaluation.mean_abs_diff is not None:
            metadata["avg_difference"] = [f"{evaluation.mean_abs_diff:.6f}"]
    elif verdict in ("shape_mismatch", "dtype_mismatch"):
        metadata["correctness_issue"] = evaluation.error_message or verdict
    elif verdict == "runtime_error":
        metadata["runtime_error"] = evaluation.error_message
    metadata["dicebench_verdict"] = verdict
    metadata["dicebench_flags"] = dict(evaluation.flags)
    if evaluation.speedup is not None:
        metadata["dicebench_speedup"] = evaluation.speedup
    return {"compiled": True, "correctness": bool(evaluation.correct), "runtime": -1.0, "metadata": metadata}


def evaluate_kernel_dataset(data: list[dict], eval_gpu_id: int = 0, timeout: int = 180, flag: str | None = None, *,
                            judge: Judge | None = None) -> list[dict]:
    """DICE's evaluate_kernel_dataset(data, eval_gpu_id, timeout, flag), judged by dicebench: fills
    each item's execution_result, compiled and correctness (lists of one-element lists, one per
    extracted_output entry) and step_map, in place, and returns `data`. judge: the judge to use
    (default: the process's, from dice_settings(timeout)). As DICE's, a failure to evaluate at all
    (the judge raising: a service out of reach) marks every candidate not compiled, with its error."""
    for item in data:
        m_code = len(item["extracted_output"])
        item["execution_result"] = [[None] for _ in range(m_code)]
        item["compiled"] = [[False] for _ in range(m_code)]
        item["correctness"] = [[False] for _ in range(m_code)]
        item.setdefault("step_map", [])
    tasks = [(idx, c_idx, item.get("pytorch_code", "") or "", code if isinstance(code, str) else "")
             for idx, item in enumerate(data) for c_idx, code in enumerate(item["extracted_output"])]
    if not tasks:
        return data
    try:
        judge = judge if judge is not None else shared_judge(dice_settings(timeout))
        judged: Sequence[dicebench.Judgement | Exception] = judge.judge(
            [t[2] for t in tasks], [t[3] for t in tasks], completions=False, reward="correctness")
    except Exception as e:  # noqa: BLE001 - as DICE's loop records a failed future: every candidate not compiled
        judged = [e] * len(tasks)
    for (idx, c_idx, _, _), judgement in zip(tasks, judged):
        if isinstance(judgement, Exception):
            result: dict[str, Any] = {"compiled": False, "correctness": False, "error": str(judgement)}
            correct = False
        else:
            result = execution_result(judgement)
            correct = bool(result["compiled"] and judgement.reward == 1.0)
        data[idx]["execution_result"][c_idx][0] = result
        data[idx]["compiled"][c_idx][0] = bool(result["compiled"])
        data[idx]["correctness"][c_idx][0] = correct
    return data


def dice_rewards(data: list[dict], *, judge: Judge | None = None, timeout: int = 180) -> list[list[float | None]]:
    """The rewards DICE's rl_code_reward_kernel.py computes from the correctness (per item: the
    z-score of its responses' 0/1 correctness, population std, all zeros where they are all alike),
    straight from dicebench's reward (correctness, zscore=1) in one judge() call, for a pipeline that
    wants the rewards without the per-candidate fields (evaluate_kernel_dataset, which judges the
    same candidates, gives those). One list per item, None for a candidate not judged. dicebench
    groups by problem: items with the same pytorch_code form one group."""
    tasks = [(idx, item.get("pytorch_code", "") or "", code if isinstance(code, str) else "")
             for idx, item in enumerate(data) for code in item["extracted_output"]]
    out: list[list[float | None]] = [[] for _ in data]
    if not tasks:
        return out
    judge = judge if judge is not None else shared_judge(dice_settings(timeout))
    judged = judge.judge([t[1] for t in tasks], [t[2] for t in tasks], completions=False, reward="correctness",
                         zscore=1)
    for (idx, _, _), judgement in zip(tasks, judged):
        out[idx].append(judgement.reward)
    return out
