// What a generation call decodes with: autoregressive or block-diffusion decoding, sampling,
// stop tokens, the remasking strategy, and the named presets (`paper`: DICE's published setting;
// `fast`: low_confidence_dynamic on the unfiltered confidence with stop tokens; `greedy`: AR).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.hpp"
#include "models/engine/model_config.hpp"

namespace dicebench::engine {

enum class DecodeMode { autoregressive, block_diffusion };
// How each denoising pass picks the masked positions it commits (k from the step schedule:
// block_length / denoising_steps, the remainder going to the first steps).
enum class Remasking {
  sequential,              // the leftmost k masked positions
  low_confidence_static,   // the k most confident (ties: the leftmost)
  low_confidence_dynamic,  // every position above confidence_threshold, at least the k most confident
  entropy_bounded,         // the lowest-entropy positions whose summed entropy stays <= entropy_bound, at least one
};
// The distribution a drawn token's confidence (and entropy) is taken under.
enum class ConfidenceSource {
  filtered,    // after temperature, top-k and top-p (DICE's and SDAR's code)
  unfiltered,  // after temperature only
};

struct SamplingSettings {
  double temperature = 1.0;  // 0: greedy (argmax)
  int64_t top_k = 0;         // 0: off
  double top_p = 1.0;        // 1: off
};

struct DecodeSettings {
  DecodeMode mode = DecodeMode::autoregressive;
  int64_t max_new_tokens = 512;
  // AR: a row ends at its first stop token. Block diffusion: a row ends once a finished block holds
  // one. Either way the output stops before it.
  std::vector<int64_t> stop_tokens;
  SamplingSettings sampling;
  uint64_t seed = 0;
  // Block diffusion.
  std::optional<int64_t> mask_token_id;  // default: config.json's (SDAR's own config may lack it)
  int64_t block_length = 4;
  int64_t denoising_steps = 4;
  Remasking remasking = Remasking::low_confidence_static;
  ConfidenceSource confidence = ConfidenceSource::filtered;
  double confidence_threshold = 0.9;
  double entropy_bound = 0.5;
};

struct DecodePreset {
  DecodeSettings settings;
  DType dtype;  // the compute dtype the preset was published with (on CUDA)
};

const char* remasking_name(Remasking remasking);
std::optional<Remasking> parse_remasking(std::string_view name);
const char* confidence_source_name(ConfidenceSource source);
std::optional<ConfidenceSource> parse_confidence_source(std::string_view name);
std::vector<std::string> preset_names();

// `paper`, `fast` (both block diffusion; stop tokens of `fast` from generation_config.json's
// eos_token_id) and `greedy` (AR, stop tokens likewise).
Result<DecodePreset> decode_preset(std::string_view name, const ModelConfig& model, const GenerationConfig& generation);

// The steps' commit counts: block_length / steps each, the remainder spread over the first steps.
std::vector<int64_t> transfer_schedule(int64_t block_length, int64_t steps);

// Checks the settings against the model (block diffusion needs a mask token, ids within the vocabulary ...).
Result<void> validate_decode_settings(const DecodeSettings& settings, const ModelConfig& model);

// The mask token of block diffusion: the settings', else config.json's.
std::optional<int64_t> mask_token_of(const DecodeSettings& settings, const ModelConfig& model);

}  // namespace dicebench::engine
