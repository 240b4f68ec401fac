// Reading Qwen3 weights out of a mapped checkpoint onto the compute device.
#include "models/engine/qwen3_weights.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace dicebench::engine {
namespace {

std::optional<at::ScalarType> scalar_type_of(StoredType type) {
  switch (type) {
    case StoredType::F32:
      return at::kFloat;
    case StoredType::F16:
      return at::kHalf;
    case StoredType::BF16:
      return at::kBFloat16;
    default:
      return std::nullopt;
  }
}

StoredType stored_type_of(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return StoredType::F32;
    case DType::float16:
      return StoredType::F16;
    case DType::bfloat16:
      return StoredType::BF16;
  }
  return StoredType::F32;
}

class WeightReader {
 public:
  WeightReader(const Checkpoint& checkpoint, const ModelConfig& config, at::Device device, at::ScalarType dtype)
      : checkpoint_(checkpoint), config_(config), device_(device), dtype_(dtype) {}

  // The named tensor, checked against the shape config.json implies and its dtype, on the device.
  Result<at::Tensor> read(const std::string& name, std::vector<int64_t> expected_shape) const {
    auto found = checkpoint_.find(name);
    if (!found) return found.error();
    const StoredTensor& stored = *found->tensor;
    const auto where = found->file->path().string();
    const auto type = scalar_type_of(stored.type);
    if (!type)
      return make_error(fmt::format("{}: tensor '{}' has dtype {}; the engine reads F32, F16 and BF16", where, name,
                                    stored_type_name(stored.type)));
    if (config_.dtype && stored.type != stored_type_of(*config_.dtype))
      return make_error(fmt::format("{}: tensor '{}' is {} but config.json says torch_dtype {}", where, name,
                                    stored_type_name(stored.type), dtype_name(*config_.dtype)));
    if (stored.shape != expected_shape)
      return make_error(fmt::format("{}: tensor '{}' has shape [{}] but config.json implies [{}]", where, name,
                                    fmt::join(stored.shape, ", "), fmt::join(expected_shape, ", ")));
    // from_blob does not copy; the mapping is read-only, and .to() makes the copy the model keeps.
    const auto view =
        at::from_blob(const_cast<std::byte*>(stored.data.data()), stored.shape, at::TensorOptions().dtype(*type));
    auto tensor = view.to(device_, dtype_, /*non_blocking=*/false, /*copy=*/true);
    return tensor;
  }

 private:
  const Checkpoint& checkpoint_;
  const ModelConfig& config_;
  at::Device device_;
  at::ScalarType dtype_;
};

}  // namespace

Result<Qwen3Weights> load_qwen3_weights(const Checkpoint& checkpoint, const ModelConfig& config, at::Device device,
                                        at::ScalarType dtype) {
  const WeightReader reader(checkpoint, config, device, dtype);
  const int64_t hidden = config.hidden_size, head_dim = config.head_dim;
  const int64_t q_size = config.num_attention_heads * head_dim, kv_size = config.num_key_value_heads * head_dim;
  const int64_t intermediate = config.intermediate_size;

  Qwen3Weights weights;
  auto embed = reader.read("model.embed_tokens.weight", {config.vocab_size, hidden});
  if (!embed) return embed.error();
  weights.embed_tokens = std::move(*embed);
  auto norm = reader.read("model.norm.weight", {hidden});
  if (!norm) return norm.error();
  weights.norm = std::move(*norm);
  if (config.tie_word_embeddings) {
    weights.lm_head = weights.embed_tokens;
  } else {
    auto head = reader.read("lm_head.weight", {config.vocab_size, hidden});
    if (!head) return head.error();
    weights.lm_head = std::move(*head);
  }

  for (int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    const auto prefix = fmt::format("model.layers.{}.", layer);
    const std::pair<const char*, std::vector<int64_t>> parts[] = {{"input_layernorm.weight", {hidden}},
                                                                  {"self_attn.q_proj.weight", {q_size, hidden}},
                                                                  {"self_attn.k_proj.weight", {kv_size, hidden}},
                                                                  {"self_attn.v_proj.weight", {kv_size, hidden}},
                                                                  {"self_attn.q_norm.weight", {head_dim}},
                                                                  {"self_attn.k_norm.weight", {head_dim}},
                                                                  {"self_attn.o_proj.weight", {hidden, q_size}},
                                                                  {"post_attention_layernorm.weight", {hidden}},
                                                                  {"mlp.gate_proj.weight", {intermediate, hidden}},
                                                                  {"mlp.up_proj.weight", {intermediate, hidden}},
                                                                  {"mlp.down_proj.weight", {hidden, intermediate}}};
    std::vector<at::Tensor> read;
    for (const auto& [name, shape] : parts) {
      auto tensor = reader.read(prefix + name, shape);
      if (!tensor) return tensor.error();
      read.push_back(std::move(*tensor));
    }
    Qwen3LayerWeights layer_weights;
    layer_weights.input_norm = read[0];
    layer_weights.qkv_proj = at::cat({read[1], read[2], read[3]}, 0);
    layer_weights.qk_norm = at::cat({read[4].expand({config.num_attention_heads, head_dim}),
                                     read[5].expand({config.num_key_value_heads, head_dim})},
                                    0);
    layer_weights.o_proj = read[6];
    layer_weights.post_attention_norm = read[7];
    layer_weights.gate_up_proj = at::cat({read[8], read[9]}, 0);
    layer_weights.down_proj = read[10];
    weights.layers.push_back(std::move(layer_weights));
  }
  return weights;
}

}  // namespace dicebench::engine
