#!/usr/bin/env python3
"""Trains a small byte-level BPE tokenizer configured as Qwen2/Qwen3's are (the same Split regex
and ByteLevel pre-tokenizer, NFC normalizer, ByteLevel decoder, Qwen's special tokens after the
vocabulary) with Hugging Face's `tokenizers`, and writes tokenizer.json and tokenizer_config.json
(with a ChatML chat template that renders one conversation as Qwen3's does) into a folder.

    make_tokenizer.py OUT_DIR [--vocab-size N] [--merges-format pairs|strings] [--corpus FILE ...] [--qwen3-ids]

--merges-format strings writes the merges as "left right" strings (older files) instead of
["left", "right"] pairs (what tokenizers >= 0.20 writes). The default corpus is
tokenizer_corpus.txt beside this script.
"""
import argparse
import json
import os
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

# The pre-tokenizer pattern of Qwen2 / Qwen3 tokenizer.json files.
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")

# Added after the trained vocabulary, in Qwen3's order; <think> and </think> are not special
# there (decode keeps them with skip_special_tokens), <|MASK|> is SDAR / DICE's mask token.
ADDED_TOKENS = [("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
                ("<think>", False), ("</think>", False), ("<|MASK|>", True)]

# Renders system / user / assistant text messages and the generation prompt as Qwen3's template
# does, including the empty think block when enable_thinking is false.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- endif %}"
    "{%- endif %}")

DEFAULT_CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tokenizer_corpus.txt")


def train(texts, vocab_size: int) -> Tokenizer:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(texts, trainer)
    for content, special in ADDED_TOKENS:
        token = AddedToken(content, special=special, normalized=False)
        if special:
            tokenizer.add_special_tokens([token])
        else:
            tokenizer.add_tokens([token])
    return tokenizer


# Where Qwen3's tokenizer puts the added tokens above (151646..151666 hold others of its own).
QWEN3_IDS = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645, "<think>": 151667,
             "</think>": 151668, "<|MASK|>": 151669}


def with_qwen3_ids(tokenizer: Tokenizer) -> Tokenizer:
    """The tokenizer laid out as Qwen3's (and DICE's) is, for folders of those models' shapes: the
    vocabulary padded with tokens no merge makes ("tok<N>", still decodable) up to 151643 ids, the
    added tokens at Qwen3's ids, and reserved special tokens in the gaps between them. A model with
    random weights then decodes every id it can draw."""
    data = json.loads(tokenizer.to_str())
    vocab = data["model"]["vocab"]
    for i in range(len(vocab), QWEN3_IDS["<|endoftext|>"]):
        vocab[f"tok{i}"] = i
    added = {token["content"]: token for token in data["added_tokens"]}
    for content, token in added.items():
        token["id"] = QWEN3_IDS[content]
    taken = set(QWEN3_IDS.values())
    for i in range(min(taken), max(taken)):
        if i not in taken:
            data["added_tokens"].append({"id": i, "content": f"<|reserved_{i}|>", "single_word": False, "lstrip": False,
                                         "rstrip": False, "normalized": False, "special": True})
    data["added_tokens"].sort(key=lambda token: token["id"])
    return Tokenizer.from_str(json.dumps(data))


def write_folder(tokenizer: Tokenizer, out_dir: str, merges_format: str) -> None:
    os.makedirs(out_dir, exist_ok=True)
    data = json.loads(tokenizer.to_str())
    if merges_format == "strings":
        data["model"]["merges"] = [" ".join(pair) for pair in data["model"]["merges"]]
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
    config = {
        "tokenizer_class": "Qwen2Tokenizer",
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "model_max_length": 40960,
        "chat_template": CHAT_TEMPLATE,
        "added_tokens_decoder": {
            str(tokenizer.token_to_id(content)): {"content": content, "special": special, "normalized": False,
                                                  "lstrip": False, "rstrip": False, "single_word": False}
            for content, special in ADDED_TOKENS},
    }
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--vocab-size", type=int, default=1000)
    parser.add_argument("--merges-format", choices=["pairs", "strings"], default="pairs")
    parser.add_argument("--corpus", nargs="+", default=[DEFAULT_CORPUS])
    parser.add_argument("--qwen3-ids", action="store_true", help="Qwen3's layout of ids (151643 regular, added tokens above)")
    args = parser.parse_args()
    texts = []
    for path in args.corpus:
        with open(path, encoding="utf-8", newline="") as f:
            texts.append(f.read())
    tokenizer = train(texts, args.vocab_size)
    write_folder(with_qwen3_ids(tokenizer) if args.qwen3_ids else tokenizer, args.out_dir, args.merges_format)
    return 0


if __name__ == "__main__":
    sys.exit(main())
