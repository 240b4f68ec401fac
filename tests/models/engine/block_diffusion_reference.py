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

Infilling (infill) denoises a span between given text the same way; see its docstring.
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


def denoise_block(model, x, lo, hi, s, mask_id, generator, mask, position_ids=None, device="cpu"):
    """Commits x[lo:hi] (a list, in place) until no mask is left; every pass recomputes x[:hi] under
    `mask` ([1, 1, hi, hi]) at `position_ids` (None: 0..hi-1)."""
    block, schedule = hi - lo, transfer_schedule(s["block_length"], s["denoising_steps"])
    positions = None if position_ids is None else torch.tensor([position_ids[:hi]], device=device)
    step = 0
    while True:
        masked = [j for j in range(block) if x[lo + j] == mask_id]
        if not masked:
            return
        ids = torch.tensor([x[:hi]], device=device)
        logits = model(input_ids=ids, position_ids=positions, attention_mask=mask.to(device)).logits[0, lo:hi].float()
        logits[:, mask_id] = float("-inf")  # the mask token is never drawn (the engine's README)
        tokens, filtered, unfiltered = sample(logits, s, generator)
        probs = filtered if s["confidence"] == "filtered" else unfiltered
        confidence = [float(probs[j, tokens[j]]) for j in range(block)]
        entropies = [entropy(probs[j]) for j in range(block)]
        k = min(schedule[step] if step < len(schedule) else 1, len(masked))
        for j in choose(s, masked, confidence, entropies, k):
            x[lo + j] = int(tokens[j])
        step += 1


def cut(generated, wanted, stop_tokens):
    """(generated cut to `wanted` and before the first stop token, whether it stopped or is full), or
    None while neither."""
    generated = generated[:wanted]
    stops = [i for i, t in enumerate(generated) if t in stop_tokens]
    if stops:
        return generated[:stops[0]], True
    return (generated, False) if len(generated) >= wanted else None


@torch.no_grad()
def generate(model, prompt, s, mask_id, device="cpu"):
    """Returns (new tokens cut at the first stop token and at max_new_tokens, stopped)."""
    block, new = s["block_length"], s["max_new_tokens"]
    length = len(prompt)
    blocks = (length + new + block - 1) // block
    x = list(prompt) + [mask_id] * (blocks * block - length)
    generator = torch.Generator(device=device).manual_seed(s["seed"])
    for b in range(length // block, blocks):
        lo, hi = b * block, (b + 1) * block
        denoise_block(model, x, lo, hi, s, mask_id, generator, block_causal_mask(hi, block), device=device)
        result = cut(x[length:hi], new, s["stop_tokens"])
        if result:
            return result
    raise AssertionError("unreachable: the last block reaches max_new_tokens")


@torch.no_grad()
def infill(model, before, after, span_tokens, s, mask_id, device="cpu"):
    """Fills the span between `before` and `after` (span_tokens rounded up to whole blocks, M): the
    sequence is [before, after, span] in that order, so that under the block-causal mask the span
    sees the text on both sides, with the rotary positions of the text's order: before 0..B-1,
    span B..B+M-1, after B+M..B+M+A-1. Blocks are counted back from the span (the first may be
    partial). Returns (the span's tokens cut at the first stop token and at span_tokens, stopped)."""
    block = s["block_length"]
    b, a = len(before), len(after)
    span = (span_tokens + block - 1) // block * block
    x = list(before) + list(after) + [mask_id] * span
    position_ids = list(range(b)) + list(range(b + span, b + span + a)) + list(range(b, b + span))
    offset = -(b + a) % block
    generator = torch.Generator(device=device).manual_seed(s["seed"])
    for lo in range(b + a, b + a + span, block):
        hi = lo + block
        mask = block_causal_mask(hi + offset, block)[..., offset:, offset:]
        denoise_block(model, x, lo, hi, s, mask_id, generator, mask, position_ids, device)
        result = cut(x[b + a:hi], span_tokens, s["stop_tokens"])
        if result:
            return result
    raise AssertionError("unreachable: the last block reaches span_tokens")
