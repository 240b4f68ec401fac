"""A plain Python implementation of block-diffusion decoding as SDAR and DICE do it, for checking
the engine. Written from the algorithm's description, independently of the engine: no KV cache
(every pass recomputes the whole sequence under the block-causal mask), per-position Python loops
for the remasking strategies, SDAR's sampling function.

The region after the prompt, up to prompt + max_new_tokens rounded up to whole blocks, is set to
the mask token. Blocks are denoised left to right, starting with the one holding the prompt's
end; each pass draws a token for every position of the block and commits some masked ones, chosen
by the strategy, k = the step's share of the block (block_length / steps, the remainder to the
first steps; past the schedule, 1), never more than are masked. Committed tokens stay. Ties go to
the leftmost position.
"""
import math

import torch


def block_causal_mask(length, block_length):
    blocks = torch.arange(length) // block_length
    return (blocks[None, :] <= blocks[:, None])[None, None]  # [1, 1, length, length], True: attend


def transfer_schedule(block_length, steps):
    return [block_length // steps + (1 if i < block_length % steps else 0) for i in range(steps)]


def sample(logits, s, generator):
    """SDAR's sample_with_temperature_topk_topp, returning (tokens, filtered probs, unfiltered probs)."""
    if s["temperature"] == 0:
        probs = torch.softmax(logits, -1)
        tokens = logits.argmax(-1)
        return tokens, torch.nn.functional.one_hot(tokens, logits.shape[-1]).float(), probs
    scaled = logits / s["temperature"] if s["temperature"] != 1.0 else logits
    filtered = scaled
    if s["top_k"] > 0:
        kth = torch.topk(filtered, min(s["top_k"], filtered.shape[-1]))[0][..., -1, None]
        filtered = torch.where(filtered < kth, torch.full_like(filtered, -math.inf), filtered)
    if s["top_p"] < 1.0:
        sorted_logits, order = torch.sort(filtered, descending=True)
        remove = torch.cumsum(torch.softmax(sorted_logits, -1), -1) > s["top_p"]
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        filtered = filtered.masked_fill(torch.zeros_like(remove).scatter(-1, order, remove), -math.inf)
    probs = torch.softmax(filtered, -1)
    tokens = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    return tokens, probs, torch.softmax(scaled, -1)


def entropy(p):
    return float(-(p * p.clamp_min(torch.finfo(torch.float32).tiny).log()).sum())


def choose(s, masked, confidence, entropies, k):
    """The block offsets this pass commits."""
    strategy = s["remasking"]
    most_confident = sorted(masked, key=lambda j: (-confidence[j], j))[:k]
    if strategy == "sequential":
        return masked[:k]
    if strategy == "low_confidence_static":
        return most_confident
    if strategy == "low_confidence_dynamic":
        confident = [j for j in masked if confidence[j] > s["confidence_threshold"]]
        return confident if len(confident) >= k else most_confident
    if strategy == "entropy_bounded":
        chosen, total = [], 0.0
        for j in sorted(masked, key=lambda j: (entropies[j], j)):
            total += entropies[j]
            if total > s["entropy_bound"]:
                break
            chosen.append(j)
        return chosen or sorted(masked, key=lambda j: (entropies[j], j))[:1]
    raise ValueError(strategy)


@torch.no_grad()
def generate(model, prompt, s, mask_id, device="cpu"):
    """Returns (new tokens cut at the first stop token and at max_new_tokens, stopped)."""
    block, steps, new = s["block_length"], s["denoising_steps"], s["max_new_tokens"]
    length = len(prompt)
    blocks = (length + new + block - 1) // block
    x = list(prompt) + [mask_id] * (blocks * block - length)
    generator = torch.Generator(device=device).manual_seed(s["seed"])
    schedule = transfer_schedule(block, steps)
    for b in range(length // block, blocks):
        lo, hi = b * block, (b + 1) * block
        step = 0
        while True:
            masked = [j for j in range(block) if x[lo + j] == mask_id]
            if not masked:
                break
            ids = torch.tensor([x[:hi]], device=device)
            logits = model(input_ids=ids, attention_mask=block_causal_mask(hi, block).to(device)).logits[0, lo:hi].float()
            logits[:, mask_id] = float("-inf")  # the mask token is never drawn (the engine's README)
            tokens, filtered, unfiltered = sample(logits, s, generator)
            probs = filtered if s["confidence"] == "filtered" else unfiltered
            confidence = [float(probs[j, tokens[j]]) for j in range(block)]
            entropies = [entropy(probs[j]) for j in range(block)]
            k = min(schedule[step] if step < len(schedule) else 1, len(masked))
            for j in choose(s, masked, confidence, entropies, k):
                x[lo + j] = int(tokens[j])
            step += 1
        generated = x[length:hi][:new]
        stops = [i for i, t in enumerate(generated) if t in s["stop_tokens"]]
        if stops:
            return generated[:stops[0]], True
        if len(generated) >= new:
            return generated, False
    raise AssertionError("unreachable: the last block reaches max_new_tokens")
