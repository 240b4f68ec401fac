#!/usr/bin/env python3
"""Writes Hugging Face model folders with random weights for the engine's tests and benchmarks.

  make_model.py OUT --arch qwen3 [--sharded]        small Qwen3ForCausalLM (tied lm_head), fp32
  make_model.py OUT --arch sdar                     small SDAR-style block-diffusion config
                                                    (block_size, mask_token_id; untied lm_head)
  make_model.py OUT --shape dice-8b [--num-layers N] DICE-8B's real shapes in bf16, written tensor
                                                    by tensor without building the model (16 GB),
                                                    with a tokenizer laid out as Qwen3's

Small folders are made with transformers' Qwen3ForCausalLM, so their weights load there as is;
each holds config.json, model.safetensors (or shards and model.safetensors.index.json) and
generation_config.json.
"""
import argparse
import json
import os
import sys

import torch

TINY = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, head_dim=16, max_position_embeddings=1024, rope_theta=1000000.0, rms_norm_eps=1e-6)
DICE_8B = dict(vocab_size=151936, hidden_size=4096, intermediate_size=12288, num_hidden_layers=36, num_attention_heads=32,
               num_key_value_heads=8, head_dim=128, max_position_embeddings=40960, rope_theta=1000000.0, rms_norm_eps=1e-6)
SDAR_FIELDS = dict(architectures=["SDARForCausalLM"], model_type="sdar", block_size=4)
# Larger than transformers' default 0.02: the logits of a random model then have clear maxima, so
# greedy decoding does not hinge on near-ties.
INIT_STD = 0.2


def stop_tokens(vocab_size):
    return [vocab_size - 3, vocab_size - 2]  # stand-ins for <|im_end|>, <|endoftext|>


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


def make_small(out, arch, sharded, seed):
    from transformers import Qwen3Config, Qwen3ForCausalLM
    torch.manual_seed(seed)
    tied = arch == "qwen3"
    config = Qwen3Config(**TINY, tie_word_embeddings=tied, initializer_range=INIT_STD, attention_bias=False,
                         bos_token_id=None, eos_token_id=stop_tokens(TINY["vocab_size"]), pad_token_id=None)
    model = Qwen3ForCausalLM(config).to(torch.float32).eval()
    with torch.no_grad():  # norms away from 1 so that their weights matter
        for name, parameter in model.named_parameters():
            if name.endswith("norm.weight"):
                parameter.uniform_(0.5, 1.5)
    model.save_pretrained(out, safe_serialization=True, max_shard_size="100KB" if sharded else "10GB")
    with open(os.path.join(out, "config.json")) as f:
        saved = json.load(f)
    if arch == "sdar":
        saved.update(SDAR_FIELDS, mask_token_id=TINY["vocab_size"] - 1)
    write_json(os.path.join(out, "config.json"), saved)
    write_json(os.path.join(out, "generation_config.json"), {"eos_token_id": stop_tokens(TINY["vocab_size"])})


def dice_8b_tensors(shape):
    h, i, d = shape["hidden_size"], shape["intermediate_size"], shape["head_dim"]
    q, kv = shape["num_attention_heads"] * d, shape["num_key_value_heads"] * d
    yield "model.embed_tokens.weight", [shape["vocab_size"], h]
    for layer in range(shape["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        yield p + "input_layernorm.weight", [h]
        yield p + "self_attn.q_proj.weight", [q, h]
        yield p + "self_attn.k_proj.weight", [kv, h]
        yield p + "self_attn.v_proj.weight", [kv, h]
        yield p + "self_attn.q_norm.weight", [d]
        yield p + "self_attn.k_norm.weight", [d]
        yield p + "self_attn.o_proj.weight", [h, q]
        yield p + "post_attention_layernorm.weight", [h]
        yield p + "mlp.gate_proj.weight", [i, h]
        yield p + "mlp.up_proj.weight", [i, h]
        yield p + "mlp.down_proj.weight", [h, i]
    yield "model.norm.weight", [h]
    yield "lm_head.weight", [shape["vocab_size"], h]


def make_dice_8b(out, seed, num_layers=None, shard_bytes=5 << 30):
    """bf16 shards written tensor by tensor: the peak memory is one shard, never the model."""
    from safetensors.torch import save_file
    device = "cuda" if torch.cuda.is_available() else "cpu"  # drawing 8e9 numbers is much faster there
    generator = torch.Generator(device).manual_seed(seed)
    shape = dict(DICE_8B, num_hidden_layers=num_layers or DICE_8B["num_hidden_layers"])
    weight_map, shard, shard_size, shards, total = {}, {}, 0, [], 0

    def flush():
        nonlocal shard, shard_size
        if shard:
            name = f"model-{len(shards) + 1:05d}.safetensors"
            save_file(shard, os.path.join(out, name), metadata={"format": "pt"})
            shards.append(name)
            weight_map.update({tensor: name for tensor in shard})
            shard, shard_size = {}, 0

    for name, dims in dice_8b_tensors(shape):
        if name.endswith("norm.weight"):
            tensor = torch.ones(dims, dtype=torch.bfloat16)
        else:  # std 1/sqrt(fan_in) keeps activations of the random model in range
            tensor = (torch.randn(dims, generator=generator, device=device) * dims[-1] ** -0.5).to(torch.bfloat16).cpu()
        if shard_size + tensor.numel() * 2 > shard_bytes:
            flush()
        shard[name] = tensor
        shard_size += tensor.numel() * 2
        total += tensor.numel() * 2
    flush()
    write_json(os.path.join(out, "model.safetensors.index.json"), {"metadata": {"total_size": total}, "weight_map": weight_map})
    config = dict(shape, **SDAR_FIELDS, mask_token_id=151669, tie_word_embeddings=False, torch_dtype="bfloat16",
                  hidden_act="silu", attention_bias=False, bos_token_id=151643, eos_token_id=151645)
    write_json(os.path.join(out, "config.json"), config)
    write_json(os.path.join(out, "generation_config.json"), {"bos_token_id": 151643, "eos_token_id": [151645, 151643]})
    # A tokenizer with Qwen3's ids, so that the folder serves a whole run (prompts in, text out).
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_tokenizer
    with open(make_tokenizer.DEFAULT_CORPUS, encoding="utf-8", newline="") as f:
        trained = make_tokenizer.train([f.read()], 1000)
    make_tokenizer.write_folder(make_tokenizer.with_qwen3_ids(trained), out, "pairs")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--arch", choices=["qwen3", "sdar"], default="qwen3")
    parser.add_argument("--sharded", action="store_true", help="several safetensors files and an index")
    parser.add_argument("--shape", choices=["tiny", "dice-8b"], default="tiny")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-layers", type=int, help="with --shape dice-8b: fewer layers (a quick check of the format)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.shape == "dice-8b":
        make_dice_8b(args.out, args.seed, args.num_layers)
    else:
        make_small(args.out, args.arch, args.sharded, args.seed)
    print(f"make_model.py: wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
