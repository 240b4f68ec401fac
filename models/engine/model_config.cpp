// Parsing and checking of config.json and generation_config.json.
#include "models/engine/model_config.hpp"
#include "core/base/one_line.hpp"
#include "core/base/whole_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/base/text.hpp"

namespace dicebench::engine {
namespace {

using nlohmann::json;

constexpr const char* kArchitectures[] = {"Qwen3ForCausalLM", "SDARForCausalLM"};

Result<json> read_json(const std::filesystem::path& path) {
  auto text = read_whole_file(path);
  if (!text) return text.error();
  json parsed = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object())
    return make_error(fmt::format("{}: not a JSON object", path.string()));
  return parsed;
}

// Reads a positive integer field; `required` fields that are absent are an error.
Result<std::optional<int64_t>> read_int(const json& doc, const std::filesystem::path& path, const char* key,
                                        bool required, int64_t minimum = 1) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) {
    if (required) return make_error(fmt::format("{}: missing field '{}'", path.string(), key));
    return std::optional<int64_t>{};
  }
  if (!it->is_number_integer() || it->get<int64_t>() < minimum)
    return make_error(
        fmt::format("{}: field '{}' must be an integer >= {}, got {}", path.string(), key, minimum, it->dump()));
  return std::optional<int64_t>{it->get<int64_t>()};
}

Result<std::optional<double>> read_number(const json& doc, const std::filesystem::path& path, const char* key) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return std::optional<double>{};
  if (!it->is_number())
    return make_error(fmt::format("{}: field '{}' must be a number, got {}", path.string(), key, it->dump()));
  return std::optional<double>{it->get<double>()};
}

}  // namespace

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return "float32";
    case DType::float16:
      return "float16";
    case DType::bfloat16:
      return "bfloat16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "float32" || name == "F32" || name == "fp32" || name == "float") return DType::float32;
  if (name == "float16" || name == "F16" || name == "fp16" || name == "half") return DType::float16;
  if (name == "bfloat16" || name == "BF16" || name == "bf16") return DType::bfloat16;
  return std::nullopt;
}

Result<ModelConfig> load_model_config(const std::filesystem::path& folder) {
  const auto path = folder / "config.json";
  auto doc = read_json(path);
  if (!doc) return doc.error();
  ModelConfig config;

  const auto architectures = doc->find("architectures");
  if (architectures == doc->end() || !architectures->is_array() || architectures->size() != 1 ||
      !(*architectures)[0].is_string())
    return make_error(fmt::format("{}: 'architectures' must list one architecture", path.string()));
  config.architecture = (*architectures)[0].get<std::string>();
  if (std::find(std::begin(kArchitectures), std::end(kArchitectures), config.architecture) == std::end(kArchitectures))
    return make_error(fmt::format("{}: unknown architecture '{}' (supported: {})", path.string(),
                                  on_one_line(config.architecture), fmt::join(kArchitectures, ", ")));

  const struct {
    const char* key;
    int64_t* field;
  } required_ints[] = {{"hidden_size", &config.hidden_size},
                       {"num_hidden_layers", &config.num_hidden_layers},
                       {"num_attention_heads", &config.num_attention_heads},
                       {"intermediate_size", &config.intermediate_size},
                       {"vocab_size", &config.vocab_size},
                       {"max_position_embeddings", &config.max_position_embeddings}};
  for (const auto& [key, field] : required_ints) {
    auto value = read_int(*doc, path, key, true);
    if (!value) return value.error();
    *field = **value;
  }
  auto kv_heads = read_int(*doc, path, "num_key_value_heads", false);
  if (!kv_heads) return kv_heads.error();
  config.num_key_value_heads = kv_heads->value_or(config.num_attention_heads);
  auto head_dim = read_int(*doc, path, "head_dim", false);
  if (!head_dim) return head_dim.error();
  config.head_dim = head_dim->value_or(config.hidden_size / config.num_attention_heads);
  if (config.num_attention_heads % config.num_key_value_heads != 0)
    return make_error(fmt::format("{}: num_attention_heads ({}) is not a multiple of num_key_value_heads ({})",
                                  path.string(), config.num_attention_heads, config.num_key_value_heads));
  if (config.head_dim % 2 != 0)
    return make_error(fmt::format("{}: head_dim ({}) must be even for RoPE", path.string(), config.head_dim));

  auto rope_theta = read_number(*doc, path, "rope_theta");
  if (!rope_theta) return rope_theta.error();
  // transformers 5 writes rope_theta inside rope_parameters.
  if (!*rope_theta) {
    const auto parameters = doc->find("rope_parameters");
    if (parameters != doc->end() && parameters->is_object()) {
      rope_theta = read_number(*parameters, path, "rope_theta");
      if (!rope_theta) return rope_theta.error();
    }
  }
  config.rope_theta = rope_theta->value_or(10000.0);
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    const auto it = doc->find(key);
    if (it == doc->end() || it->is_null()) continue;
    std::string type = it->is_object() ? "default" : "?";
    for (const char* name : {"type", "rope_type"})  // rope_type wins where both are given
      if (it->is_object() && it->contains(name))
        type = (*it)[name].is_string() ? (*it)[name].get<std::string>() : (*it)[name].dump();
    if (type != "default")
      return make_error(fmt::format("{}: {} of type '{}' is not supported (only the default RoPE)", path.string(), key,
                                    on_one_line(type)));
  }
  if (doc->value("attention_bias", false))
    return make_error(fmt::format("{}: attention_bias = true is not supported (Qwen3 has none)", path.string()));
  auto eps = read_number(*doc, path, "rms_norm_eps");
  if (!eps) return eps.error();
  config.rms_norm_eps = eps->value_or(1e-6);
  const auto tie = doc->find("tie_word_embeddings");
  if (tie != doc->end() && !tie->is_boolean())
    return make_error(fmt::format("{}: field 'tie_word_embeddings' must be true or false", path.string()));
  config.tie_word_embeddings = tie != doc->end() && tie->get<bool>();

  for (const char* key : {"torch_dtype", "dtype"}) {
    const auto it = doc->find(key);
    if (it == doc->end() || it->is_null()) continue;
    const auto dtype = it->is_string() ? parse_dtype(it->get<std::string>()) : std::nullopt;
    if (!dtype)
      return make_error(fmt::format("{}: field '{}' has an unsupported dtype {}", path.string(), key, it->dump()));
    config.dtype = dtype;
  }

  auto block_size = read_int(*doc, path, "block_size", false);
  if (!block_size) return block_size.error();
  config.block_size = *block_size;
  auto mask_token = read_int(*doc, path, "mask_token_id", false, 0);
  if (!mask_token) return mask_token.error();
  config.mask_token_id = *mask_token;
  if (config.mask_token_id && *config.mask_token_id >= config.vocab_size)
    return make_error(fmt::format("{}: mask_token_id {} is outside the vocabulary ({} tokens)", path.string(),
                                  *config.mask_token_id, config.vocab_size));
  return config;
}

Result<GenerationConfig> load_generation_config(const std::filesystem::path& folder) {
  const auto path = folder / "generation_config.json";
  GenerationConfig config;
  if (!std::filesystem::exists(path)) return config;
  auto doc = read_json(path);
  if (!doc) return doc.error();
  const auto eos = doc->find("eos_token_id");
  if (eos != doc->end() && !eos->is_null()) {
    const json ids = eos->is_array() ? *eos : json::array({*eos});
    for (const auto& id : ids) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0)
        return make_error(
            fmt::format("{}: eos_token_id must be a token id or a list of them, got {}", path.string(), eos->dump()));
      config.eos_token_ids.push_back(id.get<int64_t>());
    }
  }
  auto bos = read_int(*doc, path, "bos_token_id", false, 0);
  if (!bos) return bos.error();
  config.bos_token_id = *bos;
  auto pad = read_int(*doc, path, "pad_token_id", false, 0);
  if (!pad) return pad.error();
  config.pad_token_id = *pad;
  auto top_k = read_int(*doc, path, "top_k", false, 0);
  if (!top_k) return top_k.error();
  config.top_k = *top_k;
  auto temperature = read_number(*doc, path, "temperature");
  if (!temperature) return temperature.error();
  config.temperature = *temperature;
  auto top_p = read_number(*doc, path, "top_p");
  if (!top_p) return top_p.error();
  config.top_p = *top_p;
  return config;
}

}  // namespace dicebench::engine
