#!/usr/bin/env python3
"""Fixture of the local model plugin's tests: writes, under OUT,

  qwen3/        a tiny random-weight Qwen3ForCausalLM folder with a tokenizer
  sdar/         a tiny SDAR-style block-diffusion folder with the same tokenizer; like SDAR's own
                configs it names no mask_token_id, so the plugin takes <|MASK|> from the tokenizer
  kernelbench/  tests/data/kernelbench plus level-1 problems 3 and 4, so that --problems 1-4 exists

The tokenizer (tools/tiny_model/make_tokenizer.py) is trained to 506 ids, so that its six added
tokens take ids 506-511 and fit the tiny models' vocabulary of 512; <|MASK|> is 511. The folders'
context is raised to 8192 positions, so that DICE's paper preset (4096 new tokens) fits.

  make_local_models.py OUT
"""
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tools", "tiny_model"))

import make_model  # noqa: E402
import make_tokenizer  # noqa: E402

TOKENIZER_VOCAB = 506
CONTEXT = 8192

PROBLEMS = {"3_Scale.py": ("Multiplies a tensor by three.", "x * 3"), "4_Negate.py": ("Negates a tensor.", "-x")}
PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """{doc}"""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return {expression}


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''


def edit_json(path, change):
    with open(path) as f:
        value = json.load(f)
    change(value)
    make_model.write_json(path, value)


def make_folder(out, arch, seed, tokenizer):
    make_model.make_small(out, arch, sharded=False, seed=seed)
    make_tokenizer.write_folder(tokenizer, out, "pairs")
    end_of_turn = [tokenizer.token_to_id("<|im_end|>"), tokenizer.token_to_id("<|endoftext|>")]

    def config(value):
        value["max_position_embeddings"] = CONTEXT
        value["eos_token_id"] = end_of_turn
        value.pop("mask_token_id", None)

    edit_json(os.path.join(out, "config.json"), config)
    edit_json(os.path.join(out, "generation_config.json"), lambda value: value.update(eos_token_id=end_of_turn))


def main():
    out = sys.argv[1]
    shutil.rmtree(out, ignore_errors=True)
    with open(make_tokenizer.DEFAULT_CORPUS, encoding="utf-8", newline="") as f:
        tokenizer = make_tokenizer.train([f.read()], TOKENIZER_VOCAB)
    assert tokenizer.token_to_id("<|MASK|>") == make_model.TINY["vocab_size"] - 1
    make_folder(os.path.join(out, "qwen3"), "qwen3", 1, tokenizer)
    make_folder(os.path.join(out, "sdar"), "sdar", 2, tokenizer)

    kernelbench = os.path.join(out, "kernelbench")
    shutil.copytree(os.path.join(ROOT, "tests", "data", "kernelbench"), kernelbench)
    for name, (doc, expression) in PROBLEMS.items():
        with open(os.path.join(kernelbench, "level1", name), "w") as f:
            f.write(PROBLEM.format(doc=doc, expression=expression))
    print(f"make_local_models.py: wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
