// The decoders over a Qwen3Model: autoregressive (one token per pass, causal), block diffusion
// (SDAR / DICE: masked blocks denoised by read-only passes, then written into the KV cache by one
// more pass) and block-diffusion infilling (the span between given tokens before and after it).
// All run their rows as one left-padded batch; the engine checks their inputs first.
#pragma once

#include <vector>

#include "core/base/result.hpp"
#include "models/engine/decode_settings.hpp"
#include "models/engine/generation.hpp"
#include "models/engine/qwen3_model.hpp"

namespace dicebench::engine {

Result<std::vector<Generation>> decode_autoregressive(Qwen3Model& model, const TokenRows& prompts,
                                                      const DecodeSettings& settings, GenerationStatistics& statistics);

Result<std::vector<Generation>> decode_block_diffusion(Qwen3Model& model, const TokenRows& prompts,
                                                       const DecodeSettings& settings,
                                                       GenerationStatistics& statistics);

Result<std::vector<Generation>> decode_infill(Qwen3Model& model, const std::vector<InfillRow>& rows,
                                              const DecodeSettings& settings, GenerationStatistics& statistics);

}  // namespace dicebench::engine
