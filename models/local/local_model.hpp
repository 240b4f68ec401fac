// One opened local model: its folder (given or found in the Hugging Face cache), tokenizer,
// settings and description; the engine (libtorch) once prepare() has checked the prompts.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/result.hpp"
#include "models/engine/engine.hpp"
#include "models/local/answer_text.hpp"
#include "models/local/local_settings.hpp"
#include "models/local/model_catalog.hpp"
#include "models/tokenizer/tokenizer.hpp"

namespace dicebench::local {

// The configuration key --model-path sets (a top-level run setting, beside `model`).
inline constexpr std::string_view kModelPathKey = "model_path";

// A span to fill, as the host's request gives it (dicebench_infill).
struct SpanToFill {
  std::string_view before, after;
  uint64_t reference_span_bytes = 0;
};

struct Completion {
  Answer answer;
  nlohmann::ordered_json stats;  // per sample: token counts, the batch's seed, size and time
};

struct GeneratedBatch {
  std::vector<Completion> completions;  // one per prompt, in order
  int64_t forward_passes = 0;
  int64_t new_tokens = 0;
  double seconds = 0;
};

class LocalModel {
 public:
  // Resolves the folder and reads everything but the weights' data: config.json,
  // generation_config.json, the tokenizer, the safetensors headers (checked), the settings.
  static Result<std::unique_ptr<LocalModel>> open(const CatalogEntry& entry, const SettingLookup& lookup,
                                                  bool gpu_visible);

  // Everything that shapes completions: name, folder and its identity hash, settings.
  const nlohmann::ordered_json& description() const { return description_; }
  const std::filesystem::path& folder() const { return folder_; }
  const LocalSettings& settings() const { return settings_; }

  // The chat prompt's token ids; an error when they and the new tokens exceed the context.
  Result<std::vector<int64_t>> prompt_tokens(std::string_view prompt) const;
  // Loads the weights onto the device (once).
  Result<void> load_engine();
  bool engine_loaded() const { return engine_ != nullptr; }
  // One engine batch; `seed` is used unless local.seed fixes one.
  Result<GeneratedBatch> generate(std::span<const std::string> prompts, uint64_t seed);

  // Native infilling (block diffusion only): whether this model fills spans itself.
  bool fills_spans() const;
  // A span's row for the engine: the text before and after it as plain tokens (no chat template)
  // and its budget (local.infill_span_factor); an error when they exceed the context.
  Result<engine::InfillRow> infill_row(const SpanToFill& span) const;
  // One engine batch of spans; a completion's text is its span, cut at the first end-of-turn token.
  Result<GeneratedBatch> fill_spans(std::span<const SpanToFill> spans, uint64_t seed);

 private:
  LocalModel(std::filesystem::path folder, models::Tokenizer tokenizer);
  // The model's decode settings with a batch's seed (unless local.seed fixes one).
  engine::DecodeSettings batch_settings(uint64_t seed) const;

  std::filesystem::path folder_;
  models::Tokenizer tokenizer_;
  engine::ModelConfig config_;
  LocalSettings settings_;
  std::vector<int64_t> end_of_turn_;
  nlohmann::ordered_json description_;
  std::unique_ptr<engine::Engine> engine_;
};

}  // namespace dicebench::local
