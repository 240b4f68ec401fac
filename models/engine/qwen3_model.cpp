// The Qwen3 forward pass; numerics follow transformers' Qwen3 (norms in float32, RoPE tables
// computed in float32 and cast to the compute dtype).
#include "models/engine/qwen3_model.hpp"

#include <cmath>
#include <limits>

namespace dicebench::engine {
namespace {

at::Tensor rotate_half(const at::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return at::cat({x.narrow(-1, half, half).neg(), x.narrow(-1, 0, half)}, -1);
}

}  // namespace

Qwen3Model::Qwen3Model(ModelConfig config, Qwen3Weights weights, at::Device device, at::ScalarType dtype)
    : config_(std::move(config)), weights_(std::move(weights)), device_(device), dtype_(dtype) {
  const auto float_options = at::TensorOptions().dtype(at::kFloat).device(device_);
  const int64_t dim = config_.head_dim;
  const auto exponents = at::arange(0, dim, 2, at::TensorOptions().dtype(at::kLong).device(device_)).to(at::kFloat).div(static_cast<double>(dim));
  const auto inverse_frequencies = at::full({}, config_.rope_theta, float_options).pow(exponents).reciprocal();
  const auto positions = at::arange(config_.max_position_embeddings, at::TensorOptions().dtype(at::kLong).device(device_)).to(at::kFloat);
  const auto angles = positions.unsqueeze(1).mul(inverse_frequencies.unsqueeze(0));
  const auto both = at::cat({angles, angles}, -1);
  rope_cos_ = both.cos().to(dtype_);
  rope_sin_ = both.sin().to(dtype_);
}

void Qwen3Model::reserve_cache(int64_t rows, int64_t columns) {
  if (!key_cache_.empty() && key_cache_[0].size(0) >= rows && key_cache_[0].size(2) >= columns) return;
  if (!key_cache_.empty()) {
    rows = std::max(rows, key_cache_[0].size(0));
    columns = std::max(columns, key_cache_[0].size(2));
  }
  key_cache_.clear();
  value_cache_.clear();
  const auto options = at::TensorOptions().dtype(dtype_).device(device_);
  for (int64_t layer = 0; layer < config_.num_hidden_layers; ++layer) {
    key_cache_.push_back(at::empty({rows, config_.num_key_value_heads, columns, config_.head_dim}, options));
    value_cache_.push_back(at::empty({rows, config_.num_key_value_heads, columns, config_.head_dim}, options));
  }
}

at::Tensor Qwen3Model::rms_norm(const at::Tensor& x, const at::Tensor& weight) const {
  // Normalized in float32 and rounded to the compute dtype before the weight multiplies, as
  // transformers does; at::rms_norm is one fused kernel on CUDA.
  return at::rms_norm(x, {x.size(-1)}, std::nullopt, config_.rms_norm_eps).mul(weight);
}

at::Tensor Qwen3Model::forward(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& mask, int64_t start,
                               int64_t logits_count) {
  const int64_t rows = tokens.size(0), count = tokens.size(1), keys = start + count;
  const int64_t heads = config_.num_attention_heads, kv_heads = config_.num_key_value_heads, dim = config_.head_dim;
  const int64_t group = heads / kv_heads;
  TORCH_CHECK(!key_cache_.empty() && key_cache_[0].size(0) >= rows && key_cache_[0].size(2) >= keys,
              "Qwen3Model::forward: the KV cache is too small (reserve_cache first)");

  // Rotary tables gathered for each row's positions: [rows, count, 1, dim].
  const auto flat_positions = positions.reshape({-1});
  const auto cos = rope_cos_.index_select(0, flat_positions).view({rows, count, 1, dim});
  const auto sin = rope_sin_.index_select(0, flat_positions).view({rows, count, 1, dim});
  // Grouped-query attention without copying keys: the `group` query heads that share a KV head
  // are stacked along the query axis, [rows, kv_heads, group * count, dim]; the mask repeats. It
  // is made additive (0 / -inf in the compute dtype) once here rather than in every layer.
  std::optional<at::Tensor> grouped_mask;
  if (mask.defined())
    grouped_mask = at::zeros({rows, 1, group * count, keys}, at::TensorOptions().dtype(dtype_).device(device_))
                       .masked_fill(mask.logical_not().repeat({1, 1, group, 1}), -std::numeric_limits<double>::infinity());
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));

  auto hidden = weights_.embed_tokens.index_select(0, tokens.reshape({-1})).view({rows, count, config_.hidden_size});
  for (size_t layer = 0; layer < weights_.layers.size(); ++layer) {
    const auto& w = weights_.layers[layer];
    const auto qkv = at::linear(rms_norm(hidden, w.input_norm), w.qkv_proj);
    // Query and key heads together: per-head RMSNorm (q_norm and k_norm side by side in
    // qk_norm), then RoPE, [rows, count, heads + kv_heads, dim].
    auto qk = rms_norm(qkv.narrow(-1, 0, (heads + kv_heads) * dim).view({rows, count, heads + kv_heads, dim}), w.qk_norm);
    qk = qk.mul(cos).add(rotate_half(qk).mul(sin));
    const auto q = qk.narrow(2, 0, heads).transpose(1, 2);
    const auto k = qk.narrow(2, heads, kv_heads).transpose(1, 2);
    const auto v = qkv.narrow(-1, (heads + kv_heads) * dim, kv_heads * dim).view({rows, count, kv_heads, dim}).transpose(1, 2);

    auto key_cache = key_cache_[layer].narrow(0, 0, rows);
    auto value_cache = value_cache_[layer].narrow(0, 0, rows);
    key_cache.narrow(2, start, count).copy_(k);
    value_cache.narrow(2, start, count).copy_(v);
    const auto attended = at::scaled_dot_product_attention(
        q.contiguous().view({rows, kv_heads, group * count, dim}), key_cache.narrow(2, 0, keys),
        value_cache.narrow(2, 0, keys), grouped_mask, /*dropout_p=*/0.0, /*is_causal=*/false, scale);
    const auto merged = attended.view({rows, heads, count, dim}).transpose(1, 2).reshape({rows, count, heads * dim});
    hidden = hidden.add(at::linear(merged, w.o_proj));

    const auto gate_up = at::linear(rms_norm(hidden, w.post_attention_norm), w.gate_up_proj);
    const int64_t intermediate = config_.intermediate_size;
    hidden = hidden.add(
        at::linear(at::silu(gate_up.narrow(-1, 0, intermediate)).mul(gate_up.narrow(-1, intermediate, intermediate)), w.down_proj));
  }
  if (logits_count == 0) return {};
  const auto last = rms_norm(hidden.narrow(1, count - logits_count, logits_count), weights_.norm);
  return at::linear(last, weights_.lm_head).to(at::kFloat);
}

}  // namespace dicebench::engine
