// Fused CUDA kernels of the Qwen3 forward pass in bf16 or fp16, each replacing a chain of ATen
// kernels with one launch (a decoding pass at batch 1 is ~1000 small launches otherwise). They
// round where transformers' eager Qwen3 rounds, so results match the unfused path. Plain device
// pointers and a cudaStream_t passed as void*: no torch or CUDA header here. Each returns nullptr,
// or the CUDA error's text.
#pragma once

#include <cstdint>

namespace dicebench::engine::fused {

enum class Half { bfloat16, float16 };

// hidden[rows, width] += delta (skipped when delta is null), rounded to the dtype; then
// normed = weight * RMSNorm(hidden) (normalized in float32, rounded, times the weight, rounded).
// All four 16-byte aligned; width a multiple of 8, at most 8192.
bool add_rms_norm_supported(int64_t width);
const char* add_rms_norm(Half type, void* hidden, const void* delta, const void* weight, void* normed, int64_t rows,
                         int64_t width, float eps, void* stream);

// out[n, width] = silu(gate_up[n, :width]) * gate_up[n, width:], each product rounded as ATen's.
const char* swiglu(Half type, const void* gate_up, void* out, int64_t n, int64_t width, void* stream);

// The attention's inputs from the fused projection qkv [rows * count, (heads + 2 kv_heads) dim]:
// query and key heads get their RMSNorm (weights qk_norm [heads + kv_heads, dim]) and RoPE (tables
// cos and sin [positions, dim], sin's first half negated, at positions [rows * count]); queries go
// to q [rows, kv_heads, group * count, dim] (the heads sharing a KV head stacked along the query
// axis), keys and values into the caches [*, kv_heads, cache_columns, dim] at columns [count].
struct AttentionInputs {
  const void* qkv;
  const void* qk_norm;
  const void* cos;
  const void* sin;
  const int64_t* positions;
  const int64_t* columns;
  void* q;
  void* key_cache;
  void* value_cache;
  int64_t rows, count, heads, kv_heads, dim, cache_columns;
  float eps;
};
bool attention_inputs_supported(int64_t dim);
const char* attention_inputs(Half type, const AttentionInputs& inputs, void* stream);

}  // namespace dicebench::engine::fused
