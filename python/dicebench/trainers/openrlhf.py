"""OpenRLHF's reward function judged by dicebench: this file is itself what --reward.remote_url
names (OpenRLHF <= 0.10.1: --remote_rm_url). Written against OpenRLHF 0.11.2.

    --reward.remote_url /path/to/dicebench/trainers/openrlhf.py   (python -c "import dicebench.trainers.openrlhf as m; print(m.__file__)")
    --data.label_key problem        # the dataset column with each prompt's problem

openrlhf/utils/agent.py::SingleTurnAgentExecutor loads the file with spec_from_file_location (so
it imports only absolutely) and, per rollout, runs _fetch_rewards_via_func([query], [prompt],
[label]): `asyncio.to_thread(reward_func, queries, prompts, labels)`, positional, one sample a call,
from many rollouts at once; those concurrent calls are gathered into one judge() call here. The
query is hf_tokenizer.decode(prompt_ids + response_ids, skip_special_tokens=False): the prompt, the
response and special tokens (the end-of-turn one included). The response is the query after its
prompt (response_of), so that the first code block judged is the policy's, not one of the prompt's.
The label is the problem: its PyTorch source or a suite id (kernelbench/level2/40).

It returns what OpenRLHF reads (agent.py SingleTurnAgentExecutor.execute; trainer/ppo_utils/
samples_generator.py _process_response_into_experience): {"rewards": [...], "scores": [...],
"extra_logs": {name: [...]}}, lists of len(queries): rewards the settings' shape (DICEBENCH_REWARD,
default correctness; DICEBENCH_UNJUDGED_REWARD for an item dicebench could not judge), scores the
correctness in [0, 1] (what --dynamic_filtering reads), extra_logs dicebench_compiled,
dicebench_correct, dicebench_speedup and dicebench_judged.

The other way: `dicebench serve` answers OpenRLHF's HTTP reward call itself, with no file,
    --reward.remote_url http://HOST:PORT/v1/openrlhf
POST {"query": [...], "prompts": [...], "labels": [...]} -> {"rewards", "scores" (the rewards),
"extra_logs": {"correct"}}: one server for every vLLM engine (each engine loading this file makes
an Evaluator of its own), and safe against OpenRLHF's retries (it re-sends a request up to 5 times;
an item's id is a hash of its label and response, so a retry waits on the same judging). The route
takes the response as the query after its prompt when the query starts with it exactly; this file
also finds a prompt that decoding changed or OpenRLHF truncated (response_of). With DICEBENCH_URL
set, this file judges through that server too (dicebench.trainers.RemoteJudge).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from dicebench import _dicebench
from dicebench.trainers._common import current_settings, problem_of, reward_value, shared_batcher, summary

logger = logging.getLogger("dicebench.trainers")

# Special tokens a decoded response ends with: <|im_end|>, <|endoftext|>, <|eot_id|>, </s>, <eos>,
# <end_of_turn>, and DeepSeek's end of sentence (written between fullwidth bars, U+FF5C).
_warned = False


def response_of(query: str, prompt: str) -> str:
    """The response in OpenRLHF's query: what follows the prompt (its exact text; else its last
    bytes, for a prompt that decoding changed or OpenRLHF truncated at the left), without the
    special tokens at the end; dicebench serve's /v1/openrlhf takes it the same way (one definition,
    dicebench/openrlhf.hpp). A query in which the prompt cannot be found is taken whole (with a
    warning, once: a code block of the prompt's could then be judged instead of the response's)."""
    global _warned
    response, found = _dicebench.openrlhf_response(query, prompt)
    if not found and not _warned:
        _warned = True
        logger.warning("dicebench.trainers.openrlhf: a query does not hold its prompt; judging the whole query")
    return str(response)


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's reward function: {"rewards", "scores", "extra_logs"} for the queries, in order."""
    if not len(queries) == len(prompts) == len(labels):
        raise ValueError(f"{len(queries)} queries, {len(prompts)} prompts and {len(labels)} labels: OpenRLHF gives "
                         "one of each per sample")
    settings = current_settings().for_completions()
    responses = [response_of(q, p) for q, p in zip(queries, prompts)]
    problems = [problem_of(label) for label in labels]
    if settings.zscore:  # normalised within this call's groups: one call, not gathered with others
        judged = settings.judge_items(problems, responses)
    else:
        batcher = shared_batcher(settings)
        futures = [batcher.submit(p, r) for p, r in zip(problems, responses)]
        judged = [f.result() for f in futures]
    facts = [summary(j) for j in judged]
    return {
        "rewards": [reward_value(j, settings.unjudged_reward) for j in judged],
        "scores": [f["correct"] for f in facts],
        "extra_logs": {
            "dicebench_compiled": [f["compiled"] for f in facts],
            "dicebench_correct": [f["correct"] for f in facts],
            "dicebench_speedup": [f["speedup"] for f in facts],
            "dicebench_judged": [1.0 if f["status"] == "judged" else 0.0 for f in facts],
        },
    }
