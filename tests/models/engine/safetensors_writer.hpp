// Test helper: writes small safetensors files (and broken variants) and Qwen3 model folders.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace dicebench::engine::testing {

struct TensorSpec {
  std::string dtype = "F32";
  std::vector<int64_t> shape;
};

inline size_t element_size(const std::string& dtype) { return dtype == "F32" ? 4 : dtype == "I64" ? 8 : 2; }

// The file's bytes: header length, JSON header, data (all elements 0.5 in F32, zero bytes else).
inline std::string safetensors_bytes(const std::map<std::string, TensorSpec>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [name, spec] : tensors) {
    size_t count = 1;
    for (auto d : spec.shape) count *= static_cast<size_t>(d);
    const size_t begin = data.size();
    if (spec.dtype == "F32") {
      const float half = 0.5f;
      for (size_t i = 0; i < count; ++i) data.append(reinterpret_cast<const char*>(&half), 4);
    } else {
      data.append(count * element_size(spec.dtype), '\0');
    }
    header[name] = {{"dtype", spec.dtype}, {"shape", spec.shape}, {"data_offsets", {begin, data.size()}}};
  }
  const std::string text = header.dump();
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xff);
  return bytes + text + data;
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A one-layer Qwen3 config (hidden 8, 2 heads of 4, 1 KV head, vocab 16) and its tensors.
inline nlohmann::json tiny_config() {
  return {{"architectures", {"Qwen3ForCausalLM"}},
          {"hidden_size", 8},
          {"num_hidden_layers", 1},
          {"num_attention_heads", 2},
          {"num_key_value_heads", 1},
          {"head_dim", 4},
          {"intermediate_size", 12},
          {"vocab_size", 16},
          {"max_position_embeddings", 64},
          {"rope_theta", 10000.0},
          {"rms_norm_eps", 1e-6},
          {"tie_word_embeddings", true},
          {"torch_dtype", "float32"}};
}

inline std::map<std::string, TensorSpec> tiny_tensors() {
  std::map<std::string, TensorSpec> t;
  t["model.embed_tokens.weight"] = {"F32", {16, 8}};
  t["model.norm.weight"] = {"F32", {8}};
  const std::string p = "model.layers.0.";
  t[p + "input_layernorm.weight"] = {"F32", {8}};
  t[p + "post_attention_layernorm.weight"] = {"F32", {8}};
  t[p + "self_attn.q_proj.weight"] = {"F32", {8, 8}};
  t[p + "self_attn.k_proj.weight"] = {"F32", {4, 8}};
  t[p + "self_attn.v_proj.weight"] = {"F32", {4, 8}};
  t[p + "self_attn.o_proj.weight"] = {"F32", {8, 8}};
  t[p + "self_attn.q_norm.weight"] = {"F32", {4}};
  t[p + "self_attn.k_norm.weight"] = {"F32", {4}};
  t[p + "mlp.gate_proj.weight"] = {"F32", {12, 8}};
  t[p + "mlp.up_proj.weight"] = {"F32", {12, 8}};
  t[p + "mlp.down_proj.weight"] = {"F32", {8, 12}};
  return t;
}

// A fresh folder under the system temp dir holding config.json and model.safetensors.
inline std::filesystem::path write_model_folder(const std::string& name, const nlohmann::json& config,
                                                const std::map<std::string, TensorSpec>& tensors) {
  const auto folder = std::filesystem::temp_directory_path() / ("dicebench-engine-test-" + name);
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  write_file(folder / "config.json", config.dump());
  write_file(folder / "model.safetensors", safetensors_bytes(tensors));
  return folder;
}

}  // namespace dicebench::engine::testing
