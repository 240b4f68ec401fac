// Names, presets and checks of the decoding settings.
#include "models/engine/decode_settings.hpp"

#include <fmt/format.h>

#include "core/base/text.hpp"

namespace dicebench::engine {
namespace {

constexpr std::pair<Remasking, const char*> kRemasking[] = {
    {Remasking::sequential, "sequential"},
    {Remasking::low_confidence_static, "low_confidence_static"},
    {Remasking::low_confidence_dynamic, "low_confidence_dynamic"},
    {Remasking::entropy_bounded, "entropy_bounded"}};

}  // namespace

const char* remasking_name(Remasking remasking) {
  for (const auto& [value, name] : kRemasking)
    if (value == remasking) return name;
  return "?";
}

std::optional<Remasking> parse_remasking(std::string_view name) {
  for (const auto& [value, known] : kRemasking)
    if (name == known) return value;
  return std::nullopt;
}

const char* confidence_source_name(ConfidenceSource source) {
  return source == ConfidenceSource::filtered ? "filtered" : "unfiltered";
}

std::optional<ConfidenceSource> parse_confidence_source(std::string_view name) {
  if (name == "filtered") return ConfidenceSource::filtered;
  if (name == "unfiltered") return ConfidenceSource::unfiltered;
  return std::nullopt;
}

std::vector<std::string> preset_names() { return {"paper", "fast", "greedy"}; }

Result<DecodePreset> decode_preset(std::string_view name, const ModelConfig& model,
                                   const GenerationConfig& generation) {
  DecodePreset preset;
  auto& s = preset.settings;
  if (name == "paper") {
    // DICE's published setting: top_k = 1, low_confidence_static, block 4, 4 steps, 4096 new
    // tokens, fp16, no stop tokens. Every pass commits the leftmost masked position.
    s.mode = DecodeMode::block_diffusion;
    s.max_new_tokens = 4096;
    s.sampling = {1.0, 1, 1.0};
    s.block_length = 4;
    s.denoising_steps = 4;
    s.remasking = Remasking::low_confidence_static;
    s.confidence = ConfidenceSource::filtered;
    preset.dtype = DType::float16;
  } else if (name == "fast") {
    s.mode = DecodeMode::block_diffusion;
    s.max_new_tokens = 4096;
    s.sampling = {1.0, 1, 1.0};
    s.block_length = model.block_size.value_or(4);
    s.denoising_steps = s.block_length;
    s.remasking = Remasking::low_confidence_dynamic;
    s.confidence = ConfidenceSource::unfiltered;
    s.confidence_threshold = 0.9;
    s.stop_tokens = generation.eos_token_ids;
    preset.dtype = DType::bfloat16;
  } else if (name == "greedy") {
    s.mode = DecodeMode::autoregressive;
    s.max_new_tokens = 4096;
    s.sampling = {0.0, 0, 1.0};
    s.stop_tokens = generation.eos_token_ids;
    preset.dtype = DType::bfloat16;
  } else {
    return make_error(fmt::format("unknown decoding preset '{}' (known: paper, fast, greedy) {}", name,
                                  did_you_mean(name, preset_names())));
  }
  return preset;
}

std::optional<int64_t> mask_token_of(const DecodeSettings& settings, const ModelConfig& model) {
  return settings.mask_token_id ? settings.mask_token_id : model.mask_token_id;
}

std::vector<int64_t> transfer_schedule(int64_t block_length, int64_t steps) {
  std::vector<int64_t> counts(static_cast<size_t>(steps), block_length / steps);
  for (int64_t i = 0; i < block_length % steps; ++i) ++counts[static_cast<size_t>(i)];
  return counts;
}

Result<void> validate_decode_settings(const DecodeSettings& s, const ModelConfig& model) {
  if (s.max_new_tokens < 1)
    return make_error(fmt::format("max_new_tokens must be at least 1, got {}", s.max_new_tokens));
  if (s.sampling.temperature < 0)
    return make_error(fmt::format("temperature must be >= 0, got {}", s.sampling.temperature));
  if (s.sampling.top_k < 0) return make_error(fmt::format("top_k must be >= 0, got {}", s.sampling.top_k));
  if (!(s.sampling.top_p > 0 && s.sampling.top_p <= 1))
    return make_error(fmt::format("top_p must be in (0, 1], got {}", s.sampling.top_p));
  for (const auto id : s.stop_tokens)
    if (id < 0 || id >= model.vocab_size)
      return make_error(fmt::format("stop token {} is outside the vocabulary ({} tokens)", id, model.vocab_size));
  if (s.mode == DecodeMode::block_diffusion) {
    const auto mask = mask_token_of(s, model);
    if (!mask)
      return make_error(fmt::format(
          "block diffusion needs a mask token: mask_token_id in config.json ({} has none) or in the settings",
          model.architecture));
    if (*mask < 0 || *mask >= model.vocab_size)
      return make_error(fmt::format("mask token {} is outside the vocabulary ({} tokens)", *mask, model.vocab_size));
    if (s.block_length < 1) return make_error(fmt::format("block_length must be at least 1, got {}", s.block_length));
    if (s.denoising_steps < 1)
      return make_error(fmt::format("denoising_steps must be at least 1, got {}", s.denoising_steps));
    if (s.entropy_bound < 0) return make_error(fmt::format("entropy_bound must be >= 0, got {}", s.entropy_bound));
  }
  return {};
}

}  // namespace dicebench::engine
