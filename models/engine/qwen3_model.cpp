// The Qwen3 forward pass; numerics follow transformers' Qwen3 (norms in float32, RoPE tables
// computed in float32 and cast to the compute dtype). The norms, RoPE with the cache write, and
// SwiGLU run as ATen ops or, on CUDA in bf16/fp16, as the fused kernels of fused_kernels.hpp.
#include "models/engine/qwen3_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/engine/pass_graphs.hpp"

#if DICEBENCH_ENGINE_FUSED_KERNELS
#include <c10/cuda/CUDAStream.h>

#include "models/engine/fused_kernels.hpp"
#endif

namespace dicebench::engine {
namespace {

#if DICEBENCH_ENGINE_FUSED_KERNELS
fused::Half half_type(at::ScalarType dtype) {
  return dtype == at::kBFloat16 ? fused::Half::bfloat16 : fused::Half::float16;
}
void* current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }
void check_launch(const char* error) { TORCH_CHECK(error == nullptr, "a fused kernel failed: ", error); }
#endif

// x's halves swapped: with the sine table's first half negated (rope_sin_), x * cos + swapped * sin
// is transformers' x * cos + rotate_half(x) * sin, in three kernels rather than five.
at::Tensor swap_halves(const at::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return at::cat({x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

}  // namespace

Qwen3Model::Qwen3Model(ModelConfig config, Qwen3Weights weights, at::Device device, at::ScalarType dtype,
                       const EngineOptions& options)
    : config_(std::move(config)),
      weights_(std::move(weights)),
      device_(device),
      dtype_(dtype),
      prefill_chunk_tokens_(std::max<int64_t>(1, options.prefill_chunk_tokens)) {
#if DICEBENCH_ENGINE_FUSED_KERNELS
  fused_ = options.fused_kernels && device_.is_cuda() && (dtype_ == at::kBFloat16 || dtype_ == at::kHalf) &&
           fused::attention_inputs_supported(config_.head_dim) && fused::add_rms_norm_supported(config_.hidden_size);
#endif
  if (options.cuda_graphs && device_.is_cuda()) graphs_ = make_pass_graphs(*this);
  const auto float_options = at::TensorOptions().dtype(at::kFloat).device(device_);
  const int64_t dim = config_.head_dim;
  const auto exponents = at::arange(0, dim, 2, at::TensorOptions().dtype(at::kLong).device(device_))
                             .to(at::kFloat)
                             .div(static_cast<double>(dim));
  const auto inverse_frequencies = at::full({}, config_.rope_theta, float_options).pow(exponents).reciprocal();
  const auto positions =
      at::arange(config_.max_position_embeddings, at::TensorOptions().dtype(at::kLong).device(device_)).to(at::kFloat);
  const auto angles = positions.unsqueeze(1).mul(inverse_frequencies.unsqueeze(0));
  const auto both = at::cat({angles, angles}, -1);
  rope_cos_ = both.cos().to(dtype_);
  rope_sin_ = at::cat({angles.sin().neg(), angles.sin()}, -1).to(dtype_);
}

Qwen3Model::~Qwen3Model() = default;

void Qwen3Model::reserve_cache(int64_t rows, int64_t columns) {
  if (!key_cache_.empty() && key_cache_[0].size(0) >= rows && key_cache_[0].size(2) >= columns) return;
  if (!key_cache_.empty()) {
    rows = std::max(rows, key_cache_[0].size(0));
    columns = std::max(columns, key_cache_[0].size(2));
  }
  if (graphs_) graphs_->clear();  // they point into the cache that goes now
  key_cache_.clear();
  value_cache_.clear();
  // Whole buckets of columns, so that a graph's attention span fits; zeros, because masked
  // columns still enter the attention's arithmetic (0 weight times a NaN would be NaN).
  columns = (columns + kKeyBucket - 1) / kKeyBucket * kKeyBucket;
  const auto options = at::TensorOptions().dtype(dtype_).device(device_);
  for (int64_t layer = 0; layer < config_.num_hidden_layers; ++layer) {
    key_cache_.push_back(at::zeros({rows, config_.num_key_value_heads, columns, config_.head_dim}, options));
    value_cache_.push_back(at::zeros({rows, config_.num_key_value_heads, columns, config_.head_dim}, options));
  }
}

at::Tensor Qwen3Model::rms_norm(const at::Tensor& x, const at::Tensor& weight) const {
  // transformers normalizes in float32 and rounds to the compute dtype before the weight
  // multiplies. On CUDA a weight of one row (not the per-head qk_norm) goes into the one fused
  // kernel instead (two kernels fewer per layer; the product is rounded once, not twice).
  if (device_.is_cuda() && weight.dim() == 1) return at::rms_norm(x, {x.size(-1)}, weight, config_.rms_norm_eps);
  return at::rms_norm(x, {x.size(-1)}, std::nullopt, config_.rms_norm_eps).mul(weight);
}

void Qwen3Model::fill_attention_bias(at::Tensor& bias, const at::Tensor& mask, int64_t visible) const {
  bias.fill_(-std::numeric_limits<double>::infinity());
  auto shown = bias.narrow(-1, 0, visible);
  if (mask.defined())
    shown.masked_fill_(mask.repeat({1, 1, query_group(), 1}), 0.0);
  else
    shown.zero_();
}

at::Tensor Qwen3Model::forward(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& mask,
                               int64_t start, int64_t logits_count) {
  const int64_t rows = tokens.size(0), count = tokens.size(1), keys = start + count;
  PassInputs inputs{tokens, positions, at::arange(start, keys, positions.options()), keys, std::nullopt};
  if (mask.defined()) {
    // Made additive (0 / -inf in the compute dtype) once here rather than in every layer.
    auto bias = at::empty({rows, 1, query_group() * count, keys}, at::TensorOptions().dtype(dtype_).device(device_));
    fill_attention_bias(bias, mask, keys);
    inputs.bias = std::move(bias);
  }
  return pass(inputs, logits_count);
}

at::Tensor Qwen3Model::step(const at::Tensor& tokens, const at::Tensor& positions, const at::Tensor& mask,
                            int64_t start, int64_t logits_count) {
  return graphs_ ? graphs_->run(tokens, positions, mask, start, logits_count)
                 : forward(tokens, positions, mask, start, logits_count);
}

at::Tensor Qwen3Model::add_rms_norm(at::Tensor& hidden, const at::Tensor& delta, const at::Tensor& weight) const {
#if DICEBENCH_ENGINE_FUSED_KERNELS
  if (fused_) {
    auto normed = at::empty_like(hidden);
    check_launch(fused::add_rms_norm(half_type(dtype_), hidden.data_ptr(), delta.defined() ? delta.data_ptr() : nullptr,
                                     weight.data_ptr(), normed.data_ptr(), hidden.numel() / hidden.size(-1),
                                     hidden.size(-1), static_cast<float>(config_.rms_norm_eps), current_stream()));
    return normed;
  }
#endif
  if (delta.defined()) hidden = hidden.add(delta);
  return rms_norm(hidden, weight);
}

at::Tensor Qwen3Model::attention_inputs(const at::Tensor& qkv, const PassInputs& inputs, size_t layer,
                                        const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t rows = inputs.tokens.size(0), count = inputs.tokens.size(1);
  const int64_t heads = config_.num_attention_heads, kv_heads = config_.num_key_value_heads, dim = config_.head_dim;
  auto& key_cache = key_cache_[layer];
  auto& value_cache = value_cache_[layer];
#if DICEBENCH_ENGINE_FUSED_KERNELS
  if (fused_) {
    auto q = at::empty({rows, kv_heads, query_group() * count, dim}, qkv.options());
    const auto positions = inputs.positions.contiguous();
    const auto columns = inputs.columns.contiguous();
    const fused::AttentionInputs a{qkv.data_ptr(),
                                   weights_.layers[layer].qk_norm.data_ptr(),
                                   rope_cos_.data_ptr(),
                                   rope_sin_.data_ptr(),
                                   positions.data_ptr<int64_t>(),
                                   columns.data_ptr<int64_t>(),
                                   q.data_ptr(),
                                   key_cache.data_ptr(),
                                   value_cache.data_ptr(),
                                   rows,
                                   count,
                                   heads,
                                   kv_heads,
                                   dim,
                                   key_cache.size(2),
                                   static_cast<float>(config_.rms_norm_eps)};
    check_launch(fused::attention_inputs(half_type(dtype_), a, current_stream()));
    return q;
  }
#endif
  // Query and key heads together: per-head RMSNorm (q_norm and k_norm side by side in
  // qk_norm), then RoPE, [rows, count, heads + kv_heads, dim].
  auto qk = rms_norm(qkv.narrow(-1, 0, (heads + kv_heads) * dim).view({rows, count, heads + kv_heads, dim}),
                     weights_.layers[layer].qk_norm);
  qk = qk.mul(cos).addcmul_(swap_halves(qk), sin);
  const auto k = qk.narrow(2, heads, kv_heads).transpose(1, 2);
  const auto v =
      qkv.narrow(-1, (heads + kv_heads) * dim, kv_heads * dim).view({rows, count, kv_heads, dim}).transpose(1, 2);
  key_cache.narrow(0, 0, rows).index_copy_(2, inputs.columns, k);
  value_cache.narrow(0, 0, rows).index_copy_(2, inputs.columns, v);
  // The `group` query heads that share a KV head stacked along the query axis.
  return qk.narrow(2, 0, heads).transpose(1, 2).contiguous().view({rows, kv_heads, query_group() * count, dim});
}

at::Tensor Qwen3Model::swiglu(const at::Tensor& gate_up) const {
  const int64_t intermediate = config_.intermediate_size;
#if DICEBENCH_ENGINE_FUSED_KERNELS
  if (fused_) {
    auto sizes = gate_up.sizes().vec();
    sizes.back() = intermediate;
    auto out = at::empty(sizes, gate_up.options());
    check_launch(fused::swiglu(half_type(dtype_), gate_up.data_ptr(), out.data_ptr(), out.numel() / intermediate,
                               intermediate, current_stream()));
    return out;
  }
#endif
  return at::silu(gate_up.narrow(-1, 0, intermediate)).mul(gate_up.narrow(-1, intermediate, intermediate));
}

at::Tensor Qwen3Model::pass(const PassInputs& inputs, int64_t logits_count) {
  const auto& tokens = inputs.tokens;
  const int64_t rows = tokens.size(0), count = tokens.size(1), keys = inputs.keys;
  const int64_t heads = config_.num_attention_heads, dim = config_.head_dim;
  TORCH_CHECK(!key_cache_.empty() && key_cache_[0].size(0) >= rows && key_cache_[0].size(2) >= keys,
              "Qwen3Model::pass: the KV cache is too small (reserve_cache first)");
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));

  // ATen's path: the rotary tables gathered once for each row's positions, [rows, count, 1, dim]
  // (the fused kernel reads the tables at the positions itself).
  at::Tensor cos, sin;
  if (!fused_) {
    const auto flat_positions = inputs.positions.reshape({-1});
    cos = rope_cos_.index_select(0, flat_positions).view({rows, count, 1, dim});
    sin = rope_sin_.index_select(0, flat_positions).view({rows, count, 1, dim});
  }
  // The residual stream; each norm also adds the sublayer's output to it first.
  auto hidden = weights_.embed_tokens.index_select(0, tokens.reshape({-1})).view({rows, count, config_.hidden_size});
  auto normed = add_rms_norm(hidden, {}, weights_.layers.front().input_norm);
  for (size_t layer = 0; layer < weights_.layers.size(); ++layer) {
    const auto& w = weights_.layers[layer];
    const auto q = attention_inputs(at::linear(normed, w.qkv_proj), inputs, layer, cos, sin);
    const bool last = layer + 1 == weights_.layers.size();
    if (last && logits_count == 0) break;  // the keys and values were all this pass was for
    const auto attended = at::scaled_dot_product_attention(q, key_cache_[layer].narrow(0, 0, rows).narrow(2, 0, keys),
                                                           value_cache_[layer].narrow(0, 0, rows).narrow(2, 0, keys),
                                                           inputs.bias, /*dropout_p=*/0.0, /*is_causal=*/false, scale);
    const auto merged = attended.view({rows, heads, count, dim}).transpose(1, 2).reshape({rows, count, heads * dim});
    normed = add_rms_norm(hidden, at::linear(merged, w.o_proj), w.post_attention_norm);
    const auto mlp = at::linear(swiglu(at::linear(normed, w.gate_up_proj)), w.down_proj);
    normed = add_rms_norm(hidden, mlp, last ? weights_.norm : weights_.layers[layer + 1].input_norm);
  }
  if (logits_count == 0) return {};
  return at::linear(normed.narrow(1, count - logits_count, logits_count), weights_.lm_head).to(at::kFloat);
}

}  // namespace dicebench::engine
