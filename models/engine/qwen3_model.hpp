// The Qwen3 transformer's forward pass over a KV cache: embeddings, RMSNorm, per-head QK RMSNorm,
// RoPE, grouped-query attention through scaled_dot_product_attention, SwiGLU MLP, final norm and
// the LM head. The cache is allocated once for the largest batch and length asked for and reused.
// On CUDA, decoding passes (few new positions per row) replay CUDA graphs (pass_graphs.hpp), and
// the elementwise steps run as fused kernels (fused_kernels.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "models/engine/aten.hpp"
#include "models/engine/engine.hpp"
#include "models/engine/model_config.hpp"
#include "models/engine/qwen3_weights.hpp"

namespace dicebench::engine {

class PassGraphs;

// What one pass reads besides the weights, all on the device so that a CUDA graph can capture it:
// tokens and rotary positions [rows, count] int64, the cache columns the new keys and values go
// to [count] int64, how many cache columns attention reads, and an additive attention bias
// [rows, 1, group * count, keys] in the compute dtype (none: every query sees every key).
struct PassInputs {
  at::Tensor tokens, positions, columns;
  int64_t keys = 0;
  std::optional<at::Tensor> bias;
};

class Qwen3Model {
 public:
  // Of the options: cuda_graphs, fused_kernels (on CUDA in bf16/fp16, the norms, RoPE and SwiGLU as
  // the kernels of fused_kernels.hpp, where they were built) and prefill_chunk_tokens.
  Qwen3Model(ModelConfig config, Qwen3Weights weights, at::Device device, at::ScalarType dtype,
             const EngineOptions& options);
  ~Qwen3Model();

  const ModelConfig& config() const { return config_; }
  at::Device device() const { return device_; }
  at::ScalarType dtype() const { return dtype_; }

  // Makes room in the KV cache for `rows` rows of `columns` columns (kept when already large enough).
  void reserve_cache(int64_t rows, int64_t columns);

  // Runs tokens [rows, count] (int64, on the device) that sit at cache columns
  // [start, start + count), with rotary positions [rows, count] and a mask as BatchLayout::mask
  // makes (undefined: all keys visible). Their keys and values are written into the cache at
  // those columns; attention reads columns [0, start + count). Returns the float32 logits of the
  // last `logits_count` columns, [rows, logits_count, vocab], or an undefined tensor for 0.
  at::Tensor forward(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& mask, int64_t start,
                     int64_t logits_count);

  // The same as forward, for decoding passes: on CUDA (unless graphs were turned off) it replays
  // a graph captured for its shape. The logits returned are overwritten by the next step.
  at::Tensor step(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& mask, int64_t start,
                  int64_t logits_count);

  // The pass itself (forward and the graphs run it).
  at::Tensor pass(const PassInputs& inputs, int64_t logits_count);

  // Writes into `bias` [rows, 1, group * count, keys] the additive form of `mask` (as forward takes
  // it, over the first `visible` columns; undefined: all visible): 0 where a query may attend,
  // -inf elsewhere, columns from `visible` on included.
  void fill_attention_bias(at::Tensor& bias, const at::Tensor& mask, int64_t visible) const;
  int64_t query_group() const { return config_.num_attention_heads / config_.num_key_value_heads; }
  int64_t prefill_chunk_tokens() const { return prefill_chunk_tokens_; }
  bool fused_kernels() const { return fused_; }
  int64_t cache_columns() const { return key_cache_.empty() ? 0 : key_cache_[0].size(2); }

 private:
  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight) const;
  // hidden += delta (none: undefined), then RMSNorm(hidden) * weight.
  at::Tensor add_rms_norm(at::Tensor& hidden, const at::Tensor& delta, const at::Tensor& weight) const;
  // Normed, rotated queries [rows, kv_heads, group * count, dim] from the projection qkv; writes
  // the layer's keys and values into the cache at the pass's columns. cos and sin: the rotary
  // rows of the pass's positions (ATen's path only).
  at::Tensor attention_inputs(const at::Tensor& qkv, const PassInputs& inputs, size_t layer, const at::Tensor& cos,
                              const at::Tensor& sin);
  at::Tensor swiglu(const at::Tensor& gate_up) const;

  ModelConfig config_;
  Qwen3Weights weights_;
  at::Device device_;
  at::ScalarType dtype_;
  at::Tensor rope_cos_, rope_sin_;                   // [max_position_embeddings, head_dim], compute dtype
  std::vector<at::Tensor> key_cache_, value_cache_;  // per layer [rows, kv_heads, columns, head_dim]
  bool fused_ = false;
  int64_t prefill_chunk_tokens_;
  std::unique_ptr<PassGraphs> graphs_;  // captured over the cache above: dropped when it moves
};

}  // namespace dicebench::engine
