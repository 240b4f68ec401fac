#!/usr/bin/env python3
"""Writes the fuzz targets' seed inputs (tests/fuzz/seeds/<target>/) from the project's own test
data and small hand-written files. Run again after changing it; the seeds are committed.
The run summary seed (seeds/run_summary/quickstart.json) comes from `dicebench export --format
summary` of the README's quickstart run and is not written here."""
import json
import pathlib
import re
import struct

here = pathlib.Path(__file__).resolve().parent
tests = here.parent
seeds = here / "seeds"


def write(target, name, data):
    folder = seeds / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data.encode() if isinstance(data, str) else data)


def safetensors(tensors, metadata=None):
    header, blobs, offset = {}, b"", 0
    for name, (dtype, shape, blob) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs += blob
        offset += len(blob)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + blobs


write("safetensors", "two_tensors.safetensors", safetensors(
    {"model.embed_tokens.weight": ("F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4)),
     "lm_head.weight": ("BF16", [3], b"\x80\x3f" * 3)}, {"format": "pt"}))
write("safetensors", "empty.safetensors", safetensors({}))
write("safetensors", "scalar_i64.safetensors", safetensors({"step": ("I64", [], struct.pack("<q", 7))}))

qwen3 = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
         "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 16, "vocab_size": 32,
         "max_position_embeddings": 64, "rope_theta": 10000.0, "rms_norm_eps": 1e-6, "tie_word_embeddings": True,
         "torch_dtype": "float32"}
sdar = dict(qwen3, architectures=["SDARForCausalLM"], block_size=4, mask_token_id=15, dtype="bfloat16")
del sdar["torch_dtype"]
generation = {"eos_token_id": [2, 3], "bos_token_id": 1, "pad_token_id": 0, "temperature": 0.7, "top_k": 20, "top_p": 0.8}
write("model_config", "qwen3.json", json.dumps(qwen3) + "\0" + json.dumps(generation))
write("model_config", "sdar.json", json.dumps(sdar) + "\0" + json.dumps({"eos_token_id": 2}))

# The hand-written tokenizer of tests/models/tokenizer/test_tokenizer_files.cpp.
source = (tests / "tokenizer" / "test_tokenizer_files.cpp").read_text()
minimal = json.loads(re.search(r'json minimal_tokenizer\(\) \{\s*return json::parse\(R"\((.*?)\)"\);', source, re.S).group(1))
config = {"eos_token": {"content": "<|im_end|>"}, "chat_template": "{{ '<|im_start|>' }}"}
write("tokenizer_json", "minimal.json", json.dumps(minimal))
write("tokenizer_json", "minimal_with_config.json", json.dumps(minimal) + "\0" + json.dumps(config))
literal = dict(minimal, normalizer=None, pre_tokenizer={"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated", "invert": False})
write("tokenizer_json", "literal_split.json", json.dumps(literal))

texts = json.loads((tests / "data" / "tokenizer" / "cases.json").read_text())["texts"]
for i, text in enumerate(texts):
    write("chat_prompt", f"case_{i:02d}.txt", chr(i % 2) + text)

write("run_config", "run.toml", (tests / "host" / "test_config.cpp").read_text().split('R"(', 1)[1].split(')"', 1)[0])
write("run_config", "flat.toml", 'model = "dice-8b"\nsamples = 3\n[sampling]\ntemperature = 0.0\n')

gate = (tests / "results" / "test_gate.cpp").read_text()
for i, rules in enumerate(re.findall(r'parse_gate_rules\(R"\((.*?)\)"', gate, re.S)):
    write("gate_rules", f"rules_{i}.toml", rules)

for folder in (tests / "data" / "replay").iterdir():
    for path in folder.iterdir():
        write("replay_file_name", path.name, path.name)
write("replay_file_name", "prompt.txt", "level_1_problem_3_prompt.txt")

write("extract_candidate", "two_blocks.txt", "Here:\n```python\nprint(1)\n```\nand\n```cpp\nint x;\n```\n")
write("extract_candidate", "unclosed.txt", "```python\nimport torch\n")
# The backend check also replays tests/data/eval's candidates; these add aliases, decorators with
# arguments, raw strings, continuations and a statement split across brackets.
write("backend_check", "triton_alias.py", "import triton\nimport triton.language as tl\n\n@triton.autotune(configs=[], key=[\"n\"])\n"
      "@triton.jit\ndef k(x, n, B: tl.constexpr):\n    tl.store(x, tl.load(x))\n\nclass M:\n    def __init__(self):\n"
      "        self.k = k\n    def f(self, x):\n        self.k[(1,)](x, 1, B=2)\n")
write("backend_check", "cuda_build.py", "from torch.utils.cpp_extension import load_inline as b\n"
      "src = r\"\"\"__global__ void k() {}\"\"\"  # c\nm = b(\"m\", \"\", src, functions=[\"f\"]); x = (1,\n  2) \\\n  + 3\n")

for path in sorted((tests / "fastpath" / "candidates").glob("*.py")):
    for i, block in enumerate(re.findall(r'r?"""(.*?)"""', path.read_text(), re.S)):
        write("fastpath_source", f"{path.stem}_{i}.cu", block)


def frames(*messages):
    out = b""
    for message in messages:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        out += struct.pack("<I", len(body)) + body
    return out


write("frame_reader", "hello_reply.bin", frames({"type": "hello", "protocol": 1},
                                                {"type": "evaluate.progress", "stage": "compile"},
                                                {"type": "evaluation", "verdict": "correct", "runtime": {"mean": 1.5}}))
write("frame_reader", "truncated.bin", frames({"type": "hello"})[:-3])
write("frame_reader", "not_json.bin", frames(b"\xff{not json"))
