// The weights of a Qwen3-family transformer as device tensors in the compute dtype, read from a
// checkpoint and checked against config.json. Q/K/V and gate/up projections are concatenated so
// that each takes one matrix multiplication.
#pragma once

#include <vector>

#include "core/base/result.hpp"
#include "models/engine/aten.hpp"
#include "models/engine/checkpoint.hpp"
#include "models/engine/model_config.hpp"

namespace dicebench::engine {

struct Qwen3LayerWeights {
  at::Tensor input_norm;  // [hidden]
  at::Tensor qkv_proj;    // [(heads + 2 kv_heads) * head_dim, hidden]
  at::Tensor qk_norm;     // [heads + kv_heads, head_dim]: q_norm for each query head, then k_norm for each KV head
  at::Tensor o_proj;      // [hidden, heads * head_dim]
  at::Tensor post_attention_norm;
  at::Tensor gate_up_proj;  // [2 intermediate, hidden]
  at::Tensor down_proj;     // [hidden, intermediate]
};

struct Qwen3Weights {
  at::Tensor embed_tokens;  // [vocab, hidden]
  std::vector<Qwen3LayerWeights> layers;
  at::Tensor norm;
  at::Tensor lm_head;  // embed_tokens itself when tied
};

// Every error names the checkpoint file and the tensor.
Result<Qwen3Weights> load_qwen3_weights(const Checkpoint& checkpoint, const ModelConfig& config, at::Device device,
                                        at::ScalarType dtype);

}  // namespace dicebench::engine
