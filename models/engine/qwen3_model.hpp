// The Qwen3 transformer's forward pass over a KV cache: embeddings, RMSNorm, per-head QK RMSNorm,
// RoPE, grouped-query attention through scaled_dot_product_attention, SwiGLU MLP, final norm and
// the LM head. The cache is allocated once for the largest batch and length asked for and reused.
#pragma once

#include <cstdint>
#include <vector>

#include "models/engine/aten.hpp"
#include "models/engine/model_config.hpp"
#include "models/engine/qwen3_weights.hpp"

namespace dicebench::engine {

class Qwen3Model {
 public:
  Qwen3Model(ModelConfig config, Qwen3Weights weights, at::Device device, at::ScalarType dtype);

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

 private:
  at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight) const;

  ModelConfig config_;
  Qwen3Weights weights_;
  at::Device device_;
  at::ScalarType dtype_;
  at::Tensor rope_cos_, rope_sin_;            // [max_position_embeddings, head_dim], compute dtype
  std::vector<at::Tensor> key_cache_, value_cache_;  // per layer [rows, kv_heads, columns, head_dim]
};

}  // namespace dicebench::engine
