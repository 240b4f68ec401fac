// The two decoding loops over a Qwen3Model: autoregressive (one token per pass, causal) and
// block diffusion (SDAR / DICE: masked blocks denoised by read-only passes, then written into
// the KV cache by one more pass). Both run all prompts as one left-padded batch.
#pragma once

#include <vector>

#include "core/base/result.hpp"
#include "models/engine/decode_settings.hpp"
#include "models/engine/generation.hpp"
#include "models/engine/qwen3_model.hpp"

namespace dicebench::engine {

Result<std::vector<Generation>> decode_autoregressive(Qwen3Model& model, const TokenRows& prompts, const DecodeSettings& settings,
                                                      GenerationStatistics& statistics);

Result<std::vector<Generation>> decode_block_diffusion(Qwen3Model& model, const TokenRows& prompts,
                                                       const DecodeSettings& settings, GenerationStatistics& statistics);

}  // namespace dicebench::engine
