// A local model's generation settings: the engine preset the model name defaults to (or
// `local.preset`), then each `local.<key>` setting from the run's TOML file or --set over it, and
// the JSON of what was resolved (part of the model's description, which the run records).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/result.hpp"
#include "models/engine/decode_settings.hpp"
#include "models/engine/model_config.hpp"

namespace dicebench::local {

// The configuration section these settings live in: local.preset, local.temperature, ...
inline constexpr std::string_view kSection = "local";

struct LocalSettings {
  std::string preset;
  engine::DecodeSettings decode;
  // local.seed: every batch decodes with it. Otherwise each batch takes the seed the host derived
  // for its first request (from the run seed), so a sampled completion depends on its batch.
  std::optional<uint64_t> fixed_seed;
  std::string device;  // "cpu", "cuda", "cuda:N"
  engine::DType dtype = engine::DType::float32;
  bool thinking = false;  // Qwen3's chat template: let the model think first
  size_t batch = 16;      // prompts per engine call (the host's --batch-size overrides it)
  // Native infilling: a span's budget in tokens is the suite's reference span's length in bytes, at
  // the tokens per byte of the item's own text before and after it, times this.
  double infill_span_factor = 1.5;
};

// Looks a dotted key up in the run's configuration.
using SettingLookup = std::function<std::optional<std::string>(const std::string& key)>;

struct SettingsContext {
  std::string_view default_preset;  // the model name's
  const engine::ModelConfig& config;
  const engine::GenerationConfig& generation;
  std::optional<int64_t> tokenizer_mask_token;  // <|MASK|>, for configs that name no mask_token_id
  bool gpu_visible = false;                     // the default device: cuda where a GPU is visible
};

// Errors name the setting and the value it got.
Result<LocalSettings> read_settings(const SettingLookup& lookup, const SettingsContext& context);

// Everything that shapes completions, for the model's description.
nlohmann::ordered_json settings_json(const LocalSettings& settings);

}  // namespace dicebench::local
