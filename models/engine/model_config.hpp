// The settings of a Qwen3-family model folder: config.json (Qwen3 fields, plus block_size and
// mask_token_id for SDAR-style block-diffusion models) and generation_config.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.hpp"

namespace dicebench::engine {

enum class DType { float32, float16, bfloat16 };
const char* dtype_name(DType dtype);  // "float32", "float16", "bfloat16"
// Accepts torch's and safetensors' spellings: float32/F32, float16/F16/half, bfloat16/BF16.
std::optional<DType> parse_dtype(std::string_view name);

struct ModelConfig {
  std::string architecture;  // Qwen3ForCausalLM or SDARForCausalLM
  int64_t hidden_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate_size = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  double rope_theta = 0;
  double rms_norm_eps = 0;
  bool tie_word_embeddings = false;
  std::optional<DType> dtype;            // torch_dtype (or dtype, as newer transformers write it)
  std::optional<int64_t> block_size;     // SDAR
  std::optional<int64_t> mask_token_id;  // SDAR
};

struct GenerationConfig {
  std::vector<int64_t> eos_token_ids;  // eos_token_id, a number or a list
  std::optional<int64_t> bos_token_id;
  std::optional<int64_t> pad_token_id;
  std::optional<double> temperature;
  std::optional<int64_t> top_k;
  std::optional<double> top_p;
};

// Reads <folder>/config.json; every error names the file and the field.
Result<ModelConfig> load_model_config(const std::filesystem::path& folder);
// Reads <folder>/generation_config.json; a folder without one gives an empty GenerationConfig.
Result<GenerationConfig> load_generation_config(const std::filesystem::path& folder);

}  // namespace dicebench::engine
