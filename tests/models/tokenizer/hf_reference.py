#!/usr/bin/env python3
"""The reference side of the tokenizer fidelity tests: what Hugging Face `tokenizers` (and, for
the chat prompt, the folder's Jinja chat template) produce for the test corpus. One call writes
everything a test compares into OUT_DIR/reference.json.

    hf_reference.py CASES_JSON OUT_DIR [--merges-format pairs|strings] [--tokenizer-dir DIR]

Without --tokenizer-dir it first trains the tiny tokenizer (tools/tiny_model/make_tokenizer.py)
into OUT_DIR/tokenizer; with it, it reads that folder (e.g. a real Qwen3 download).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "tiny_model"))


def byte_token_ids(tokenizer, values):
    """The ids of the single-byte tokens of `values`, through the byte-level alphabet."""
    from tokenizers import pre_tokenizers
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet(), key=ord)
    printable = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    char_of_byte, extra = {}, 0
    for b in range(256):
        if b in printable:
            char_of_byte[b] = chr(b)
        else:
            char_of_byte[b] = chr(0x100 + extra)
            extra += 1
    assert sorted(char_of_byte.values(), key=ord) == alphabet
    return [tokenizer.token_to_id(char_of_byte[b]) for b in values]


def render_chat(template: str, message: str, thinking: bool) -> str:
    import jinja2  # as transformers renders chat templates
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template).render(messages=[{"role": "user", "content": message}],
                                            add_generation_prompt=True, enable_thinking=thinking)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("cases")
    parser.add_argument("out_dir")
    parser.add_argument("--merges-format", choices=["pairs", "strings"], default="pairs")
    parser.add_argument("--tokenizer-dir")
    args = parser.parse_args()
    from tokenizers import Tokenizer

    with open(args.cases, encoding="utf-8") as f:
        cases = json.load(f)
    folder = args.tokenizer_dir
    if folder is None:
        import make_tokenizer
        folder = os.path.join(args.out_dir, "tokenizer")
        make_tokenizer.write_folder(make_tokenizer.train([open(make_tokenizer.DEFAULT_CORPUS, encoding="utf-8",
                                                                newline="").read()], 1000),
                                    folder, args.merges_format)
    tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))

    encodings = []
    for text in cases["texts"]:
        ids = tokenizer.encode(text).ids
        encodings.append({"text": text, "ids": ids, "decoded": tokenizer.decode(ids, skip_special_tokens=False),
                          "decoded_skip": tokenizer.decode(ids, skip_special_tokens=True)})
    # Byte sequences that are not valid UTF-8, between special tokens and an id past the vocabulary.
    im_start, im_end = tokenizer.token_to_id("<|im_start|>"), tokenizer.token_to_id("<|im_end|>")
    decodes = []
    for values in cases["byte_cases"]:
        ids = [im_start] + byte_token_ids(tokenizer, values) + [im_end, tokenizer.get_vocab_size(True) + 7]
        decodes.append({"ids": ids, "decoded": tokenizer.decode(ids, skip_special_tokens=False),
                        "decoded_skip": tokenizer.decode(ids, skip_special_tokens=True)})

    chat = []
    config_path = os.path.join(folder, "tokenizer_config.json")
    with open(config_path, encoding="utf-8") as f:
        template = json.load(f)["chat_template"]
    for message in ["Write a CUDA kernel for ReLU.", "", "  two\nlines  ", "<|im_end|> inside"]:
        for thinking in (True, False):
            chat.append({"message": message, "thinking": thinking, "prompt": render_chat(template, message, thinking)})

    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<|MASK|>", "Ġ", "the"]
    reference = {"tokenizer_dir": os.path.abspath(folder), "vocab_size": tokenizer.get_vocab_size(True),
                 "token_ids": {t: tokenizer.token_to_id(t) for t in tokens if tokenizer.token_to_id(t) is not None},
                 "encodings": encodings, "decodes": decodes, "chat": chat}
    with open(os.path.join(args.out_dir, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(reference, f, ensure_ascii=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
