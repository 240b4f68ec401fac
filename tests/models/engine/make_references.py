#!/usr/bin/env python3
"""Fixture of the engine's fidelity tests: writes small random-weight model folders
(tools/tiny_model/make_model.py) and, beside each, what independent references make of them:

  references.json      the inputs and settings of every check, with the expected tokens
  logits.safetensors   transformers' Qwen3ForCausalLM logits, one tensor per checked row

References: logits of Qwen3ForCausalLM (causal; block-causal through the equivalent 4-D mask),
its greedy generate() over 128 tokens, and block_diffusion_reference.py for block diffusion
(generation and infilling).
All in one process (transformers is imported once).

  make_references.py OUT [--device cuda --dtype bfloat16]
With --device cuda and no GPU visible, it says so and writes nothing (the gpu tests then skip).
With $DICEBENCH_DICE8B_FOLDER naming a DICE-8B-shaped folder (make_model.py --shape dice-8b), the
logits references of that model are written too, into OUT/dice-8b (its references.json names the
folder).
"""
import argparse
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "tiny_model"))
sys.path.insert(0, HERE)

import torch  # noqa: E402

LOGIT_ROWS = {"causal": (1, [[7, 3, 99, 250, 4, 4, 17, 300, 8, 1, 2, 3, 200], [11, 12, 13, 14, 15, 16, 17, 18, 19]]),
              "block_causal": (4, [[5, 6, 7, 8, 9, 10, 11, 12, 13, 14], [20, 21, 300, 400, 22, 23]])}
GREEDY_PROMPTS = [[1, 2, 3, 4, 5], [100, 200, 300, 400, 17, 18, 19, 20, 21, 22, 23], [42, 43, 44, 45, 46, 47, 48, 49]]
BD_PROMPTS = [[3, 1, 4], [1, 5, 9, 2, 6, 5, 3, 5], [8, 9, 7, 9, 3, 2]]
# Infilling: contexts of 8, 7, 11 and 5 tokens (left-padded by 4, 5, 1 and 7 columns to 12 when
# batched), spans of 1 to 3 blocks, one without `after`, one without `before`.
INFILL_ROWS = [{"before": [3, 1, 4, 1, 5], "after": [9, 2, 6], "span_tokens": 8},
               {"before": [2, 7], "after": [1, 8, 2, 8, 1], "span_tokens": 6},
               {"before": [5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8], "after": [], "span_tokens": 12},
               {"before": [], "after": [4, 6, 2, 6, 4], "span_tokens": 3}]


def bd_settings(**changes):
    s = dict(max_new_tokens=24, block_length=4, denoising_steps=4, remasking="low_confidence_static", confidence="filtered",
             confidence_threshold=0.9, entropy_bound=0.5, temperature=1.0, top_k=1, top_p=1.0, seed=0, stop_tokens=[])
    s.update(changes)
    return s


def load(folder, device, dtype):
    from transformers import Qwen3Config, Qwen3ForCausalLM
    config = Qwen3Config.from_pretrained(folder)  # also reads SDAR's config.json (the same network)
    model = Qwen3ForCausalLM.from_pretrained(folder, config=config, dtype=dtype, attn_implementation="sdpa")
    return model.to(device).eval()


@torch.no_grad()
def logits_references(model, arch, device):
    import block_diffusion_reference as bd
    groups, tensors = [], {}
    for name, (block, rows) in LOGIT_ROWS.items():
        if block > 1 and arch != "sdar":
            continue
        for i, row in enumerate(rows):
            ids = torch.tensor([row], device=device)
            mask = bd.block_causal_mask(len(row), block).to(device)
            logits = model(input_ids=ids, attention_mask=mask).logits[0].float()
            if block == 1:  # the 4-D mask is the model's own causal mask: both must agree (on CUDA
                # they take different attention kernels: up to bf16 rounding, the engine's tolerance)
                plain = model(input_ids=ids).logits[0].float()
                differs = (plain - logits).abs().max().item() / logits.abs().max().item()
                assert differs <= (0 if device == "cpu" else 3e-2), f"causal 4-D mask differs from transformers' own causal mask ({differs})"
            tensors[f"{name}.{i}"] = logits.cpu().contiguous()
        groups.append({"name": name, "block_length": block, "rows": rows})
    return groups, tensors


def infill_references(model, mask_id, device):
    import block_diffusion_reference as bd

    def run(name, s, rows):
        results = [bd.infill(model, r["before"], r["after"], r["span_tokens"], s, mask_id, device) for r in rows]
        return {"name": name, "settings": s, "rows": rows, "tokens": [r[0] for r in results], "stopped": [r[1] for r in results]}

    runs = [run("paper", bd_settings(), INFILL_ROWS),
            run("dynamic_unfiltered", bd_settings(remasking="low_confidence_dynamic", confidence="unfiltered",
                                                  confidence_threshold=0.05), INFILL_ROWS)]
    # A stop token that the paper setting puts in the third row's second block: that row stops
    # there, the others go on.
    runs.append(run("paper_with_stop", bd_settings(stop_tokens=[runs[0]["tokens"][2][5]]), INFILL_ROWS))
    assert runs[-1]["stopped"][2], "the stop token must end the third row"
    # Sampling draws from a seeded generator in the same order as the engine: one row.
    runs.append(run("sampled", bd_settings(temperature=0.8, top_k=50, top_p=0.9, seed=1234, remasking="low_confidence_dynamic",
                                           confidence_threshold=0.2), INFILL_ROWS[1:2]))
    return runs


@torch.no_grad()
def references(folder, arch, device, dtype):
    import block_diffusion_reference as bd
    from transformers import GenerationConfig
    model = load(folder, device, dtype)
    out = {"logits": [], "greedy": None, "block_diffusion": [], "infill": []}
    out["logits"], tensors = logits_references(model, arch, device)

    generation = GenerationConfig(do_sample=False, max_new_tokens=128, min_new_tokens=0, eos_token_id=None, pad_token_id=0)
    greedy = []
    for prompt in GREEDY_PROMPTS:
        ids = torch.tensor([prompt], device=device)
        result = model.generate(ids, attention_mask=torch.ones_like(ids), generation_config=generation)
        greedy.append(result[0, len(prompt):].tolist())
    out["greedy"] = {"prompts": GREEDY_PROMPTS, "max_new_tokens": 128, "tokens": greedy}

    if arch == "sdar":
        mask_id = model.config.mask_token_id if hasattr(model.config, "mask_token_id") else None
        with open(os.path.join(folder, "config.json")) as f:
            mask_id = json.load(f)["mask_token_id"]
        cases = {"paper": bd_settings(),
                 "sequential_two_per_step": bd_settings(remasking="sequential", denoising_steps=2),
                 "dynamic_unfiltered": bd_settings(remasking="low_confidence_dynamic", confidence="unfiltered",
                                                   confidence_threshold=0.05),
                 "entropy_bounded": bd_settings(remasking="entropy_bounded", confidence="unfiltered", entropy_bound=4.0),
                 "static_three_steps": bd_settings(denoising_steps=3, max_new_tokens=17)}
        for name, s in cases.items():
            results = [bd.generate(model, p, s, mask_id, device) for p in BD_PROMPTS]
            out["block_diffusion"].append({"name": name, "settings": s, "prompts": BD_PROMPTS,
                                           "tokens": [r[0] for r in results], "stopped": [r[1] for r in results]})
        # A stop token that the paper setting produces mid-way, so that stopping is exercised.
        paper = out["block_diffusion"][0]["tokens"]
        s = bd_settings(stop_tokens=[paper[1][9]])
        results = [bd.generate(model, p, s, mask_id, device) for p in BD_PROMPTS]
        out["block_diffusion"].append({"name": "paper_with_stop", "settings": s, "prompts": BD_PROMPTS,
                                       "tokens": [r[0] for r in results], "stopped": [r[1] for r in results]})
        # Sampling draws from a seeded generator in the same order as the engine: one prompt.
        s = bd_settings(temperature=0.8, top_k=50, top_p=0.9, seed=1234, remasking="low_confidence_dynamic",
                        confidence_threshold=0.2)
        result = bd.generate(model, BD_PROMPTS[2], s, mask_id, device)
        out["block_diffusion"].append({"name": "sampled", "settings": s, "prompts": [BD_PROMPTS[2]],
                                       "tokens": [result[0]], "stopped": [result[1]]})
        out["infill"] = infill_references(model, mask_id, device)
    return out, tensors


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("make_references.py: no GPU visible; nothing written", file=sys.stderr)
        return 0
    try:
        import transformers  # noqa: F401
        from safetensors.torch import save_file
    except ImportError as error:
        print(f"make_references.py: {error}; the references need tools/requirements.txt installed", file=sys.stderr)
        return 1
    import make_model
    dtype = getattr(torch, args.dtype)
    for name, arch, sharded in [("qwen3", "qwen3", False), ("qwen3-sharded", "qwen3", True), ("sdar", "sdar", False)]:
        folder = os.path.join(args.out, name)
        make_model.make_small(folder, arch, sharded, seed=1)
        data, tensors = references(folder, arch, args.device, dtype)
        data.update(device=args.device, dtype=args.dtype)
        save_file(tensors, os.path.join(folder, "logits.safetensors"))
        with open(os.path.join(folder, "references.json"), "w") as f:
            json.dump(data, f)
    dice_8b = os.environ.get("DICEBENCH_DICE8B_FOLDER")
    shutil.rmtree(os.path.join(args.out, "dice-8b"), ignore_errors=True)  # never stale
    if dice_8b:
        model = load(dice_8b, args.device, dtype)
        groups, tensors = logits_references(model, "sdar", args.device)
        del model
        folder = os.path.join(args.out, "dice-8b")
        os.makedirs(folder, exist_ok=True)
        save_file(tensors, os.path.join(folder, "logits.safetensors"))
        with open(os.path.join(folder, "references.json"), "w") as f:
            json.dump({"model_folder": os.path.abspath(dice_8b), "logits": groups, "device": args.device,
                       "dtype": args.dtype}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
